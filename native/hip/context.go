package hip

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// DevicePtr is a device address (hipDeviceptr_t).
type DevicePtr uint64

// Context is one device, opened for compute. HIP has no contexts the
// program manages: the runtime keeps one per device and a current device
// per OS thread. Context gives it native/cuda's shape: every method except
// Close runs inside Do, which makes the device current on a locked thread.
type Context struct {
	r       *hipRuntime
	ordinal int32
	Device  Device
}

// Open opens the device with the given ordinal. The error wraps ErrNoGPU
// when there is no usable runtime or device, and ErrNotSupported when the
// runtime lacks an entry point this package needs.
func Open(ordinal int) (*Context, error) {
	r, err := defaultRuntime()
	if err != nil {
		return nil, err
	}
	return r.open(ordinal)
}

func (r *hipRuntime) open(ordinal int) (*Context, error) {
	if m := r.api.missingCompute(); m != "" {
		return nil, fmt.Errorf("hip: %w (missing %s)", ErrNotSupported, m)
	}
	info, err := r.probe()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= len(info.Devices) {
		return nil, fmt.Errorf("hip: device %d: %w", ordinal, ErrorInvalidDevice)
	}
	return &Context{r: r, ordinal: int32(ordinal), Device: info.Devices[ordinal]}, nil
}

// Close waits for the device's work. Memory is not freed: the caller frees
// what it allocated (the runtime's per-device context outlives the program's
// use of it).
func (c *Context) Close() error {
	return c.Do(func() error { return c.Synchronize() })
}

// Do runs fn with the device current on a locked OS thread, and restores
// the thread's previous device.
func (c *Context) Do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return c.r.onDevice(c.ordinal, fn)
}

// Synchronize waits for all work on the device.
func (c *Context) Synchronize() error {
	return check("hipDeviceSynchronize", c.r.api.hipDeviceSynchronize())
}

// Arch is the target hipRTC compiles for: the gcnArchName ("gfx90a:sramecc+:xnack-").
func (c *Context) Arch() string { return c.Device.Arch }

// MemInfo returns the free and total device memory in bytes.
func (c *Context) MemInfo() (free, total uint64, err error) {
	err = check("hipMemGetInfo", c.r.api.hipMemGetInfo(&free, &total))
	return free, total, err
}

// Alloc allocates bytes of device memory (256-byte aligned).
func (c *Context) Alloc(bytes int) (DevicePtr, error) {
	var p DevicePtr
	err := check("hipMalloc", c.r.api.hipMalloc(&p, uint64(bytes)))
	return p, err
}

// Free releases memory from Alloc.
func (c *Context) Free(p DevicePtr) error { return check("hipFree", c.r.api.hipFree(p)) }

// HostBuffer is page-locked host memory: copies from and to it run
// asynchronously at full link speed. Its bytes are not Go memory.
type HostBuffer struct {
	ptr unsafe.Pointer
	n   int
}

// AllocHost allocates bytes of pinned host memory (hipHostMallocDefault).
func (c *Context) AllocHost(bytes int) (*HostBuffer, error) {
	var p unsafe.Pointer
	if err := check("hipHostMalloc", c.r.api.hipHostMalloc(&p, uint64(bytes), 0)); err != nil {
		return nil, err
	}
	return &HostBuffer{ptr: p, n: bytes}, nil
}

// Bytes is the buffer's memory; it must not be used after FreeHost.
func (b *HostBuffer) Bytes() []byte { return unsafe.Slice((*byte)(b.ptr), b.n) }

// Float32s views the buffer as float32 values.
func (b *HostBuffer) Float32s() []float32 { return unsafe.Slice((*float32)(b.ptr), b.n/4) }

// FreeHost releases a HostBuffer.
func (c *Context) FreeHost(b *HostBuffer) error {
	return check("hipHostFree", c.r.api.hipHostFree(b.ptr))
}

