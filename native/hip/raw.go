package hip

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The C handle types of hip_runtime_api.h and hiprtc.h. hipDevice_t is an
// int; the others are opaque pointers. hipDeviceptr_t is a void* in C: it
// is passed as an integer here, which has the same calling convention.
type (
	hipDevice     int32
	hipStream     uintptr
	hipEvent      uintptr
	hipModule     uintptr
	hipFunction   uintptr
	hiprtcProgram uintptr
)

// hipDeviceAttribute_t values used here, as numbered in ROCm 5.x's
// hip_runtime_api.h (hipDeviceAttributeCudaCompatibleBegin = 0, then the
// list in header order). ROCm 6 keeps these positions with "Unused"
// placeholders, but the package only trusts them where a cross-check
// exists (see Device.WarpSize).
const (
	attrComputeCapabilityMajor  = 23
	attrMaxThreadsPerBlock      = 56
	attrComputeCapabilityMinor  = 61
	attrMultiprocessorCount     = 63
	attrMaxSharedMemoryPerBlock = 74
	attrWarpSize                = 87
)

// runtimeAPI holds the raw HIP entry points, named exactly as in
// hip_runtime_api.h. Pointer arguments are out-parameters unless named src;
// sizes are size_t (uint64 on the 64-bit platforms ROCm exists for).
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
	// prop points to a hipDeviceProp_t, whose layout differs between ROCm 5
	// and 6; deviceProps reads only what it can find in both.
	hipGetDeviceProperties func(prop unsafe.Pointer, ordinal int32) Result
	hipDeviceGetAttribute  func(value *int32, attr int32, ordinal int32) Result

	// The compute set (optional as a group; see missingCompute).
	hipDeviceSynchronize      func() Result
	hipMalloc                 func(p *DevicePtr, bytes uint64) Result
	hipFree                   func(p DevicePtr) Result
	hipHostMalloc             func(p *unsafe.Pointer, bytes uint64, flags uint32) Result
	hipHostFree               func(p unsafe.Pointer) Result
	hipMemcpyHtoDAsync        func(dst DevicePtr, src unsafe.Pointer, bytes uint64, s hipStream) Result
	hipMemcpyDtoHAsync        func(dst unsafe.Pointer, src DevicePtr, bytes uint64, s hipStream) Result
	hipMemcpyDtoDAsync        func(dst, src DevicePtr, bytes uint64, s hipStream) Result
	hipMemsetD32Async         func(dst DevicePtr, value int32, n uint64, s hipStream) Result
	hipStreamCreateWithFlags  func(s *hipStream, flags uint32) Result
	hipStreamDestroy          func(s hipStream) Result
	hipStreamSynchronize      func(s hipStream) Result
	hipStreamWaitEvent        func(s hipStream, e hipEvent, flags uint32) Result
	hipEventCreateWithFlags   func(e *hipEvent, flags uint32) Result
	hipEventDestroy           func(e hipEvent) Result
	hipEventRecord            func(e hipEvent, s hipStream) Result
	hipEventSynchronize       func(e hipEvent) Result
	hipEventElapsedTime       func(ms *float32, start, end hipEvent) Result
	hipModuleLoadData         func(m *hipModule, image *byte) Result
	hipModuleUnload           func(m hipModule) Result
	hipModuleGetFunction      func(f *hipFunction, m hipModule, name string) Result
	hipModuleLaunchKernel     func(f hipFunction, gx, gy, gz, bx, by, bz, sharedBytes uint32, s hipStream, params *uintptr, extra *uintptr) Result
	hipDeviceCanAccessPeer    func(can *int32, ordinal, peer int32) Result
	hipDeviceEnablePeerAccess func(peer int32, flags uint32) Result
	hipMemcpyPeerAsync        func(dst DevicePtr, dstDev int32, src DevicePtr, srcDev int32, bytes uint64, s hipStream) Result

	hipModuleOccupancyMaxActiveBlocksPerMultiprocessor func(blocks *int32, f hipFunction, blockSize int32, dynSharedBytes uint64) Result
}

