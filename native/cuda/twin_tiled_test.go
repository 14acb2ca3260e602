package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/ggml"
)

// tiledSizes are row lengths for the tiled kernel's tests: a short last
// k step for float types (n not a multiple of MT_K), several k steps and
// whole blocks otherwise.
func tiledSizes(t WeightType) []int {
	switch t.BlockSize() {
	case 1:
		return []int{13, 77, 1, 300}
	case 32:
		return []int{32, 5 * 32}
	case 64:
		return []int{64, 3 * 64}
	}
	return []int{256, 2 * 256}
}

// TestTiledWeightsAreGGMLs: the tiled kernels' weights (mm_blocks.h's
// decoders, through dequantRowTwin) are engine/ggml's DequantizeRow bit
// for bit, for every type, Q8_0 and Q4_0 included, on rows of random
// bytes with finite fp16 scales.
func TestTiledWeightsAreGGMLs(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for _, wt := range WeightTypes() {
		nb := 24
		row := tiledRandomBlocks(r, wt, nb, false)
		n := nb * wt.BlockSize()
		want := make([]float32, n)
		ggml.DequantizeRow(ggmlType[wt], row, want)
		got := make([]float32, n)
		dequantRowTwin(wt, row, got)
		for i := range want {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("%v: weight %d = %g, ggml %g", wt, i, got[i], want[i])
			}
		}
	}
}

// tiledRandomBlocks is randomBlocks for every type: float types get random
// finite values, Q8_0 and Q4_0 (not in scaleFields) their scale set like
// the unit types'.
func tiledRandomBlocks(r *rand.Rand, t WeightType, nb int, extreme bool) []byte {
	switch t {
	case WeightF32, WeightF16, WeightBF16:
		w, _ := randWeights(r, t, nb, 1)
		return w
	}
	b := randomBlocks(r, t, nb, extreme)
	if t == WeightQ8_0 || t == WeightQ4_0 {
		size := weightTypes[t].size
		for blk := range nb {
			h := uint16(r.Uint32()) &^ 0x4000
			if extreme {
				h = extremeHalves[r.IntN(len(extremeHalves))]
			}
			binary.LittleEndian.PutUint16(b[blk*size:], h)
		}
	}
	return b
}

// tiledBound is a rigorous bound on a float32 sum's rounding error when
// no term passes through more than k roundings: γ_k·Σ|w·x| with
// γ_k = k·u/(1 − k·u), u = 2⁻²⁴ (Higham, Accuracy and Stability, 3.1).
func tiledBound(k int, mag float64) float64 {
	ku := float64(k) * 0x1p-24
	return ku / (1 - ku) * mag
}

// TestTiledTwin: every output of the tiled twin within the bound of a
// chain of n fmaf (γ_n·Σ|w·x|) of the float64 product of the dequantized
// weights, odd shapes, no write past the end.
func TestTiledTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, wt := range WeightTypes() {
		for _, n := range tiledSizes(wt) {
			for _, rc := range [][2]int{{1, 17}, {5, 33}, {70, 20}} {
				rows, cols := rc[0], rc[1]
				w, deq := randWeights(r, wt, n, rows)
				x := randFloats(r, cols*n, 2)
				y := make([]float32, cols*rows+1)
				y[cols*rows] = 12345
				mtTwin(wt, w, x, y[:cols*rows], n, rows, cols)
				if y[cols*rows] != 12345 {
					t.Fatalf("%v: wrote past the end", wt)
				}
				name := fmt.Sprintf("%v n=%d rows=%d cols=%d", wt, n, rows, cols)
				checkTiledBound(t, name, y, func(c, rr int) (float64, float64) {
					want, mag := dot64(deq[rr*n:(rr+1)*n], x[c*n:(c+1)*n])
					return want, tiledBound(n, mag)
				}, rows, cols)
			}
		}
	}
}

