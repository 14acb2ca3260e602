package hip

import "fmt"

// hipDevice is the C hipDevice_t (an int).
type hipDevice int32

// runtimeAPI holds the raw HIP entry points, named exactly as in
// hip_runtime_api.h. Pointer arguments are out-parameters; sizes are size_t
// (uint64 on the 64-bit platforms ROCm exists for).
type runtimeAPI struct {
	hipInit              func(flags uint32) Result
	hipRuntimeGetVersion func(version *int32) Result
	hipGetDeviceCount    func(count *int32) Result
	hipDeviceGet         func(dev *hipDevice, ordinal int32) Result
	hipDeviceGetName     func(name *byte, length int32, dev hipDevice) Result
	hipDeviceTotalMem    func(bytes *uint64, dev hipDevice) Result

	// Optional: nil when absent (checked with Dlsym first, because
	// RegisterLibFunc panics on a missing symbol).
	hipGetDevice  func(ordinal *int32) Result
	hipSetDevice  func(ordinal int32) Result
	hipMemGetInfo func(free, total *uint64) Result
}

// symbol pairs a C name with the field that receives it.
type symbol struct {
	name string
	fptr any
}

func (a *runtimeAPI) required() []symbol {
	return []symbol{
		{"hipInit", &a.hipInit},
		{"hipRuntimeGetVersion", &a.hipRuntimeGetVersion},
		{"hipGetDeviceCount", &a.hipGetDeviceCount},
		{"hipDeviceGet", &a.hipDeviceGet},
		{"hipDeviceGetName", &a.hipDeviceGetName},
		{"hipDeviceTotalMem", &a.hipDeviceTotalMem},
	}
}

func (a *runtimeAPI) optional() []symbol {
	return []symbol{
		{"hipGetDevice", &a.hipGetDevice},
		{"hipSetDevice", &a.hipSetDevice},
		{"hipMemGetInfo", &a.hipMemGetInfo},
	}
}

// bind resolves every symbol in handle. A missing required symbol is an
// error; a missing optional one leaves its field nil.
func (a *runtimeAPI) bind(handle uintptr) error {
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

func (a *runtimeAPI) hasMemInfo() bool {
	return a.hipGetDevice != nil && a.hipSetDevice != nil && a.hipMemGetInfo != nil
}