// AllocPinned allocates bytes of portable pinned host memory
// (hipHostMalloc with hipHostMallocPortable: pinned for every device, so
// one buffer stages copies between devices). Free it with FreePinned.
func (c *Context) AllocPinned(bytes int) ([]byte, error) {
	var p unsafe.Pointer
	if err := check("hipHostMalloc", c.r.api.hipHostMalloc(&p, uint64(max(bytes, 1)), 1 /* hipHostMallocPortable */)); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), bytes), nil
}

// FreePinned releases memory from AllocPinned.
func (c *Context) FreePinned(b []byte) error {
	return check("hipHostFree", c.r.api.hipHostFree(unsafe.Pointer(unsafe.SliceData(b))))
}

// Stream is a queue of device work; nil means the null stream.
type Stream struct{ s hipStream }

// NewStream creates a non-blocking stream (hipStreamNonBlocking: it does
// not synchronize with the null stream).
func (c *Context) NewStream() (*Stream, error) {
	s := &Stream{}
	return s, check("hipStreamCreateWithFlags", c.r.api.hipStreamCreateWithFlags(&s.s, 1))
}

func (s *Stream) handle() hipStream {
	if s == nil {
		return 0
	}
	return s.s
}

// SyncStream waits for everything queued on s.
func (c *Context) SyncStream(s *Stream) error {
	return check("hipStreamSynchronize", c.r.api.hipStreamSynchronize(s.handle()))
}

// DestroyStream releases s after its work completes.
func (c *Context) DestroyStream(s *Stream) error {
	return check("hipStreamDestroy", c.r.api.hipStreamDestroy(s.handle()))
}

// WaitEvent makes later work on s wait for e (which may belong to another
// device: that is how a pipeline stage waits for the previous one).
func (c *Context) WaitEvent(s *Stream, e *Event) error {
	return check("hipStreamWaitEvent", c.r.api.hipStreamWaitEvent(s.handle(), e.e, 0))
}

// Event marks a point in a stream.
type Event struct{ e hipEvent }

// NewEvent creates an event; timing=false makes it cheaper
// (hipEventDisableTiming).
func (c *Context) NewEvent(timing bool) (*Event, error) {
	var flags uint32
	if !timing {
		flags = 2
	}
	e := &Event{}
	return e, check("hipEventCreateWithFlags", c.r.api.hipEventCreateWithFlags(&e.e, flags))
}

// Record marks e at the current end of s.
func (c *Context) Record(e *Event, s *Stream) error {
	return check("hipEventRecord", c.r.api.hipEventRecord(e.e, s.handle()))
}

// SyncEvent waits until the work before e is done.
func (c *Context) SyncEvent(e *Event) error {
	return check("hipEventSynchronize", c.r.api.hipEventSynchronize(e.e))
}

// Elapsed is the time between two recorded timing events, in milliseconds.
func (c *Context) Elapsed(start, end *Event) (float32, error) {
	var ms float32
	err := check("hipEventElapsedTime", c.r.api.hipEventElapsedTime(&ms, start.e, end.e))
	return ms, err
}

// DestroyEvent releases e.
func (c *Context) DestroyEvent(e *Event) error {
	return check("hipEventDestroy", c.r.api.hipEventDestroy(e.e))
}

// CopyToDevice queues a copy of src to dst on s. From Go memory the
// runtime stages src before returning; from a HostBuffer the copy is truly
// asynchronous and the buffer must stay untouched until s reaches it.
func (c *Context) CopyToDevice(s *Stream, dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	err := check("hipMemcpyHtoDAsync", c.r.api.hipMemcpyHtoDAsync(dst, unsafe.Pointer(&src[0]), uint64(len(src)), s.handle()))
	runtime.KeepAlive(src)
	return err
}

