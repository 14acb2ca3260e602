package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr uint64

// Context is a device's primary context: the one context per device that
// every library in the process shares (the CUDA runtime's too). Driver
// calls act on the calling OS thread's current context, so every method
// except Close must run inside Do, which makes the context current on a
// locked thread.
type Context struct {
	d      *driver
	dev    cuDevice
	ctx    cuContext
	Device Device
}

// Open retains the primary context of the device with the given ordinal.
// The error wraps ErrNoGPU when there is no usable driver or device, and
// ErrNotSupported when the driver lacks an entry point this package needs.
func Open(ordinal int) (*Context, error) {
	d, err := defaultDriver()
	if err != nil {
		return nil, err
	}
	return d.open(ordinal)
}

func (d *driver) open(ordinal int) (*Context, error) {
	if !d.api.hasComputeAPI() {
		return nil, fmt.Errorf("cuda: %w (missing %s)", ErrNotSupported, d.api.missingCompute()+d.missingContext())
	}
	info, err := d.probe()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= len(info.Devices) {
		return nil, fmt.Errorf("cuda: device %d: %w", ordinal, ErrorInvalidDevice)
	}
	c := &Context{d: d, Device: info.Devices[ordinal]}
	if err := check("cuDeviceGet", d.api.cuDeviceGet(&c.dev, int32(ordinal))); err != nil {
		return nil, err
	}
	if err := check("cuDevicePrimaryCtxRetain", d.api.cuDevicePrimaryCtxRetain(&c.ctx, c.dev)); err != nil {
		return nil, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	return c, nil
}

func (d *driver) missingContext() string {
	if d.api.hasContextAPI() {
		return ""
	}
	return "the primary-context entry points"
}

// Close releases the primary context; the driver destroys it when no one
// else holds it, freeing every allocation made in it.
func (c *Context) Close() error {
	return check("cuDevicePrimaryCtxRelease_v2", c.d.api.cuDevicePrimaryCtxRelease_v2(c.dev))
}

// Do runs fn with the context current on a locked OS thread, leaving the
// thread's context stack as it was.
func (c *Context) Do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.push(); err != nil {
		return err
	}
	defer c.pop()
	return fn()
}

func (c *Context) push() error {
	if p := c.d.api.rawPush; p != 0 {
		return check("cuCtxPushCurrent_v2", Result(int32(callN(p, uintptr(c.ctx)))))
	}
	return check("cuCtxPushCurrent_v2", c.d.api.cuCtxPushCurrent_v2(c.ctx))
}

// pop undoes push (its error cannot be acted on: the context was current).
func (c *Context) pop() {
	if p := c.d.api.rawPop; p != 0 {
		var popped cuContext
		callN(p, uintptr(unsafe.Pointer(&popped)))
		runtime.KeepAlive(&popped)
		return
	}
	var popped cuContext
	c.d.api.cuCtxPopCurrent_v2(&popped)
}

// Synchronize waits for all work in the context.
func (c *Context) Synchronize() error { return check("cuCtxSynchronize", c.d.api.cuCtxSynchronize()) }

// Attribute reads a CUdevice_attribute of the context's device.
func (c *Context) Attribute(attr int) (int, error) {
	var v int32
	err := check("cuDeviceGetAttribute", c.d.api.cuDeviceGetAttribute(&v, int32(attr), c.dev))
	return int(v), err
}

// Arch is the compute capability as NVRTC wants it: 86 for 8.6.
func (c *Context) Arch() int { return c.Device.ComputeMajor*10 + c.Device.ComputeMinor }

// MemInfo returns the free and total device memory in bytes.
func (c *Context) MemInfo() (free, total uint64, err error) {
	err = check("cuMemGetInfo_v2", c.d.api.cuMemGetInfo_v2(&free, &total))
	return free, total, err
}

// Alloc allocates bytes of device memory (256-byte aligned).
func (c *Context) Alloc(bytes int) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAlloc_v2", c.d.api.cuMemAlloc_v2(&p, uint64(bytes)))
	return p, err
}

