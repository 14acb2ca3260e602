package cuda

import "fmt"

// Result is a CUresult status code returned by every driver API call.
// Success (0) is never returned as an error; see check.
type Result int32

// The CUresult codes this package names. Values are from cuda.h
// (CUDA 12) and are stable across driver versions.
const (
	Success                   Result = 0
	ErrorInvalidValue         Result = 1
	ErrorOutOfMemory          Result = 2
	ErrorNotInitialized       Result = 3
	ErrorDeinitialized        Result = 4
	ErrorStubLibrary          Result = 34
	ErrorInsufficientDriver   Result = 35
	ErrorNoDevice             Result = 100
	ErrorInvalidDevice        Result = 101
	ErrorDeviceNotLicensed    Result = 102
	ErrorInvalidImage         Result = 200
	ErrorInvalidContext       Result = 201
	ErrorNoBinaryForGPU       Result = 209
	ErrorInvalidPTX           Result = 218
	ErrorUnsupportedPTX       Result = 222
	ErrorInvalidHandle        Result = 400
	ErrorNotFound             Result = 500
	ErrorNotReady             Result = 600
	ErrorIllegalAddress       Result = 700
	ErrorLaunchOutOfResources Result = 701
	ErrorLaunchTimeout        Result = 702
	ErrorLaunchFailed         Result = 719
	ErrorNotSupported         Result = 801
	ErrorSystemNotReady       Result = 802
	ErrorSystemDriverMismatch Result = 803
	ErrorCompatNotSupported   Result = 804
	ErrorUnknown              Result = 999
)

var resultNames = map[Result]string{
	Success:                   "CUDA_SUCCESS",
	ErrorInvalidValue:         "CUDA_ERROR_INVALID_VALUE",
	ErrorOutOfMemory:          "CUDA_ERROR_OUT_OF_MEMORY",
	ErrorNotInitialized:       "CUDA_ERROR_NOT_INITIALIZED",
	ErrorDeinitialized:        "CUDA_ERROR_DEINITIALIZED",
	ErrorStubLibrary:          "CUDA_ERROR_STUB_LIBRARY",
	ErrorInsufficientDriver:   "CUDA_ERROR_INSUFFICIENT_DRIVER",
	ErrorNoDevice:             "CUDA_ERROR_NO_DEVICE",
	ErrorInvalidDevice:        "CUDA_ERROR_INVALID_DEVICE",
	ErrorDeviceNotLicensed:    "CUDA_ERROR_DEVICE_NOT_LICENSED",
	ErrorInvalidImage:         "CUDA_ERROR_INVALID_IMAGE",
	ErrorInvalidContext:       "CUDA_ERROR_INVALID_CONTEXT",
	ErrorNoBinaryForGPU:       "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrorInvalidPTX:           "CUDA_ERROR_INVALID_PTX",
	ErrorUnsupportedPTX:       "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrorInvalidHandle:        "CUDA_ERROR_INVALID_HANDLE",
	ErrorNotFound:             "CUDA_ERROR_NOT_FOUND",
	ErrorNotReady:             "CUDA_ERROR_NOT_READY",
	ErrorIllegalAddress:       "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrorLaunchOutOfResources: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	ErrorLaunchTimeout:        "CUDA_ERROR_LAUNCH_TIMEOUT",
	ErrorLaunchFailed:         "CUDA_ERROR_LAUNCH_FAILED",
	ErrorNotSupported:         "CUDA_ERROR_NOT_SUPPORTED",
	ErrorSystemNotReady:       "CUDA_ERROR_SYSTEM_NOT_READY",
	ErrorSystemDriverMismatch: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	ErrorCompatNotSupported:   "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	ErrorUnknown:              "CUDA_ERROR_UNKNOWN",
}

// Error names the code as cuda.h does, so messages can be searched for.
func (r Result) Error() string {
	if name, ok := resultNames[r]; ok {
		return fmt.Sprintf("%s (%d)", name, int32(r))
	}
	return fmt.Sprintf("CUresult %d", int32(r))
}

// check turns a status into an error naming the call that failed.
func check(call string, r Result) error {
	if r == Success {
		return nil
	}
	return fmt.Errorf("%s: %w", call, r)
}

// NVRTCResult is an nvrtcResult status code (nvrtc.h), returned wrapped by
// the NVRTC calls; a failed compile is a *CompileError wrapping
// NVRTC_ERROR_COMPILATION (6) with the compiler's log.
type NVRTCResult int32

const nvrtcSuccess NVRTCResult = 0

var nvrtcNames = [...]string{
	"NVRTC_SUCCESS", "NVRTC_ERROR_OUT_OF_MEMORY", "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	"NVRTC_ERROR_INVALID_INPUT", "NVRTC_ERROR_INVALID_PROGRAM", "NVRTC_ERROR_INVALID_OPTION",
	"NVRTC_ERROR_COMPILATION", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", "NVRTC_ERROR_INTERNAL_ERROR",
}

func (r NVRTCResult) Error() string {
	if r >= 0 && int(r) < len(nvrtcNames) {
		return fmt.Sprintf("%s (%d)", nvrtcNames[r], int32(r))
	}
	return fmt.Sprintf("NVRTCResult %d", int32(r))
}

func checkNVRTC(call string, r NVRTCResult) error {
	if r == nvrtcSuccess {
		return nil
	}
	return fmt.Errorf("%s: %w", call, r)
}