// hiprtcAPI holds hipRTC's entry points, named as in hiprtc.h (the same
// shape as NVRTC's). Arrays of C strings are **byte to NUL-terminated
// copies. In ROCm 5 they are exported by libamdhip64 itself; ROCm 6 moved
// them to libhiprtc.
type hiprtcAPI struct {
	hiprtcVersion           func(major, minor *int32) HIPRTCResult
	hiprtcGetErrorString    func(r HIPRTCResult) string
	hiprtcCreateProgram     func(p *hiprtcProgram, src, name string, numHeaders int32, headers, includeNames **byte) HIPRTCResult
	hiprtcDestroyProgram    func(p *hiprtcProgram) HIPRTCResult
	hiprtcCompileProgram    func(p hiprtcProgram, numOptions int32, options **byte) HIPRTCResult
	hiprtcGetCodeSize       func(p hiprtcProgram, size *uint64) HIPRTCResult
	hiprtcGetCode           func(p hiprtcProgram, code *byte) HIPRTCResult
	hiprtcGetProgramLogSize func(p hiprtcProgram, size *uint64) HIPRTCResult
	hiprtcGetProgramLog     func(p hiprtcProgram, log *byte) HIPRTCResult

	// Optional: present when hipRTC lives in libamdhip64 (ROCm 5), whose
	// hiprtcVersion does not name the release.
	hipRuntimeGetVersion func(version *int32) Result
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
	return append([]symbol{
		{"hipGetDevice", &a.hipGetDevice},
		{"hipSetDevice", &a.hipSetDevice},
		{"hipMemGetInfo", &a.hipMemGetInfo},
		{"hipGetDeviceProperties", &a.hipGetDeviceProperties},
		{"hipDeviceGetAttribute", &a.hipDeviceGetAttribute},
	}, a.compute()...)
}

func (a *runtimeAPI) compute() []symbol {
	return []symbol{
		{"hipDeviceSynchronize", &a.hipDeviceSynchronize},
		{"hipMalloc", &a.hipMalloc},
		{"hipFree", &a.hipFree},
		{"hipHostMalloc", &a.hipHostMalloc},
		{"hipHostFree", &a.hipHostFree},
		{"hipMemcpyHtoDAsync", &a.hipMemcpyHtoDAsync},
		{"hipMemcpyDtoHAsync", &a.hipMemcpyDtoHAsync},
		{"hipMemcpyDtoDAsync", &a.hipMemcpyDtoDAsync},
		{"hipMemsetD32Async", &a.hipMemsetD32Async},
		{"hipStreamCreateWithFlags", &a.hipStreamCreateWithFlags},
		{"hipStreamDestroy", &a.hipStreamDestroy},
		{"hipStreamSynchronize", &a.hipStreamSynchronize},
		{"hipStreamWaitEvent", &a.hipStreamWaitEvent},
		{"hipEventCreateWithFlags", &a.hipEventCreateWithFlags},
		{"hipEventDestroy", &a.hipEventDestroy},
		{"hipEventRecord", &a.hipEventRecord},
		{"hipEventSynchronize", &a.hipEventSynchronize},
		{"hipEventElapsedTime", &a.hipEventElapsedTime},
		{"hipModuleLoadData", &a.hipModuleLoadData},
		{"hipModuleUnload", &a.hipModuleUnload},
		{"hipModuleGetFunction", &a.hipModuleGetFunction},
		{"hipModuleLaunchKernel", &a.hipModuleLaunchKernel},
		{"hipDeviceCanAccessPeer", &a.hipDeviceCanAccessPeer},
		{"hipDeviceEnablePeerAccess", &a.hipDeviceEnablePeerAccess},
		{"hipMemcpyPeerAsync", &a.hipMemcpyPeerAsync},
		{"hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", &a.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor},
	}
}

func (a *hiprtcAPI) required() []symbol {
	return []symbol{
		{"hiprtcVersion", &a.hiprtcVersion},
		{"hiprtcGetErrorString", &a.hiprtcGetErrorString},
		{"hiprtcCreateProgram", &a.hiprtcCreateProgram},
		{"hiprtcDestroyProgram", &a.hiprtcDestroyProgram},
		{"hiprtcCompileProgram", &a.hiprtcCompileProgram},
		{"hiprtcGetCodeSize", &a.hiprtcGetCodeSize},
		{"hiprtcGetCode", &a.hiprtcGetCode},
		{"hiprtcGetProgramLogSize", &a.hiprtcGetProgramLogSize},
		{"hiprtcGetProgramLog", &a.hiprtcGetProgramLog},
	}
}

// bindSymbols resolves every symbol in handle. A missing required symbol is
// an error; a missing optional one leaves its field nil.
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

func (a *runtimeAPI) bind(handle uintptr) error {
	return bindSymbols(handle, a.required(), a.optional())
}

func (a *hiprtcAPI) bind(handle uintptr) error {
	return bindSymbols(handle, a.required(), []symbol{{"hipRuntimeGetVersion", &a.hipRuntimeGetVersion}})
}

func (a *runtimeAPI) hasMemInfo() bool {
	return a.hipGetDevice != nil && a.hipSetDevice != nil && a.hipMemGetInfo != nil
}

// missingCompute names the first unbound entry point Open needs, or "".
func (a *runtimeAPI) missingCompute() string {
	if !a.hasMemInfo() {
		return "hipGetDevice/hipSetDevice/hipMemGetInfo"
	}
	for _, s := range a.compute() {
		if reflect.ValueOf(s.fptr).Elem().IsNil() {
			return s.name
		}
	}
	return ""
}