// TestTiledAgainstMatvec: on the same operands the tiled kernel and the
// matvec differ only by summation order, so by at most the sum of their
// bounds: the tiled chain's γ_n, and the matvec's γ_(n+64) (a term passes
// through its 32-element block sum or unit sum, the lane's chain of at
// most n/32 blocks and the log₂W butterfly steps). The largest observed
// difference is logged as a fraction of that bound.
func TestTiledAgainstMatvec(t *testing.T) {
	r := rand.New(rand.NewPCG(85, 86))
	worst := 0.0
	for _, wt := range WeightTypes() {
		n := tiledSizes(wt)[1]
		const rows, cols = 9, 24
		w, deq := randWeights(r, wt, n, rows)
		x := randFloats(r, cols*n, 2)
		tiled := make([]float32, rows*cols)
		mtTwin(wt, w, x, tiled, n, rows, cols)
		for _, warp := range warps {
			mv := make([]float32, rows*cols)
			mmTwin(wt, warp, w, x, mv, n, rows, cols)
			for c := range cols {
				for rr := range rows {
					_, mag := dot64(deq[rr*n:(rr+1)*n], x[c*n:(c+1)*n])
					bound := tiledBound(n, mag) + tiledBound(n+64, mag)
					d := math.Abs(float64(tiled[c*rows+rr]) - float64(mv[c*rows+rr]))
					if d > bound {
						t.Fatalf("%v n=%d warp=%d: y[%d][%d] tiled %g, matvec %g: |Δ| %g > %g", wt, n, warp, c, rr,
							tiled[c*rows+rr], mv[c*rows+rr], d, bound)
					}
					if bound > 0 {
						worst = max(worst, d/bound)
					}
				}
			}
		}
	}
	t.Logf("largest |tiled − matvec| = %.3g of the bound", worst)
}

