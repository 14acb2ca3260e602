package cuda

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The C handle types of cuda.h and nvrtc.h. CUdevice is an int; the others
// are opaque pointers, and CUdeviceptr is an unsigned 64-bit address (on
// the 64-bit platforms the driver exists for).
type (
	cuDevice     int32
	cuContext    uintptr
	cuStream     uintptr
	cuEvent      uintptr
	cuModule     uintptr
	cuFunction   uintptr
	nvrtcProgram uintptr
)

// CUdevice_attribute values used here (cuda.h; stable since CUDA 6).
const (
	attrMaxThreadsPerBlock           = 1
	attrMaxSharedMemoryPerBlock      = 8
	attrWarpSize                     = 10
	attrMultiprocessorCount          = 16
	attrComputeCapabilityMajor       = 75
	attrComputeCapabilityMinor       = 76
	attrMaxSharedMemoryPerBlockOptin = 97
)

// driverAPI holds the raw driver entry points, named exactly as in cuda.h.
// Pointer arguments are out-parameters unless named src; sizes are size_t
// (uint64 here). Host pointers point into Go memory or into pinned memory
// the driver allocated.
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

	// Raw addresses of cuCtxPushCurrent_v2, cuCtxPopCurrent_v2 and
	// cuLaunchKernel (0 when absent), called through callN on the hot path.
	rawPush, rawPop, rawLaunch uintptr

	// The compute set (optional as a group; see hasComputeAPI).
	cuCtxSetCurrent      func(ctx cuContext) Result
	cuCtxSynchronize     func() Result
	cuMemAlloc_v2        func(dptr *DevicePtr, bytes uint64) Result
	cuMemFree_v2         func(dptr DevicePtr) Result
	cuMemAllocHost_v2    func(pp *unsafe.Pointer, bytes uint64) Result
	cuMemFreeHost        func(p unsafe.Pointer) Result
	cuMemcpyHtoDAsync_v2 func(dst DevicePtr, src unsafe.Pointer, bytes uint64, s cuStream) Result
	cuMemcpyDtoHAsync_v2 func(dst unsafe.Pointer, src DevicePtr, bytes uint64, s cuStream) Result
	cuMemcpyDtoDAsync_v2 func(dst, src DevicePtr, bytes uint64, s cuStream) Result
	cuMemsetD32Async     func(dst DevicePtr, value uint32, n uint64, s cuStream) Result
	cuStreamCreate       func(s *cuStream, flags uint32) Result
	cuStreamDestroy_v2   func(s cuStream) Result
	cuStreamSynchronize  func(s cuStream) Result
	cuStreamWaitEvent    func(s cuStream, e cuEvent, flags uint32) Result
	cuEventCreate        func(e *cuEvent, flags uint32) Result
	cuEventDestroy_v2    func(e cuEvent) Result
	cuEventRecord        func(e cuEvent, s cuStream) Result
	cuEventSynchronize   func(e cuEvent) Result
	cuEventElapsedTime   func(ms *float32, start, end cuEvent) Result
	cuModuleLoadData     func(m *cuModule, image *byte) Result
	cuModuleUnload       func(m cuModule) Result
	cuModuleGetFunction  func(f *cuFunction, m cuModule, name string) Result
	cuLaunchKernel       func(f cuFunction, gx, gy, gz, bx, by, bz, sharedBytes uint32, s cuStream, params *uintptr, extra *uintptr) Result

	cuOccupancyMaxActiveBlocksPerMultiprocessor func(blocks *int32, f cuFunction, blockSize int32, dynSharedBytes uint64) Result

	// Optional: portable pinned memory and peer copies (issue 16's
	// multi-device copies; nil where the driver lacks them, and then
	// copies go through the host).
	cuMemHostAlloc        func(pp *unsafe.Pointer, bytes uint64, flags uint32) Result
	cuDeviceCanAccessPeer func(can *int32, dev, peer cuDevice) Result
	cuCtxEnablePeerAccess func(peer cuContext, flags uint32) Result
	cuMemcpyPeerAsync     func(dst DevicePtr, dstCtx cuContext, src DevicePtr, srcCtx cuContext, bytes uint64, s cuStream) Result
}

