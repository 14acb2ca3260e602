//go:build linux

package hip

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// TestFakeCompute drives the compute wrappers against the fake runtime,
// which runs its one kernel (axpy) on the host: allocations, copies both
// ways, a fill, pinned memory, streams, events, peer copies, module loading
// and a launch whose pointer, float and int arguments must arrive in order,
// on the Context's device.
func TestFakeCompute(t *testing.T) {
	path := buildFake(t)
	r, err := openRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.open(1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Arch() != "gfx1100" || c.Device.WarpSize != 32 {
		t.Errorf("device %+v; want gfx1100, wave32", c.Device)
	}
	peer, err := r.open(0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread() // read the fake's per-thread device below
	defer runtime.UnlockOSThread()
	if err := c.Do(func() error { return fakeAxpy(t, c, peer) }); err != nil {
		t.Fatal(err)
	}
	must(t, c.Close())
	h, _ := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	var allocs, objects, launchDev, current func() int32
	purego.RegisterLibFunc(&allocs, h, "fakeAllocs")
	purego.RegisterLibFunc(&objects, h, "fakeObjects")
	purego.RegisterLibFunc(&launchDev, h, "fakeLastLaunchDevice")
	purego.RegisterLibFunc(&current, h, "fakeCurrent")
	var lastLaunch func(int32) uint32
	purego.RegisterLibFunc(&lastLaunch, h, "fakeLastLaunch")
	var dims []uint32
	for i := range int32(7) {
		dims = append(dims, lastLaunch(i))
	}
	if want := []uint32{8, 1, 1, 128, 1, 1, 64}; !slices.Equal(dims, want) {
		t.Errorf("launch grid, block, shared bytes = %v, want %v", dims, want)
	}
	if launchDev() != 1 || current() != 0 {
		t.Errorf("launched on device %d (want 1); current device after Do %d (want 0 restored)", launchDev(), current())
	}
	if allocs() != 0 || objects() != 0 {
		t.Errorf("left behind: %d allocations, %d streams/events/modules", allocs(), objects())
	}
}

func fakeAxpy(t *testing.T, c, peer *Context) error {
	const n = 1000
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), 1
	}
	dx, err := c.Alloc(4 * n)
	if err != nil {
		return err
	}
	dy, _ := c.Alloc(4 * n)
	s, err := c.NewStream()
	if err != nil {
		return err
	}
	pinned, err := c.AllocHost(4 * n)
	if err != nil {
		return err
	}
	copy(pinned.Float32s(), y)
	must(t, c.CopyToDevice(s, dx, f32Bytes(x)))
	must(t, c.CopyToDevice(s, dy, pinned.Bytes()))
	mod, err := c.LoadModule(&Image{Data: []byte("\x7fELF fake code object")})
	if err != nil {
		return err
	}
	if _, err := c.Function(mod, "nope"); !errors.Is(err, ErrorNotFound) {
		t.Errorf("Function(nope) = %v, want hipErrorNotFound", err)
	}
	f, err := c.Function(mod, "axpy")
	if err != nil {
		return err
	}
	var args Args
	must(t, c.Launch(f, Dim3{X: 8}, Dim3{X: 128}, 64, s, args.Reset().Ptr(dy).Ptr(dx).F32(0.5).I32(n)))
	got := make([]float32, n)
	must(t, c.CopyToHost(s, f32Bytes(got), dy))
	must(t, c.SyncStream(s))
	for i := range got {
		if want := 1 + 0.5*float32(i); got[i] != want {
			t.Fatalf("after axpy y[%d] = %g, want %g", i, got[i], want)
		}
	}
	must(t, c.Fill32(s, dy, math.Float32bits(-2), n))
	must(t, c.CopyDevice(s, dx, dy, 4*n))
	must(t, c.CopyToHost(s, pinned.Bytes(), dx))
	if v := pinned.Float32s()[n-1]; v != -2 {
		t.Errorf("after fill and device copy: %g, want -2", v)
	}
	fakePeer(t, c, peer, s, dx)
	if blocks, err := c.MaxActiveBlocks(f, 256, 0); err != nil || blocks != 8 {
		t.Errorf("MaxActiveBlocks = %d, %v; want 8", blocks, err)
	}
	e0, _ := c.NewEvent(true)
	e1, _ := c.NewEvent(false)
	must(t, c.Record(e0, s))
	must(t, c.Record(e1, s))
	must(t, c.WaitEvent(s, e1))
	must(t, c.SyncEvent(e1))
	if ms, err := c.Elapsed(e0, e1); err != nil || ms != 1.5 {
		t.Errorf("Elapsed = %g, %v; want 1.5", ms, err)
	}
	if _, err := c.LoadModule(&Image{Data: []byte("FAKEMOD")}); !errors.Is(err, ErrorInvalidImage) {
		t.Errorf("LoadModule(foreign image) = %v, want hipErrorInvalidImage", err)
	}
	for _, err := range []error{c.DestroyEvent(e0), c.DestroyEvent(e1), c.UnloadModule(mod), c.DestroyStream(s),
		c.FreeHost(pinned), c.Free(dx), c.Free(dy), c.Synchronize()} {
		must(t, err)
	}
	return nil
}

