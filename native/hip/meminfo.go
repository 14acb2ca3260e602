package hip

import (
	"errors"
	"fmt"
	"runtime"
)

// ErrNotSupported is wrapped when the loaded runtime lacks an optional entry
// point that a call needs.
var ErrNotSupported = errors.New("not supported by this HIP runtime")

// MemInfo returns the free and total memory of the device with the given
// ordinal, in bytes, as the runtime sees it now.
//
// HIP's current device is per OS thread: the goroutine stays on its thread
// while the device is switched, and the thread's previous device is restored.
func MemInfo(ordinal int) (free, total uint64, err error) {
	r, err := defaultRuntime()
	if err != nil {
		return 0, 0, err
	}
	return r.memInfo(ordinal)
}

func (r *hipRuntime) memInfo(ordinal int) (free, total uint64, err error) {
	if !r.api.hasMemInfo() {
		return 0, 0, fmt.Errorf("hip: MemInfo: %w", ErrNotSupported)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = r.onDevice(int32(ordinal), func() error {
		return check("hipMemGetInfo", r.api.hipMemGetInfo(&free, &total))
	})
	if err != nil {
		return 0, 0, fmt.Errorf("hip: device %d: %w", ordinal, err)
	}
	return free, total, nil
}

// onDevice runs fn with ordinal as the thread's current device. The caller
// must hold the OS thread.
func (r *hipRuntime) onDevice(ordinal int32, fn func() error) error {
	var prev int32
	if err := check("hipGetDevice", r.api.hipGetDevice(&prev)); err != nil {
		return err
	}
	if err := check("hipSetDevice", r.api.hipSetDevice(ordinal)); err != nil {
		return err
	}
	defer r.api.hipSetDevice(prev)
	return fn()
}