// Free releases memory from Alloc.
func (c *Context) Free(p DevicePtr) error { return check("cuMemFree_v2", c.d.api.cuMemFree_v2(p)) }

// HostBuffer is page-locked host memory: copies from and to it run
// asynchronously at full PCIe speed. Its bytes are not Go memory.
type HostBuffer struct {
	ptr unsafe.Pointer
	n   int
}

// AllocHost allocates bytes of pinned host memory.
func (c *Context) AllocHost(bytes int) (*HostBuffer, error) {
	var p unsafe.Pointer
	if err := check("cuMemAllocHost_v2", c.d.api.cuMemAllocHost_v2(&p, uint64(bytes))); err != nil {
		return nil, err
	}
	return &HostBuffer{ptr: p, n: bytes}, nil
}

// Bytes is the buffer's memory; it must not be used after FreeHost.
func (b *HostBuffer) Bytes() []byte {
	return unsafe.Slice((*byte)(b.ptr), b.n)
}

// Float32s views the buffer as float32 values.
func (b *HostBuffer) Float32s() []float32 {
	return unsafe.Slice((*float32)(b.ptr), b.n/4)
}

// FreeHost releases a HostBuffer.
func (c *Context) FreeHost(b *HostBuffer) error {
	return check("cuMemFreeHost", c.d.api.cuMemFreeHost(b.ptr))
}

// AllocPinned allocates bytes of portable pinned host memory
// (cuMemHostAlloc with CU_MEMHOSTALLOC_PORTABLE: pinned for every
// context, so one buffer stages copies between devices), or, where the
// driver lacks cuMemHostAlloc, this context's pinned memory. Free it with
// FreePinned.
func (c *Context) AllocPinned(bytes int) ([]byte, error) {
	var p unsafe.Pointer
	var err error
	if c.d.api.cuMemHostAlloc != nil {
		err = check("cuMemHostAlloc", c.d.api.cuMemHostAlloc(&p, uint64(max(bytes, 1)), 1 /* CU_MEMHOSTALLOC_PORTABLE */))
	} else {
		err = check("cuMemAllocHost_v2", c.d.api.cuMemAllocHost_v2(&p, uint64(max(bytes, 1))))
	}
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), bytes), nil
}

// FreePinned releases memory from AllocPinned.
func (c *Context) FreePinned(b []byte) error {
	return check("cuMemFreeHost", c.d.api.cuMemFreeHost(unsafe.Pointer(unsafe.SliceData(b))))
}

// CanAccessPeer reports whether this context's device can read peer's
// memory directly (then device-to-device copies go peer to peer, else
// through pinned host memory). False where the driver lacks the entry
// points.
func (c *Context) CanAccessPeer(peer *Context) (bool, error) {
	a := c.d.api
	if a.cuDeviceCanAccessPeer == nil || a.cuCtxEnablePeerAccess == nil || a.cuMemcpyPeerAsync == nil || c.dev == peer.dev {
		return false, nil
	}
	var can int32
	err := check("cuDeviceCanAccessPeer", a.cuDeviceCanAccessPeer(&can, c.dev, peer.dev))
	return can != 0, err
}

// EnablePeerAccess lets this context (current: call inside Do) access
// peer's memory; enabling it twice is not an error.
func (c *Context) EnablePeerAccess(peer *Context) error {
	r := c.d.api.cuCtxEnablePeerAccess(peer.ctx, 0)
	if r == errorPeerAccessAlreadyEnabled {
		return nil
	}
	return check("cuCtxEnablePeerAccess", r)
}

// CopyPeer queues on s (this context's) a copy of n bytes from src in
// srcCtx to dst in this context.
func (c *Context) CopyPeer(s *Stream, dst DevicePtr, srcCtx *Context, src DevicePtr, n int) error {
	return check("cuMemcpyPeerAsync", c.d.api.cuMemcpyPeerAsync(dst, c.ctx, src, srcCtx.ctx, uint64(n), s.handle()))
}

// Stream is a queue of device work; nil means the legacy default stream.
type Stream struct {
	c *Context
	s cuStream
}