// fakePeer copies dx (all -2) into a buffer "on" peer through the peer path.
func fakePeer(t *testing.T, c, peer *Context, s *Stream, dx DevicePtr) {
	if ok, err := c.CanAccessPeer(peer); err != nil || !ok {
		t.Errorf("CanAccessPeer = %v, %v", ok, err)
	}
	must(t, c.EnablePeerAccess(peer))
	must(t, c.EnablePeerAccess(peer)) // already enabled is not an error
	dp, _ := c.Alloc(8)
	must(t, peer.CopyPeer(s, dp, c, dx, 8))
	got := make([]float32, 2)
	must(t, c.CopyToHost(s, f32Bytes(got), dp))
	if got[1] != -2 {
		t.Errorf("peer copy: %v", got)
	}
	must(t, c.Free(dp))
}

func TestFakeWithoutComputeAPI(t *testing.T) {
	r := openFake(t, "FAKE_OMIT_COMPUTE")
	if _, err := r.open(0); !errors.Is(err, ErrNotSupported) {
		t.Errorf("open without the compute set: %v, want ErrNotSupported", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func f32Bytes(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// TestFakeLoadKernels compiles every kernel with the real hipRTC for the
// fake's gfx90a device, loads the code objects into the fake runtime and
// checks the launchers' shapes at wavefront 64; the fake's wave32 gfx1100
// is refused before hipRTC sees it (ROCm 5.2 would abort on it).
func TestFakeLoadKernels(t *testing.T) {
	n := needHIPRTC(t)
	path := buildFake(t, "FAKE_ANY_FUNCTION")
	r, err := openRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(t.TempDir())
	c, _ := r.open(0)
	err = c.Do(func() error {
		k, err := c.LoadKernels(n, cache)
		if err != nil {
			return err
		}
		defer k.Unload()
		if err := k.MatMul(nil, WeightType(0), 0, 0, 0, 4096, 1000, 3); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	var lastLaunch func(int32) uint32
	purego.RegisterLibFunc(&lastLaunch, h, "fakeLastLaunch")
	var dims []uint32
	for i := range int32(6) {
		dims = append(dims, lastLaunch(i))
	}
	if want := []uint32{250, 1, 1, 64, 4, 1}; !slices.Equal(dims, want) {
		t.Errorf("MatMul grid and block = %v, want %v", dims, want)
	}
	if _, misses := cache.Stats(); misses != int64(len(KernelSources())) {
		t.Errorf("cache misses %d, want one per source", misses)
	}
	if n.SupportedArchs() != nil {
		c1, _ := r.open(1)
		if err := c1.Do(func() error { _, err := c1.LoadKernels(n, cache); return err }); !errors.Is(err, ErrUnsupportedArch) {
			t.Errorf("LoadKernels on gfx1100 with hipRTC %s: %v, want ErrUnsupportedArch", n.Version(), err)
		}
	}
}
