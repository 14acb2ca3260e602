package cuda

import (
	"errors"
	"fmt"
	"runtime"
)

// ErrNotSupported is wrapped when the loaded driver lacks an optional entry
// point that a call needs.
var ErrNotSupported = errors.New("not supported by this CUDA driver")

// MemInfo returns the free and total memory of the device with the given
// ordinal, in bytes, as the driver sees it now (allocations of every process
// count against free).
//
// It needs a context, so it retains the device's primary context (creating
// it if nobody holds it: tens of milliseconds and some device memory) and
// releases it before returning. The goroutine stays on one OS thread while
// the context is current, and the thread's context stack is left as found.
func MemInfo(ordinal int) (free, total uint64, err error) {
	d, err := defaultDriver()
	if err != nil {
		return 0, 0, err
	}
	return d.memInfo(ordinal)
}

func (d *driver) memInfo(ordinal int) (free, total uint64, err error) {
	if !d.api.hasContextAPI() {
		return 0, 0, fmt.Errorf("cuda: MemInfo: %w", ErrNotSupported)
	}
	var h cuDevice
	if err := check("cuDeviceGet", d.api.cuDeviceGet(&h, int32(ordinal))); err != nil {
		return 0, 0, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = d.withPrimaryContext(h, func() error {
		return check("cuMemGetInfo_v2", d.api.cuMemGetInfo_v2(&free, &total))
	})
	if err != nil {
		return 0, 0, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	return free, total, nil
}

// withPrimaryContext runs fn with h's primary context pushed on the calling
// thread's context stack. The caller must hold the OS thread.
func (d *driver) withPrimaryContext(h cuDevice, fn func() error) error {
	var ctx cuContext
	if err := check("cuDevicePrimaryCtxRetain", d.api.cuDevicePrimaryCtxRetain(&ctx, h)); err != nil {
		return err
	}
	defer d.api.cuDevicePrimaryCtxRelease_v2(h)
	if err := check("cuCtxPushCurrent_v2", d.api.cuCtxPushCurrent_v2(ctx)); err != nil {
		return err
	}
	var popped cuContext
	defer d.api.cuCtxPopCurrent_v2(&popped)
	return fn()
}
