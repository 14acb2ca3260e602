package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The GPU half of the kernel tests: every kernel, compiled by the NVRTC
// found here for the device's architecture, loaded and launched, against
// its Go twin (warp size 32) on the same random data. They skip, saying
// why, where there is no NVIDIA device or no NVRTC (CI, most development
// machines); on a GPU machine run them with
//
//	go test -count=1 -v -run 'GPU' ./native/cuda
//
// Expected: bit-identical results (the twins reproduce each kernel's
// operation order, fmaf and ggml's expf); one ulp is allowed for the
// double-precision cos/sin/exp of RoPE and SiLU, whose device library and
// Go's math package may round a double differently before the float32
// rounding.

// gpuKernels opens device 0 and loads every kernel, or skips.
func gpuKernels(t *testing.T) (*Context, *Kernels) {
	t.Helper()
	c, err := Open(0)
	if errors.Is(err, ErrNoGPU) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	n := needNVRTC(t)
	var k *Kernels
	err = c.Do(func() (err error) {
		k, err = c.LoadKernels(n, NewCache(t.TempDir()))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (sm_%d), NVRTC %s", c.Device.Name, c.Arch(), n.Version())
	return c, k
}

// gpuBufs uploads test data into device buffers on one stream and frees
// them when gpuDo's function returns.
type gpuBufs struct {
	c   *Context
	s   *Stream
	ptr []DevicePtr
	t   *testing.T
}

func (g *gpuBufs) upload(b []byte) DevicePtr {
	p, err := g.c.Alloc(max(len(b), 4))
	must(g.t, err)
	g.ptr = append(g.ptr, p)
	must(g.t, g.c.CopyToDevice(g.s, p, b))
	return p
}

func (g *gpuBufs) f32(x []float32) DevicePtr { return g.upload(f32Bytes(x)) }

func (g *gpuBufs) download(dst []float32, p DevicePtr) { g.downloadBytes(f32Bytes(dst), p) }

func (g *gpuBufs) downloadBytes(dst []byte, p DevicePtr) {
	must(g.t, g.c.CopyToHost(g.s, dst, p))
	must(g.t, g.c.SyncStream(g.s))
}

func gpuDo(t *testing.T, c *Context, fn func(g *gpuBufs)) {
	t.Helper()
	err := c.Do(func() error {
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		g := &gpuBufs{c: c, s: s, t: t}
		fn(g)
		for _, p := range g.ptr {
			c.Free(p)
		}
		return c.DestroyStream(s)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGPUMatMul(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(21, 22))
	for _, wt := range WeightTypes() {
		for _, shape := range [][3]int{{32, 1, 1}, {4096, 37, 1}, {1056, 13, 9}, {2080, 5, 16}} {
			n, rows, cols := shape[0], shape[1], shape[2]
			if wt.BlockSize() == 1 {
				if n != 2080 {
					n++ // odd lengths for the float types, but F16's 16-byte chunks at 2080
				}
			} else {
				n = (n + wt.BlockSize() - 1) / wt.BlockSize() * wt.BlockSize() // whole blocks (K-quants: 256)
			}
			w, _ := randWeights(r, wt, n, rows)
			x := randFloats(r, cols*n, 2)
			want := make([]float32, rows*cols)
			mmTwin(wt, cudaWarp, w, x, want, n, rows, cols)
			for _, R := range []int{1, 2, 4} { // the chunked kernels at each rows-a-warp (MatMulRows)
				if R > 1 && MatMulRows(wt, 1<<20) == 1 {
					continue
				}
				mmRowsOverride = R
				got := make([]float32, rows*cols)
				gpuDo(t, c, func(g *gpuBufs) {
					dy := g.f32(got)
					must(t, k.MatMul(g.s, wt, g.upload(w), g.f32(x), dy, n, rows, cols))
					g.download(got, dy)
				})
				mmRowsOverride = 0
				checkULP(t, fmt.Sprintf("%v R=%d n=%d rows=%d cols=%d", wt, R, n, rows, cols), got, want, 0)
			}
		}
	}
}

func TestGPURMSNorm(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{1, 257, 4096, 5120} {
		x, gain := randFloats(r, 3*n, 3), randFloats(r, n, 1.5)
		want := make([]float32, 3*n)
		rmsNormTwin(cudaWarp, x, gain, want, n, 1e-5)
		got := make([]float32, 3*n)
		gpuDo(t, c, func(g *gpuBufs) {
			dy := g.f32(got)
			must(t, k.RMSNorm(g.s, g.f32(x), g.f32(gain), dy, n, 3, 1e-5))
			g.download(got, dy)
		})
		checkULP(t, fmt.Sprintf("rmsnorm n=%d", n), got, want, 0)
	}
}

func TestGPURoPE(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(25, 26))
	const nHeads, headDim = 4, 128
	pos := []int32{0, 1, 77, 4095}
	for _, neox := range []bool{false, true} {
		x := randFloats(r, len(pos)*nHeads*headDim, 2)
		want := append([]float32(nil), x...)
		ropeTwin(want, pos, nHeads*headDim, nHeads, headDim, 96, float32(math.Pow(10000, -2.0/96)), 1, neox)
		got := make([]float32, len(x))
		gpuDo(t, c, func(g *gpuBufs) {
			dx := g.f32(x)
			dp := g.upload(int32Bytes(pos))
			must(t, k.RoPE(g.s, dx, dp, len(pos), nHeads*headDim, nHeads, headDim, 96, 10000, 1, neox))
			g.download(got, dx)
		})
		checkULP(t, fmt.Sprintf("rope neox=%v", neox), got, want, 1)
	}
}

func TestGPUSiLUMulSoftmax(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(27, 28))
	const n = 14337
	gate, up := randFloats(r, n, 20), randFloats(r, n, 3)
	wantH := make([]float32, n)
	siluMulTwin(wantH, gate, up)
	x := randFloats(r, 3*n, 30)
	wantS := append([]float32(nil), x...)
	softmaxTwin(cudaWarp, wantS, n)
	gotH, gotS := make([]float32, n), make([]float32, 3*n)
	gpuDo(t, c, func(g *gpuBufs) {
		dh := g.f32(gotH)
		must(t, k.SiLUMul(g.s, dh, g.f32(gate), g.f32(up), n))
		g.download(gotH, dh)
		dx := g.f32(x)
		must(t, k.Softmax(g.s, dx, n, 3))
		g.download(gotS, dx)
	})
	checkULP(t, "silu_mul", gotH, wantH, 1)
	checkULP(t, "softmax", gotS, wantS, 0)
}

func TestGPUAttnDecode(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(29, 30))
	for _, shape := range [][4]int{{1, 64, 4, 4}, {333, 128, 32, 8}, {4099, 128, 8, 2}} {
		nKV, hd, nHead, nKVHead := shape[0], shape[1], shape[2], shape[3]
		stride := nKVHead * hd
		q := randFloats(r, nHead*hd, 1)
		kc, vc := randFloats(r, nKV*stride, 1), randFloats(r, nKV*stride, 1)
		scale := float32(1 / math.Sqrt(float64(hd)))
		for _, kvt := range []WeightType{WeightF32, WeightF16} {
			kb, vb := make([]byte, kvt.RowBytes(len(kc))), make([]byte, kvt.RowBytes(len(vc)))
			kvStoreTwin(kvt, kb, kc)
			kvStoreTwin(kvt, vb, vc)
			want := make([]float32, nHead*hd)
			attnTwin(cudaWarp, kvt, q, kb, vb, want, nKV, hd, nHead, nKVHead, stride, scale)
			got := make([]float32, nHead*hd)
			gotK := make([]byte, len(kb))
			gpuDo(t, c, func(g *gpuBufs) {
				do, ds := g.f32(got), g.f32(make([]float32, nHead*nKV))
				dk, dv := g.upload(make([]byte, len(kb))), g.upload(make([]byte, len(vb)))
				must(t, k.StoreKV(g.s, kvt, g.f32(kc), dk, len(kc)))
				must(t, k.StoreKV(g.s, kvt, g.f32(vc), dv, len(vc)))
				must(t, k.AttnDecode(g.s, kvt, g.f32(q), dk, dv, ds, do, nKV, hd, nHead, nKVHead, stride, scale))
				g.download(got, do)
				g.downloadBytes(gotK, dk)
			})
			if !bytes.Equal(gotK, kb) {
				t.Errorf("StoreKV %v: the cache's bytes differ from the twin's", kvt)
			}
			checkULP(t, fmt.Sprintf("attn %v nKV=%d hd=%d heads %d/%d", kvt, nKV, hd, nHead, nKVHead), got, want, 0)
		}
	}
}

// TestGPUContext checks memory info, pinned memory, events and occupancy
// on the real driver.
func TestGPUContext(t *testing.T) {
	c, k := gpuKernels(t)
	err := c.Do(func() error {
		free, total, err := c.MemInfo()
		if err != nil || free == 0 || free > total || total != c.Device.TotalMem {
			t.Errorf("MemInfo = %d, %d, %v (device total %d)", free, total, err, c.Device.TotalMem)
		}
		for name := range k.fn {
			if blocks, err := c.MaxActiveBlocks(k.Function(name), 128, 0); err != nil || blocks < 1 {
				t.Errorf("%s: MaxActiveBlocks(128) = %d, %v", name, blocks, err)
			}
		}
		h, err := c.AllocHost(1 << 20)
		if err != nil {
			return err
		}
		defer c.FreeHost(h)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
