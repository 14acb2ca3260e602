//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// runShimTiled runs t's tiled kernel in the shim on MatMulLaunch's grid
// and block for a prefill-sized cols and returns Y.
func runShimTiled(t *testing.T, h string, wt WeightType, w []byte, x []float32, n, rows, cols int) []float32 {
	t.Helper()
	l, err := MatMulLaunch(32, wt, 0, 0, 0, n, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	if l.Kernel != wt.TiledKernel() {
		t.Fatalf("cols=%d launches %s, not the tiled kernel", cols, l.Kernel)
	}
	out := runShim(t, h, l.Kernel, l.Grid, l.Block, w, clone32(x), make([]byte, 4*rows*cols), n, rows, cols)
	return bytesF32(out[2])
}

// TestShimTiled: matmul_tiled.cu's kernel for every weight type, run by
// the shim at warp sizes 32 and 64, equals the twin bit for bit; rows and
// columns not multiples of the 64 × 64 tile (17 to 130 columns), float
// rows whose last k step is short.
func TestShimTiled(t *testing.T) {
	r := rand.New(rand.NewPCG(89, 90))
	for _, warp := range warps {
		h := shimHarness(t, warp)
		for _, wt := range WeightTypes() {
			shapes := [][2]int{{70, 17}, {5, 130}, {129, 65}}
			if warp == 64 {
				// The tiled kernel has no warp-level operation; one shape
				// checks it builds and runs with 64-lane warps.
				shapes = shapes[2:]
			}
			for _, shape := range shapes {
				rows, cols := shape[0], shape[1]
				n := tiledSizes(wt)[1] // several k steps (floats: a short last one)
				if rows > 64 && cols > 64 {
					n = tiledSizes(wt)[0] // fewer where the grid is largest
				}
				w, _ := randWeights(r, wt, n, rows)
				x := randFloats(r, cols*n, 2)
				want := make([]float32, rows*cols)
				mtTwin(wt, w, x, want, n, rows, cols)
				got := runShimTiled(t, h, wt, w, x, n, rows, cols)
				checkULP(t, fmt.Sprintf("%s n=%d rows=%d cols=%d warp=%d", wt.TiledKernel(), n, rows, cols, warp), got, want, 0)
			}
		}
	}
}

// TestShimTiledExtremeScales: rows of random bytes with fp16 scales at
// fp16's extremes (every code pattern; ±Inf and NaN sums) through the
// tiled kernels equal the twin bit for bit.
func TestShimTiledExtremeScales(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	h := shimHarness(t, 32)
	for _, wt := range WeightTypes() {
		if wt.BlockSize() == 1 {
			continue
		}
		n, rows, cols := 512, 7, 19
		w := tiledRandomBlocks(r, wt, rows*n/wt.BlockSize(), true)
		x := randFloats(r, cols*n, 4)
		want := make([]float32, rows*cols)
		mtTwin(wt, w, x, want, n, rows, cols)
		got := runShimTiled(t, h, wt, w, x, n, rows, cols)
		for i := range want {
			if !sameBits(got[i], want[i]) {
				t.Errorf("%v: y[%d] = %g, twin %g", wt, i, got[i], want[i])
				break
			}
		}
	}
}

// TestShimDequantF16: dq16_<type> for every type but F16, run by the shim,
// writes the twin's halves exactly, on quantizer-made rows and on blocks
// with extreme fp16 scales (products past ±65504 become ±Inf), with a grid
// smaller than the work so the grid-stride loop turns.
func TestShimDequantF16(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	h := shimHarness(t, 32)
	for _, wt := range WeightTypes() {
		if _, ok := wt.DequantF16Kernel(); !ok {
			continue
		}
		for _, extreme := range []bool{false, true} {
			const rows = 5
			n := tiledSizes(wt)[1]
			w, _ := randWeights(r, wt, n, rows)
			if extreme {
				if wt.BlockSize() == 1 {
					continue
				}
				w = tiledRandomBlocks(r, wt, rows*n/wt.BlockSize(), true)
			}
			want := dq16Twin(wt, w, n, rows)
			l, err := DequantF16Launch(wt, 0, 0, n, rows)
			if err != nil {
				t.Fatal(err)
			}
			l.Grid.X = 1 // fewer threads than items: every thread loops
			out := runShim(t, h, l.Kernel, l.Grid, l.Block, w, make([]byte, 2*rows*n), n, rows)
			for i := range want {
				if got := le16(out[1][2*i:]); got != want[i] {
					t.Errorf("%s extreme=%v: h[%d] = %#04x, twin %#04x", l.Kernel, extreme, i, got, want[i])
					break
				}
			}
		}
	}
}
