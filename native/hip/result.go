package hip

import "fmt"

// Result is a hipError_t status code. Success (0) is never returned as an
// error; see check.
type Result int32

// The hipError_t codes the probe path can meet (hip_runtime_api.h; the
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
	ErrorInvalidContext     Result = 201
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
	ErrorInvalidContext:     "hipErrorInvalidContext",
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
