//go:build linux

package cuda

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/ebitengine/purego"
)

// TestFakeCompute drives the compute wrappers against the fake driver,
// which runs its one kernel (axpy) on the host: allocations, copies both
// ways, a fill, pinned memory, streams, events, module loading and a
// launch whose pointer, float and int arguments must arrive in order.
func TestFakeCompute(t *testing.T) {
	path := buildFake(t)
	d, err := openDriver(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.open(1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Arch() != 99 || c.Device.Name != "Fake GPU 1" {
		t.Errorf("device %+v, arch %d; want Fake GPU 1, sm_99", c.Device, c.Arch())
	}
	if err := c.Do(func() error { return fakeAxpy(t, c) }); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	h, _ := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	var allocs, objects func() int32
	purego.RegisterLibFunc(&allocs, h, "fakeAllocs")
	purego.RegisterLibFunc(&objects, h, "fakeObjects")
	var lastLaunch func(int32) uint32
	purego.RegisterLibFunc(&lastLaunch, h, "fakeLastLaunch")
	var dims []uint32
	for i := range int32(7) {
		dims = append(dims, lastLaunch(i))
	}
	if want := []uint32{8, 1, 1, 128, 1, 1, 64}; !slices.Equal(dims, want) {
		t.Errorf("launch grid, block, shared bytes = %v, want %v", dims, want)
	}
	retained, depth := fakeHooks(t, path)
	if allocs() != 0 || objects() != 0 || retained(1) != 0 || depth() != 0 {
		t.Errorf("left behind: %d allocations, %d streams/events/modules, %d context refs, stack depth %d",
			allocs(), objects(), retained(1), depth())
	}
}

func fakeAxpy(t *testing.T, c *Context) error {
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
	mod, err := c.LoadModule(&Image{Data: []byte("FAKEMOD\x00")})
	if err != nil {
		return err
	}
	if _, err := c.Function(mod, "nope"); !errors.Is(err, ErrorNotFound) {
		t.Errorf("Function(nope) = %v, want CUDA_ERROR_NOT_FOUND", err)
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
	if _, err := c.LoadModule(&Image{Data: []byte("\x7fELF")}); !errors.Is(err, ErrorInvalidImage) {
		t.Errorf("LoadModule(foreign image) = %v, want CUDA_ERROR_INVALID_IMAGE", err)
	}
	for _, err := range []error{c.DestroyEvent(e0), c.DestroyEvent(e1), c.UnloadModule(mod), c.DestroyStream(s),
		c.FreeHost(pinned), c.Free(dx), c.Free(dy), c.Synchronize()} {
		must(t, err)
	}
	return nil
}

func TestFakeWithoutComputeAPI(t *testing.T) {
	d := openFake(t, "FAKE_OMIT_COMPUTE")
	if _, err := d.open(0); !errors.Is(err, ErrNotSupported) {
		t.Errorf("open without the compute set: %v, want ErrNotSupported", err)
	}
}