// NewStream creates a non-blocking stream (it does not synchronize with
// the default stream).
func (c *Context) NewStream() (*Stream, error) {
	s := &Stream{c: c}
	return s, check("cuStreamCreate", c.d.api.cuStreamCreate(&s.s, 1 /* CU_STREAM_NON_BLOCKING */))
}

func (s *Stream) handle() cuStream {
	if s == nil {
		return 0
	}
	return s.s
}

// Synchronize waits for everything queued on s.
func (c *Context) SyncStream(s *Stream) error {
	return check("cuStreamSynchronize", c.d.api.cuStreamSynchronize(s.handle()))
}

// DestroyStream releases s after its work completes.
func (c *Context) DestroyStream(s *Stream) error {
	return check("cuStreamDestroy_v2", c.d.api.cuStreamDestroy_v2(s.handle()))
}

// WaitEvent makes later work on s wait for e.
func (c *Context) WaitEvent(s *Stream, e *Event) error {
	return check("cuStreamWaitEvent", c.d.api.cuStreamWaitEvent(s.handle(), e.e, 0))
}

// Event marks a point in a stream.
type Event struct{ e cuEvent }

// NewEvent creates an event; timing=false makes it cheaper to record and
// wait on (CU_EVENT_DISABLE_TIMING).
func (c *Context) NewEvent(timing bool) (*Event, error) {
	var flags uint32
	if !timing {
		flags = 2
	}
	e := &Event{}
	return e, check("cuEventCreate", c.d.api.cuEventCreate(&e.e, flags))
}

// Record marks e at the current end of s.
func (c *Context) Record(e *Event, s *Stream) error {
	return check("cuEventRecord", c.d.api.cuEventRecord(e.e, s.handle()))
}

// SyncEvent waits until the work before e is done.
func (c *Context) SyncEvent(e *Event) error {
	return check("cuEventSynchronize", c.d.api.cuEventSynchronize(e.e))
}

// Elapsed is the time between two recorded timing events, in milliseconds.
func (c *Context) Elapsed(start, end *Event) (float32, error) {
	var ms float32
	err := check("cuEventElapsedTime", c.d.api.cuEventElapsedTime(&ms, start.e, end.e))
	return ms, err
}

// DestroyEvent releases e.
func (c *Context) DestroyEvent(e *Event) error {
	return check("cuEventDestroy_v2", c.d.api.cuEventDestroy_v2(e.e))
}

// CopyToDevice queues a copy of src to dst on s. From Go memory (pageable)
// the driver stages src before returning, so src may be reused at once;
// from a HostBuffer's bytes the copy is truly asynchronous and the buffer
// must stay untouched until s reaches this point.
func (c *Context) CopyToDevice(s *Stream, dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	err := check("cuMemcpyHtoDAsync_v2", c.d.api.cuMemcpyHtoDAsync_v2(dst, unsafe.Pointer(&src[0]), uint64(len(src)), s.handle()))
	runtime.KeepAlive(src)
	return err
}

// CopyToHost queues a copy of len(dst) bytes at src into dst on s. Into Go
// memory the call returns when the copy is done; into a HostBuffer, when
// it is queued (synchronize s before reading).
func (c *Context) CopyToHost(s *Stream, dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	err := check("cuMemcpyDtoHAsync_v2", c.d.api.cuMemcpyDtoHAsync_v2(unsafe.Pointer(&dst[0]), src, uint64(len(dst)), s.handle()))
	runtime.KeepAlive(dst)
	return err
}

// CopyDevice queues a device-to-device copy of n bytes.
func (c *Context) CopyDevice(s *Stream, dst, src DevicePtr, n int) error {
	return check("cuMemcpyDtoDAsync_v2", c.d.api.cuMemcpyDtoDAsync_v2(dst, src, uint64(n), s.handle()))
}

// Fill32 queues setting n 32-bit words at dst to v (math.Float32bits for
// a float).
func (c *Context) Fill32(s *Stream, dst DevicePtr, v uint32, n int) error {
	return check("cuMemsetD32Async", c.d.api.cuMemsetD32Async(dst, v, uint64(n), s.handle()))
}

