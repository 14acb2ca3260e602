package cuda

import "fmt"

// cuDevice is the C CUdevice (an int), cuContext the opaque CUcontext.
type (
	cuDevice  int32
	cuContext uintptr
)

// CUdevice_attribute values used here (cuda.h).
const (
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
)

// driverAPI holds the raw driver entry points, named exactly as in cuda.h.
// Pointer arguments are out-parameters; sizes are size_t (uint64 on the
// 64-bit platforms the driver exists for).
type driverAPI struct {
	cuInit               func(flags uint32) Result
	cuDriverGetVersion   func(version *int32) Result
	cuDeviceGetCount     func(count *int32) Result
	cuDeviceGet          func(dev *cuDevice, ordinal int32) Result
	cuDeviceGetName      func(name *byte, length int32, dev cuDevice) Result
	cuDeviceTotalMem_v2  func(bytes *uint64, dev cuDevice) Result
	cuDeviceGetAttribute func(value *int32, attr int32, dev cuDevice) Result

	// Optional: nil when the driver lacks them (checked with Dlsym first,
	// because RegisterLibFunc panics on a missing symbol).
	cuDevicePrimaryCtxRetain     func(ctx *cuContext, dev cuDevice) Result
	cuDevicePrimaryCtxRelease_v2 func(dev cuDevice) Result
	cuCtxPushCurrent_v2          func(ctx cuContext) Result
	cuCtxPopCurrent_v2           func(ctx *cuContext) Result
	cuMemGetInfo_v2              func(free, total *uint64) Result
}

// symbol pairs a C name with the field that receives it.
type symbol struct {
	name string
	fptr any
}

func (a *driverAPI) required() []symbol {
	return []symbol{
		{"cuInit", &a.cuInit},
		{"cuDriverGetVersion", &a.cuDriverGetVersion},
		{"cuDeviceGetCount", &a.cuDeviceGetCount},
		{"cuDeviceGet", &a.cuDeviceGet},
		{"cuDeviceGetName", &a.cuDeviceGetName},
		{"cuDeviceTotalMem_v2", &a.cuDeviceTotalMem_v2},
		{"cuDeviceGetAttribute", &a.cuDeviceGetAttribute},
	}
}

func (a *driverAPI) optional() []symbol {
	return []symbol{
		{"cuDevicePrimaryCtxRetain", &a.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &a.cuDevicePrimaryCtxRelease_v2},
		{"cuCtxPushCurrent_v2", &a.cuCtxPushCurrent_v2},
		{"cuCtxPopCurrent_v2", &a.cuCtxPopCurrent_v2},
		{"cuMemGetInfo_v2", &a.cuMemGetInfo_v2},
	}
}

// bind resolves every symbol in handle. A missing required symbol is an
// error (an old or foreign libcuda); a missing optional one leaves its
// field nil.
func (a *driverAPI) bind(handle uintptr) error {
	for _, s := range a.required() {
		sym, err := lookup(handle, s.name)
		if err != nil {
			return fmt.Errorf("missing symbol %s: %w", s.name, err)
		}
		register(s.fptr, sym)
	}
	for _, s := range a.optional() {
		if sym, err := lookup(handle, s.name); err == nil {
			register(s.fptr, sym)
		}
	}
	return nil
}

// hasContextAPI reports whether the optional context entry points are bound.
func (a *driverAPI) hasContextAPI() bool {
	return a.cuDevicePrimaryCtxRetain != nil && a.cuDevicePrimaryCtxRelease_v2 != nil &&
		a.cuCtxPushCurrent_v2 != nil && a.cuCtxPopCurrent_v2 != nil && a.cuMemGetInfo_v2 != nil
}