// CUresult values the peer entry points return when there is nothing to do.
const errorPeerAccessAlreadyEnabled Result = 704

// nvrtcAPI holds NVRTC's entry points, named as in nvrtc.h. Arrays of C
// strings are **byte to NUL-terminated copies.
type nvrtcAPI struct {
	nvrtcVersion           func(major, minor *int32) NVRTCResult
	nvrtcGetErrorString    func(r NVRTCResult) string
	nvrtcCreateProgram     func(p *nvrtcProgram, src, name string, numHeaders int32, headers, includeNames **byte) NVRTCResult
	nvrtcDestroyProgram    func(p *nvrtcProgram) NVRTCResult
	nvrtcCompileProgram    func(p nvrtcProgram, numOptions int32, options **byte) NVRTCResult
	nvrtcGetPTXSize        func(p nvrtcProgram, size *uint64) NVRTCResult
	nvrtcGetPTX            func(p nvrtcProgram, ptx *byte) NVRTCResult
	nvrtcGetProgramLogSize func(p nvrtcProgram, size *uint64) NVRTCResult
	nvrtcGetProgramLog     func(p nvrtcProgram, log *byte) NVRTCResult

	// Optional: CUBIN output (11.1+) and the architecture list (11.2+).
	nvrtcGetCUBINSize         func(p nvrtcProgram, size *uint64) NVRTCResult
	nvrtcGetCUBIN             func(p nvrtcProgram, cubin *byte) NVRTCResult
	nvrtcGetNumSupportedArchs func(n *int32) NVRTCResult
	nvrtcGetSupportedArchs    func(archs *int32) NVRTCResult
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
	return append([]symbol{
		{"cuDevicePrimaryCtxRetain", &a.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &a.cuDevicePrimaryCtxRelease_v2},
		{"cuCtxPushCurrent_v2", &a.cuCtxPushCurrent_v2},
		{"cuCtxPopCurrent_v2", &a.cuCtxPopCurrent_v2},
		{"cuMemGetInfo_v2", &a.cuMemGetInfo_v2},
		{"cuMemHostAlloc", &a.cuMemHostAlloc},
		{"cuDeviceCanAccessPeer", &a.cuDeviceCanAccessPeer},
		{"cuCtxEnablePeerAccess", &a.cuCtxEnablePeerAccess},
		{"cuMemcpyPeerAsync", &a.cuMemcpyPeerAsync},
	}, a.compute()...)
}

func (a *driverAPI) compute() []symbol {
	return []symbol{
		{"cuCtxSetCurrent", &a.cuCtxSetCurrent},
		{"cuCtxSynchronize", &a.cuCtxSynchronize},
		{"cuMemAlloc_v2", &a.cuMemAlloc_v2},
		{"cuMemFree_v2", &a.cuMemFree_v2},
		{"cuMemAllocHost_v2", &a.cuMemAllocHost_v2},
		{"cuMemFreeHost", &a.cuMemFreeHost},
		{"cuMemcpyHtoDAsync_v2", &a.cuMemcpyHtoDAsync_v2},
		{"cuMemcpyDtoHAsync_v2", &a.cuMemcpyDtoHAsync_v2},
		{"cuMemcpyDtoDAsync_v2", &a.cuMemcpyDtoDAsync_v2},
		{"cuMemsetD32Async", &a.cuMemsetD32Async},
		{"cuStreamCreate", &a.cuStreamCreate},
		{"cuStreamDestroy_v2", &a.cuStreamDestroy_v2},
		{"cuStreamSynchronize", &a.cuStreamSynchronize},
		{"cuStreamWaitEvent", &a.cuStreamWaitEvent},
		{"cuEventCreate", &a.cuEventCreate},
		{"cuEventDestroy_v2", &a.cuEventDestroy_v2},
		{"cuEventRecord", &a.cuEventRecord},
		{"cuEventSynchronize", &a.cuEventSynchronize},
		{"cuEventElapsedTime", &a.cuEventElapsedTime},
		{"cuModuleLoadData", &a.cuModuleLoadData},
		{"cuModuleUnload", &a.cuModuleUnload},
		{"cuModuleGetFunction", &a.cuModuleGetFunction},
		{"cuLaunchKernel", &a.cuLaunchKernel},
		{"cuOccupancyMaxActiveBlocksPerMultiprocessor", &a.cuOccupancyMaxActiveBlocksPerMultiprocessor},
	}
}

