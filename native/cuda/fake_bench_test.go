//go:build linux

package cuda

import "testing"

// BenchmarkFakeLaunchOp is the host's cost of one device operation as the
// engine issues it (Do: the context made current on a locked thread, then
// one cuLaunchKernel), against the fake driver, whose launch of a 1-element
// axpy costs next to nothing: what is left is purego and Go. On the H200
// (2026-11-26) a TinyLlama token's ~330 operations took 2.05 ms of CPU,
// driver included.
func BenchmarkFakeLaunchOp(b *testing.B) {
	d, err := openDriver(buildFake(b))
	if err != nil {
		b.Fatal(err)
	}
	c, err := d.open(1)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var (
		f      *Function
		s      *Stream
		dx, dy DevicePtr
		args   Args
	)
	if err := c.Do(func() (err error) {
		dx, _ = c.Alloc(64)
		dy, _ = c.Alloc(64)
		if s, err = c.NewStream(); err != nil {
			return err
		}
		mod, err := c.LoadModule(&Image{Data: []byte("FAKEMOD\x00")})
		if err != nil {
			return err
		}
		f, err = c.Function(mod, "axpy")
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Do(func() error {
			return c.Launch(f, Dim3{X: 1}, Dim3{X: 32}, 0, s, args.Reset().Ptr(dy).Ptr(dx).F32(0.5).I32(1))
		}); err != nil {
			b.Fatal(err)
		}
	}
}