// TestMatMulDispatch: MatMulLaunch and Twin.MatMul take the same path for
// a column count: the matvec up to MatMulMatvecMaxCols, the tiled kernel
// beyond, at every warp size.
func TestMatMulDispatch(t *testing.T) {
	r := rand.New(rand.NewPCG(87, 88))
	const rows = 70
	w, _ := randWeights(r, WeightQ4_K, 256, rows)
	for _, warp := range warps {
		for _, cols := range []int{1, 8, 16, 17, 64, 130} {
			l, err := MatMulLaunch(warp, WeightQ4_K, 1, 2, 3, 256, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			x := randFloats(r, cols*256, 1)
			got, mv, mt := make([]float32, rows*cols), make([]float32, rows*cols), make([]float32, rows*cols)
			Twin{Warp: warp}.MatMul(WeightQ4_K, w, x, got, 256, rows, cols)
			mmTwin(WeightQ4_K, warp, w, x, mv, 256, rows, cols)
			mtTwin(WeightQ4_K, w, x, mt, 256, rows, cols)
			wantTwin, wantLaunch := mv, Launch{Kernel: "mm_q4_k", Grid: Dim3{X: ceilDiv(rows, mmWarps), Y: ceilDiv(cols, mmMaxCols)}, Block: Dim3{X: warp, Y: mmWarps}}
			if cols > 16 {
				wantTwin, wantLaunch = mt, Launch{Kernel: "mt_q4_k", Grid: Dim3{X: 2, Y: ceilDiv(cols, 64)}, Block: Dim3{X: 256}}
			}
			if l.Kernel != wantLaunch.Kernel || l.Grid != wantLaunch.Grid || l.Block != wantLaunch.Block {
				t.Errorf("warp=%d cols=%d: launch %s %v %v, want %s %v %v", warp, cols, l.Kernel, l.Grid, l.Block,
					wantLaunch.Kernel, wantLaunch.Grid, wantLaunch.Block)
			}
			if l.N != 6 || l.Params[3] != 256 || l.Params[4] != rows || l.Params[5] != uint64(cols) {
				t.Errorf("warp=%d cols=%d: parameters %v", warp, cols, l.Params[:l.N])
			}
			checkULP(t, fmt.Sprintf("Twin.MatMul warp=%d cols=%d", warp, cols), got, wantTwin, 0)
		}
	}
}

// TestTiledConstants: twin_tiled.go's launch constants are
// matmul_tiled.cu's #defines, and every weight type has a tiled kernel.
func TestTiledConstants(t *testing.T) {
	src, ok := KernelSource("matmul_tiled.cu")
	if !ok {
		t.Fatal("matmul_tiled.cu not embedded")
	}
	for name, v := range map[string]int{"MT_ROWS": mtRows, "MT_COLS": mtCols, "MT_THREADS": mtThreads, "MT_SUB": 4, "MT_K": 32} {
		if line := fmt.Sprintf("#define %s %d\n", name, v); !containsLine(src.Code, line) {
			t.Errorf("matmul_tiled.cu lacks %q", line)
		}
	}
	if mtThreads != (mtRows/4)*(mtCols/4) {
		t.Errorf("%d threads do not cover a %d × %d tile in 4 × 4 sub-tiles", mtThreads, mtRows, mtCols)
	}
	names := kernelNames(src)
	for _, wt := range WeightTypes() {
		found := false
		for _, k := range names {
			found = found || k == wt.TiledKernel()
		}
		if !found {
			t.Errorf("%v: no kernel %s in matmul_tiled.cu", wt, wt.TiledKernel())
		}
	}
}

func dot64(w, x []float32) (sum, mag float64) {
	for i := range w {
		p := float64(w[i]) * float64(x[i])
		sum += p
		mag += math.Abs(p)
	}
	return sum, mag
}

// checkTiledBound checks y[c·rows + r] against want(c, r) = (value, bound).
func checkTiledBound(t *testing.T, name string, y []float32, want func(c, r int) (float64, float64), rows, cols int) {
	t.Helper()
	for c := range cols {
		for rr := range rows {
			v, b := want(c, rr)
			if got := float64(y[c*rows+rr]); math.Abs(got-v) > b+1e-30 {
				t.Errorf("%s: y[%d][%d] = %g, want %g ± %g", name, c, rr, got, v, b)
				return
			}
		}
	}
}

// TestDequantF16Twin: dq16Twin's halves are engine/ggml's dequantized
// weights rounded by ggml's FP32ToFP16, for every type it serves.
func TestDequantF16Twin(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	for _, wt := range WeightTypes() {
		if _, ok := wt.DequantF16Kernel(); !ok {
			continue
		}
		n, rows := tiledSizes(wt)[1], 3
		w, deq := randWeights(r, wt, n, rows)
		got := dq16Twin(wt, w, n, rows)
		for i, v := range deq {
			if want := ggml.FP32ToFP16(v); got[i] != want {
				t.Fatalf("%v: h[%d] = %#04x, ggml %#04x (%g)", wt, i, got[i], want, v)
			}
		}
	}
}

// blasReference is the float64 product of the inputs GemmEx should get:
// the twin's F16 weights and F16-rounded activations (F32 weights: both
// as they are), with a bound of 2⁻²³·Σ|w·x|.
func blasReference(wt WeightType, w []byte, x []float32, n, rows int) func(c, r int) (float64, float64) {
	var wf []float32
	if wt == WeightF32 || wt == WeightF16 {
		wf = make([]float32, rows*n)
		for r := range rows {
			dequantRowTwin(wt, w[r*wt.RowBytes(n):], wf[r*n:(r+1)*n])
		}
	} else {
		for _, h := range dq16Twin(wt, w, n, rows) {
			wf = append(wf, halfToFloat(h))
		}
	}
	xr := x
	if wt != WeightF32 {
		xr = make([]float32, len(x))
		for i, v := range x {
			xr[i] = halfToFloat(floatToHalf(v))
		}
	}
	return func(c, r int) (float64, float64) {
		v, mag := dot64(wf[r*n:(r+1)*n], xr[c*n:(c+1)*n])
		return v, mag * 0x1p-23
	}
}