// CopyToHost queues a copy of len(dst) bytes at src into dst on s;
// synchronize s before reading dst.
func (c *Context) CopyToHost(s *Stream, dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	err := check("hipMemcpyDtoHAsync", c.r.api.hipMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), src, uint64(len(dst)), s.handle()))
	runtime.KeepAlive(dst)
	return err
}

// CopyDevice queues a device-to-device copy of n bytes.
func (c *Context) CopyDevice(s *Stream, dst, src DevicePtr, n int) error {
	return check("hipMemcpyDtoDAsync", c.r.api.hipMemcpyDtoDAsync(dst, src, uint64(n), s.handle()))
}

// Fill32 queues setting n 32-bit words at dst to v.
func (c *Context) Fill32(s *Stream, dst DevicePtr, v uint32, n int) error {
	return check("hipMemsetD32Async", c.r.api.hipMemsetD32Async(dst, int32(v), uint64(n), s.handle()))
}

// CanAccessPeer reports whether this device can read peer's memory
// directly (then all-reduces copy peer to peer, else through pinned host
// memory).
func (c *Context) CanAccessPeer(peer *Context) (bool, error) {
	var can int32
	err := check("hipDeviceCanAccessPeer", c.r.api.hipDeviceCanAccessPeer(&can, c.ordinal, peer.ordinal))
	return can != 0, err
}

// EnablePeerAccess lets this device access peer's memory; enabling it
// twice is not an error.
func (c *Context) EnablePeerAccess(peer *Context) error {
	r := c.r.api.hipDeviceEnablePeerAccess(peer.ordinal, 0)
	if r == ErrorPeerAccessEnabled {
		return nil
	}
	return check("hipDeviceEnablePeerAccess", r)
}

// CopyPeer queues a copy of n bytes from src on device srcCtx to dst on
// this device.
func (c *Context) CopyPeer(s *Stream, dst DevicePtr, srcCtx *Context, src DevicePtr, n int) error {
	return check("hipMemcpyPeerAsync", c.r.api.hipMemcpyPeerAsync(dst, c.ordinal, src, srcCtx.ordinal, uint64(n), s.handle()))
}

// Module is a loaded code object; Function a kernel in it.
type Module struct{ m hipModule }

type Function struct {
	f    hipFunction
	Name string
}

// LoadModule loads a code object compiled for this device's target.
func (c *Context) LoadModule(img *Image) (*Module, error) {
	if len(img.Data) == 0 {
		return nil, fmt.Errorf("hip: empty module image")
	}
	m := &Module{}
	err := check("hipModuleLoadData", c.r.api.hipModuleLoadData(&m.m, &img.Data[0]))
	runtime.KeepAlive(img)
	return m, err
}

// UnloadModule releases m and its functions.
func (c *Context) UnloadModule(m *Module) error {
	return check("hipModuleUnload", c.r.api.hipModuleUnload(m.m))
}

// Function finds the extern "C" kernel name in m.
func (c *Context) Function(m *Module, name string) (*Function, error) {
	f := &Function{Name: name}
	if err := check("hipModuleGetFunction", c.r.api.hipModuleGetFunction(&f.f, m.m, name)); err != nil {
		return nil, fmt.Errorf("hip: kernel %s: %w", name, err)
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
		panic("hip: more than 24 kernel arguments")
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
	err := check("hipModuleLaunchKernel", c.r.api.hipModuleLaunchKernel(f.f, gx, gy, gz, bx, by, bz, uint32(shared), s.handle(), params, nil))
	runtime.KeepAlive(a)
	if err != nil {
		return fmt.Errorf("hip: launch %s: %w", f.Name, err)
	}
	return nil
}

// MaxActiveBlocks is how many blocks of blockSize threads (and dynShared
// bytes of dynamic shared memory) fit on one compute unit at once.
func (c *Context) MaxActiveBlocks(f *Function, blockSize, dynShared int) (int, error) {
	var n int32
	err := check("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
		c.r.api.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&n, f.f, int32(blockSize), uint64(dynShared)))
	return int(n), err
}
