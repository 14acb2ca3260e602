package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The GPU half of the prefill products' tests (they skip without a
// device, like gpu_kernels_test.go):
//
//	go test -count=1 -v -run 'GPU(MatMulTiled|DequantF16|CUBLAS)' ./native/cuda
//
// Expected: the tiled kernels and dq16_* bit-identical to their twins;
// cuBLAS within its float32 accumulation's bound of the twin's F16 inputs.

// gpuPrefillShapes are (n-multiplier, rows, cols) with rows and columns
// not multiples of the 64 × 64 tile, and one large enough to make many
// blocks.
var gpuPrefillShapes = [][3]int{{3, 70, 17}, {5, 129, 130}, {40, 1000, 77}}

func gpuPrefillN(wt WeightType, mult int) int {
	if wt.BlockSize() == 1 {
		return 32*mult + 5 // a short last k step
	}
	return max(wt.BlockSize(), 32) * mult
}

func TestGPUMatMulTiled(t *testing.T) {
	c, k := gpuKernels(t)
	if k.blas != nil {
		t.Fatal("gpuKernels loaded cuBLAS")
	}
	r := rand.New(rand.NewPCG(101, 102))
	for _, wt := range WeightTypes() {
		for _, s := range gpuPrefillShapes {
			n, rows, cols := gpuPrefillN(wt, s[0]), s[1], s[2]
			w, _ := randWeights(r, wt, n, rows)
			x := randFloats(r, cols*n, 2)
			want := make([]float32, rows*cols)
			mtTwin(wt, w, x, want, n, rows, cols)
			got := make([]float32, rows*cols)
			gpuDo(t, c, func(g *gpuBufs) {
				dy := g.f32(got)
				must(t, k.MatMul(g.s, wt, g.upload(w), g.f32(x), dy, n, rows, cols))
				g.download(got, dy)
			})
			checkULP(t, fmt.Sprintf("%s n=%d rows=%d cols=%d", wt.TiledKernel(), n, rows, cols), got, want, 0)
		}
	}
}

func TestGPUDequantF16(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(103, 104))
	for _, wt := range WeightTypes() {
		if _, ok := wt.DequantF16Kernel(); !ok {
			continue
		}
		n, rows := gpuPrefillN(wt, 8), 300
		w, _ := randWeights(r, wt, n, rows)
		want := dq16Twin(wt, w, n, rows)
		got := make([]byte, 2*rows*n)
		gpuDo(t, c, func(g *gpuBufs) {
			dh := g.upload(got)
			l, err := DequantF16Launch(wt, uint64(g.upload(w)), uint64(dh), n, rows)
			must(t, k.run(g.s, l, err))
			g.downloadBytes(got, dh)
		})
		for i := range want {
			if h := le16(got[2*i:]); h != want[i] {
				t.Errorf("dq16 %v: h[%d] = %#04x, twin %#04x", wt, i, h, want[i])
				break
			}
		}
	}
}

func TestGPUCUBLAS(t *testing.T) {
	c, k := gpuKernels(t)
	lib, err := LoadCUBLAS()
	if errors.Is(err, ErrNoCUBLAS) {
		t.Skipf("skipping: %v", err)
	}
	must(t, err)
	must(t, c.Do(func() error { return k.UseCUBLAS(lib) }))
	t.Cleanup(func() { c.Do(func() error { k.Unload(); return nil }) })
	t.Logf("%s: %s", lib.Path, k.MatMulPath(512))
	r := rand.New(rand.NewPCG(105, 106))
	for _, wt := range WeightTypes() {
		for _, s := range gpuPrefillShapes {
			n, rows, cols := gpuPrefillN(wt, s[0]), s[1], s[2]
			w, _ := randWeights(r, wt, n, rows)
			x := randFloats(r, cols*n, 2)
			got := make([]float32, rows*cols)
			gpuDo(t, c, func(g *gpuBufs) {
				dy := g.f32(got)
				must(t, k.MatMul(g.s, wt, g.upload(w), g.f32(x), dy, n, rows, cols))
				g.download(got, dy)
			})
			ref := blasReference(wt, w, x, n, rows)
			checkTiledBound(t, fmt.Sprintf("cuBLAS %v n=%d rows=%d cols=%d", wt, n, rows, cols), got, func(c, rr int) (float64, float64) {
				v, b := ref(c, rr) // b = 2⁻²³·Σ|w·x|
				return v, b + tiledBound(n, b*0x1p23)
			}, rows, cols)
		}
	}
}
