package hip

import "fmt"

// Result is a hipError_t status code. Success (0) is never returned as an
// error; see check.
type Result int32

// The hipError_t codes this package can meet (hip_runtime_api.h; the
// values match CUDA's and are the same in ROCm 5 and 6).
const (
	Success                 Result = 0
	ErrorInvalidValue       Result = 1
	ErrorOutOfMemory        Result = 2
	ErrorNotInitialized     Result = 3
	ErrorDeinitialized      Result = 4
	ErrorInsufficientDriver Result = 35
	ErrorNoDevice           Result = 100
	ErrorInvalidDevice      Result = 101
	ErrorInvalidDeviceFunc  Result = 98
	ErrorInvalidImage       Result = 200
	ErrorInvalidContext     Result = 201
	ErrorNoBinaryForGpu     Result = 209
	ErrorPeerAccessUnsupp   Result = 217
	ErrorInvalidHandle      Result = 400
	ErrorNotFound           Result = 500
	ErrorNotReady           Result = 600
	ErrorLaunchOutOfRes     Result = 701
	ErrorPeerAccessEnabled  Result = 704
	ErrorNotSupported       Result = 801
	ErrorUnknown            Result = 999
)

var resultNames = map[Result]string{
	Success:                 "hipSuccess",
	ErrorInvalidValue:       "hipErrorInvalidValue",
	ErrorOutOfMemory:        "hipErrorOutOfMemory",
	ErrorNotInitialized:     "hipErrorNotInitialized",
	ErrorDeinitialized:      "hipErrorDeinitialized",
	ErrorInsufficientDriver: "hipErrorInsufficientDriver",
	ErrorNoDevice:           "hipErrorNoDevice",
	ErrorInvalidDevice:      "hipErrorInvalidDevice",
	ErrorInvalidDeviceFunc:  "hipErrorInvalidDeviceFunction",
	ErrorInvalidImage:       "hipErrorInvalidImage",
	ErrorInvalidContext:     "hipErrorInvalidContext",
	ErrorNoBinaryForGpu:     "hipErrorNoBinaryForGpu",
	ErrorPeerAccessUnsupp:   "hipErrorPeerAccessUnsupported",
	ErrorInvalidHandle:      "hipErrorInvalidHandle",
	ErrorNotFound:           "hipErrorNotFound",
	ErrorNotReady:           "hipErrorNotReady",
	ErrorLaunchOutOfRes:     "hipErrorLaunchOutOfResources",
	ErrorPeerAccessEnabled:  "hipErrorPeerAccessAlreadyEnabled",
	ErrorNotSupported:       "hipErrorNotSupported",
	ErrorUnknown:            "hipErrorUnknown",
}

// Error names the code as the HIP headers do.
func (r Result) Error() string {
	if name, ok := resultNames[r]; ok {
		return fmt.Sprintf("%s (%d)", name, int32(r))
	}
	return fmt.Sprintf("hipError_t %d", int32(r))
}

// check turns a status into an error naming the call that failed.
func check(call string, r Result) error {
	if r == Success {
		return nil
	}
	return fmt.Errorf("%s: %w", call, r)
}

// HIPRTCResult is a hiprtcResult status code (hiprtc.h).
type HIPRTCResult int32

const hiprtcSuccess HIPRTCResult = 0

var hiprtcNames = [...]string{
	"HIPRTC_SUCCESS", "HIPRTC_ERROR_OUT_OF_MEMORY", "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
	"HIPRTC_ERROR_INVALID_INPUT", "HIPRTC_ERROR_INVALID_PROGRAM", "HIPRTC_ERROR_INVALID_OPTION",
	"HIPRTC_ERROR_COMPILATION", "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	"HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	"HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID", "HIPRTC_ERROR_INTERNAL_ERROR",
}

// Error names the code as hiprtc.h does.
func (r HIPRTCResult) Error() string {
	if r >= 0 && int(r) < len(hiprtcNames) {
		return fmt.Sprintf("%s (%d)", hiprtcNames[r], int32(r))
	}
	return fmt.Sprintf("hiprtcResult %d", int32(r))
}

func checkRTC(call string, r HIPRTCResult) error {
	if r == hiprtcSuccess {
		return nil
	}
	return fmt.Errorf("%s: %w", call, r)
}
