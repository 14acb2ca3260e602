package cuda

import "fmt"

// Result is a CUresult status code returned by every driver API call.
// Success (0) is never returned as an error; see check.
type Result int32

// The CUresult codes that the probe path can meet. Values are from cuda.h
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
	ErrorInvalidContext       Result = 201
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
	ErrorInvalidContext:       "CUDA_ERROR_INVALID_CONTEXT",
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