func (a *nvrtcAPI) required() []symbol {
	return []symbol{
		{"nvrtcVersion", &a.nvrtcVersion},
		{"nvrtcGetErrorString", &a.nvrtcGetErrorString},
		{"nvrtcCreateProgram", &a.nvrtcCreateProgram},
		{"nvrtcDestroyProgram", &a.nvrtcDestroyProgram},
		{"nvrtcCompileProgram", &a.nvrtcCompileProgram},
		{"nvrtcGetPTXSize", &a.nvrtcGetPTXSize},
		{"nvrtcGetPTX", &a.nvrtcGetPTX},
		{"nvrtcGetProgramLogSize", &a.nvrtcGetProgramLogSize},
		{"nvrtcGetProgramLog", &a.nvrtcGetProgramLog},
	}
}

func (a *nvrtcAPI) optional() []symbol {
	return []symbol{
		{"nvrtcGetCUBINSize", &a.nvrtcGetCUBINSize},
		{"nvrtcGetCUBIN", &a.nvrtcGetCUBIN},
		{"nvrtcGetNumSupportedArchs", &a.nvrtcGetNumSupportedArchs},
		{"nvrtcGetSupportedArchs", &a.nvrtcGetSupportedArchs},
	}
}

// bindSymbols resolves every symbol in handle. A missing required symbol is
// an error (an old or foreign library); a missing optional one leaves its
// field nil.
func bindSymbols(handle uintptr, required, optional []symbol) error {
	for _, s := range required {
		sym, err := lookup(handle, s.name)
		if err != nil {
			return fmt.Errorf("missing symbol %s: %w", s.name, err)
		}
		register(s.fptr, sym)
	}
	for _, s := range optional {
		if sym, err := lookup(handle, s.name); err == nil {
			register(s.fptr, sym)
		}
	}
	return nil
}

func (a *driverAPI) bind(handle uintptr) error {
	if err := bindSymbols(handle, a.required(), a.optional()); err != nil {
		return err
	}
	// The calls every device operation makes, also as raw addresses for
	// callN: purego's reflective wrappers cost ~1 µs and 15 allocations an
	// operation (BenchmarkFakeLaunchOp), next to the driver's own few µs.
	a.rawPush, _ = lookup(handle, "cuCtxPushCurrent_v2")
	a.rawPop, _ = lookup(handle, "cuCtxPopCurrent_v2")
	a.rawLaunch, _ = lookup(handle, "cuLaunchKernel")
	return nil
}

func (a *nvrtcAPI) bind(handle uintptr) error {
	return bindSymbols(handle, a.required(), a.optional())
}

// hasContextAPI reports whether the optional context entry points are bound.
func (a *driverAPI) hasContextAPI() bool {
	return a.cuDevicePrimaryCtxRetain != nil && a.cuDevicePrimaryCtxRelease_v2 != nil &&
		a.cuCtxPushCurrent_v2 != nil && a.cuCtxPopCurrent_v2 != nil && a.cuMemGetInfo_v2 != nil
}

// hasComputeAPI reports whether everything Context needs is bound (every
// driver since CUDA 11 has all of it; a partial set means a foreign or
// stub library).
func (a *driverAPI) hasComputeAPI() bool {
	return a.hasContextAPI() && a.missingCompute() == ""
}

// missingCompute names the first unbound compute entry point, or "".
func (a *driverAPI) missingCompute() string {
	for _, s := range a.compute() {
		if reflectNil(s.fptr) {
			return s.name
		}
	}
	return ""
}

// reflectNil reports whether the function that fptr points to is unbound.
func reflectNil(fptr any) bool { return reflect.ValueOf(fptr).Elem().IsNil() }