// Module is a loaded image; Function a kernel in it.
type Module struct{ m cuModule }

type Function struct {
	f    cuFunction
	Name string
}

// LoadModule loads a CUBIN or PTX image (the driver JIT-compiles PTX).
func (c *Context) LoadModule(img *Image) (*Module, error) {
	if len(img.Data) == 0 {
		return nil, fmt.Errorf("cuda: empty module image")
	}
	m := &Module{}
	err := check("cuModuleLoadData", c.d.api.cuModuleLoadData(&m.m, &img.Data[0]))
	runtime.KeepAlive(img)
	return m, err
}

// UnloadModule releases m and its functions.
func (c *Context) UnloadModule(m *Module) error {
	return check("cuModuleUnload", c.d.api.cuModuleUnload(m.m))
}

// Function finds the extern "C" kernel name in m.
func (c *Context) Function(m *Module, name string) (*Function, error) {
	f := &Function{Name: name}
	if err := check("cuModuleGetFunction", c.d.api.cuModuleGetFunction(&f.f, m.m, name)); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", name, err)
	}
	return f, nil
}

// Dim3 is a grid or block shape; zero components count as 1.
type Dim3 struct{ X, Y, Z int }

func (d Dim3) u32() (x, y, z uint32) {
	one := func(v int) uint32 { return uint32(max(v, 1)) }
	return one(d.X), one(d.Y), one(d.Z)
}

// Args collects a kernel's arguments in order, for Launch. One Args is
// reused launch after launch (Reset), so launching allocates nothing; it is
// not safe for concurrent use.
type Args struct {
	vals [maxArgs]uint64
	ptrs [maxArgs]unsafe.Pointer
	n    int
}

const maxArgs = 24

// Reset empties a for the next launch.
func (a *Args) Reset() *Args { a.n = 0; return a }

func (a *Args) add(v uint64) *Args {
	if a.n == maxArgs {
		panic("cuda: more than 24 kernel arguments")
	}
	a.vals[a.n] = v
	a.ptrs[a.n] = unsafe.Pointer(&a.vals[a.n])
	a.n++
	return a
}

// Ptr appends a device pointer, I32 an int, F32 a float (each argument
// slot is 8 bytes, of which the kernel reads its parameter's size).
func (a *Args) Ptr(p DevicePtr) *Args { return a.add(uint64(p)) }
func (a *Args) I32(v int) *Args       { return a.add(uint64(uint32(int32(v)))) }
func (a *Args) F32(v float32) *Args   { return a.add(uint64(math.Float32bits(v))) }

// Launch queues f on s with the given grid and block shapes and bytes of
// dynamic shared memory.
func (c *Context) Launch(f *Function, grid, block Dim3, shared int, s *Stream, a *Args) error {
	gx, gy, gz := grid.u32()
	bx, by, bz := block.u32()
	var params *uintptr
	if a.n > 0 {
		params = (*uintptr)(unsafe.Pointer(&a.ptrs[0]))
	}
	var r Result
	if p := c.d.api.rawLaunch; p != 0 {
		r = Result(int32(callN(p, uintptr(f.f), uintptr(gx), uintptr(gy), uintptr(gz), uintptr(bx), uintptr(by), uintptr(bz),
			uintptr(uint32(shared)), uintptr(s.handle()), uintptr(unsafe.Pointer(params)), 0)))
	} else {
		r = c.d.api.cuLaunchKernel(f.f, gx, gy, gz, bx, by, bz, uint32(shared), s.handle(), params, nil)
	}
	err := check("cuLaunchKernel", r)
	runtime.KeepAlive(a)
	if err != nil {
		return fmt.Errorf("cuda: launch %s: %w", f.Name, err)
	}
	return nil
}

// MaxActiveBlocks is how many blocks of blockSize threads (and dynShared
// bytes of dynamic shared memory) fit on one multiprocessor at once.
func (c *Context) MaxActiveBlocks(f *Function, blockSize, dynShared int) (int, error) {
	var n int32
	err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor",
		c.d.api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f.f, int32(blockSize), uint64(dynShared)))
	return int(n), err
}
