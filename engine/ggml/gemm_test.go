package ggml

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// lanesTwin maps the types with matrix kernels to their bit-exact twins.
var lanesTwin = map[Type]dotFunc{Q4_0: dotQ4_0Lanes, Q8_0: dotQ8_0Lanes}

// kLanesTwin maps the K-quant types to the twins of their assembly chain.
var kLanesTwin = map[Type]dotFunc{Q2_K: dotQ2_KLanes, Q3_K: dotQ3_KLanes, Q4_K: dotQ4_KLanes, Q5_K: dotQ5_KLanes, Q6_K: dotQ6_KLanes}

// TestLanesTwinsMatchGo: the lane twins compute the same dot product as
// the reference plain-Go kernels up to float summation order.
func TestLanesTwinsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	twins := map[Type]dotFunc{}
	for _, m := range []map[Type]dotFunc{lanesTwin, kLanesTwin} {
		for tp, f := range m {
			twins[tp] = f
		}
	}
	for tp, twin := range twins {
		for _, n := range kernelSizes(tp) {
			w, x := randomRow(r, tp, n), randomActivation(r, tp.VecDotType(), n)
			got, want := twin(n, w, x), goDot[tp](n, w, x)
			if tol := 2e-6*absDot(tp, n, w, x) + 1e-30; math.Abs(float64(got-want)) > tol {
				t.Errorf("%v n=%d: lanes %v, plain Go %v", tp, n, got, want)
			}
		}
	}
}

// gemmCase is a random matrix and a batch of activation columns.
type gemmCase struct {
	n, rows, cols int
	w, x          []byte
}

func newGemmCase(r *rand.Rand, tp Type, n, rows, cols int) gemmCase {
	g := gemmCase{n: n, rows: rows, cols: cols}
	g.w = withGuard(randomRow(r, tp, n*rows))
	for c := 0; c < cols; c++ {
		g.x = append(g.x, randomActivation(r, tp.VecDotType(), n)...)
	}
	g.x = withGuard(g.x)
	return g
}

// want is the twin's value of every (row, column) pair, dst[c*ldd+r].
func (g gemmCase) want(tp Type, twin dotFunc, ldd int) []float32 {
	out := make([]float32, g.cols*ldd)
	rs, xs := tp.RowSize(g.n), tp.VecDotType().RowSize(g.n)
	for c := 0; c < g.cols; c++ {
		for r := 0; r < g.rows; r++ {
			out[c*ldd+r] = twin(g.n, g.w[r*rs:(r+1)*rs], g.x[c*xs:(c+1)*xs])
		}
	}
	return out
}

// checkGemm compares got with want bit for bit, including the guard cells
// between columns (ldd > rows), which must stay untouched (NaN poison).
func checkGemm(t *testing.T, name string, got, want []float32, rows, ldd int) {
	t.Helper()
	for i := range got {
		r := i % ldd
		if r >= rows {
			if !math.IsNaN(float64(got[i])) {
				t.Fatalf("%s: guard cell %d overwritten", name, i)
			}
			continue
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: col %d row %d: kernel %v, twin %v", name, i/ldd, r, got[i], want[i])
		}
	}
}

func nanSlice(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.NaN())
	}
	return s
}

// TestMatMulActMatchesLanes: the kernels in use (tiles, strips and single
// rows, chosen by shape) equal the lane twins bit for bit for every shape
// of tile remainder, with guard cells between output columns.
func TestMatMulActMatchesLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for tp, twin := range lanesTwin {
		for _, shape := range [][3]int{{32, 1, 1}, {64, 5, 3}, {96, 4, 4}, {256, 13, 9}, {320, 16, 8}, {2048, 9, 5}, {160, 33, 17}} {
			n, rows, cols := shape[0], shape[1], shape[2]
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			ldd := rows + 3
			got := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, got, ldd)
			name := fmt.Sprintf("%v %s n=%d %dx%d", tp, Accel(), n, rows, cols)
			if gemmImpl[tp] == nil { // plain-Go build: reference kernels
				for i := range got {
					if i%ldd < rows {
						want := g.want(tp, goDot[tp], ldd)
						if math.Abs(float64(got[i]-want[i])) > 1e-3*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("%s: %v vs %v", name, got[i], want[i])
						}
					}
				}
				continue
			}
			checkGemm(t, name, got, g.want(tp, twin, ldd), rows, ldd)
		}
	}
}

// kGemmShapes are (n, rows, cols) for the K-quant matrix kernels: odd row
// counts (strip and single-row tails), column counts around the tile
// width, one to nine super-blocks.
var kGemmShapes = [][3]int{{256, 1, 1}, {256, 4, 1}, {512, 5, 3}, {768, 7, 8}, {256, 13, 9},
	{1024, 3, 16}, {2304, 9, 17}, {512, 33, 7}, {256, 8, 24}, {512, 6, 4}, {256, 3, 5},
	{768, 2, 12}, {256, 5, 15}}

// TestMatMulActK: for the K-quant types every value of MatMulAct (tiles and
// strips where installed) equals the MatVec of its column bit for bit and
// the plain-Go dot within rounding; guard cells between output columns and
// poison after the operands stay out of the results.
func TestMatMulActK(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, tp := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		for _, shape := range kGemmShapes {
			n, rows, cols := shape[0], shape[1], shape[2]
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			ldd := rows + 3
			got := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, got, ldd)
			name := fmt.Sprintf("%v %s n=%d %dx%d", tp, Accel(), n, rows, cols)
			col := make([]float32, rows)
			rs := tp.RowSize(n)
			want := nanSlice(cols * ldd)
			for c := 0; c < cols; c++ {
				MatVec(tp, n, g.w, a.Column(c), col)
				copy(want[c*ldd:], col)
				for i, v := range col {
					ref := goDot[tp](n, g.w[i*rs:(i+1)*rs], a.Column(c))
					if tol := 2e-6*absDot(tp, n, g.w[i*rs:(i+1)*rs], a.Column(c)) + 1e-30; math.Abs(float64(v-ref)) > tol {
						t.Fatalf("%s: col %d row %d: MatVec %v, plain Go %v", name, c, i, v, ref)
					}
				}
			}
			checkGemm(t, name, got, want, rows, ldd)
		}
	}
}

// TestMatMulMatchesMatVec: the chunked MatMul gives every column exactly
// the MatVec result.
func TestMatMulMatchesMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, tp := range []Type{F32, Q4_0, Q8_0, Q4_K, Q6_K, IQ4_NL} {
		n, rows, cols := 512, 301, 7
		w := randomRow(r, tp, n*rows)
		vt := tp.VecDotType()
		var x []byte
		for c := 0; c < cols; c++ {
			x = append(x, randomActivation(r, vt, n)...)
		}
		got := make([]float32, rows*cols)
		MatMul(tp, n, w, rows, x, cols, got)
		want := make([]float32, rows)
		for c := 0; c < cols; c++ {
			MatVec(tp, n, w, x[c*vt.RowSize(n):(c+1)*vt.RowSize(n)], want)
			for i := range want {
				if math.Float32bits(got[c*rows+i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v col %d row %d: MatMul %v, MatVec %v", tp, c, i, got[c*rows+i], want[i])
				}
			}
		}
	}
}

// TestMatMulActFloat: the float matrix kernels give every pair exactly the
// plain-Go twin's dot (the same order as the single-row kernels).
func TestMatMulActFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, tp := range []Type{F32, F16, BF16} {
		for _, shape := range [][3]int{{32, 3, 4}, {64, 7, 9}, {96, 6, 8}, {288, 13, 5}, {100, 4, 4}, {1024, 3, 1}, {64, 9, 1}, {96, 8, 2}, {100, 5, 1}, {2816, 9, 7},
			{2048, 7, 11}, {64, 10, 13}, {4096, 4, 8}, {32, 2, 4}, {2080, 5, 6}} {
			n, rows, cols := shape[0], shape[1], shape[2]
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			ldd := rows + 1
			got := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, got, ldd)
			checkGemm(t, fmt.Sprintf("%v n=%d %dx%d", tp, n, rows, cols), got, g.want(tp, goDot[tp], ldd), rows, ldd)
		}
	}
}

// BenchmarkMatMulAct measures the installed matrix kernels on a 64x2048
// matrix (a task's chunk in prefill) that stays in cache against 64 columns (prefill): GMAC/s counts
// multiply-adds per second of the benchmark thread's CPU time.
func BenchmarkMatMulAct(b *testing.B) {
	for _, tp := range []Type{F32, F16, Q8_0, Q4_0, Q4_K, Q6_K} {
		b.Run(tp.String(), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			n, rows, cols := 2048, 64, 64
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			dst := make([]float32, rows*cols)
			ns := cpuTimed(b, func() { MatMulAct(tp, n, g.w, rows, &a, dst, rows) })
			b.ReportMetric(float64(n*rows*cols)/ns, "GMAC/s")
		})
	}
}

// TestActFillRanges: preparing the columns in ranges from several
// goroutines (as the forward pass does for long prompts) gives the same
// products as one Prepare.
func TestActFillRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, tp := range []Type{Q4_0, Q8_0, F16, F32, Q4_K} {
		n, rows, cols := 256, 12, 21
		g := newGemmCase(r, tp, n, rows, cols)
		var whole, parts Act
		whole.Prepare(tp, n, g.x, cols)
		parts.Begin(tp, n, g.x, cols)
		var wg sync.WaitGroup
		for c0 := 0; c0 < cols; c0 += 5 {
			wg.Add(1)
			go func(c0 int) {
				defer wg.Done()
				parts.Fill(c0, min(c0+5, cols))
			}(c0)
		}
		wg.Wait()
		want, got := make([]float32, rows*cols), make([]float32, rows*cols)
		MatMulAct(tp, n, g.w, rows, &whole, want, rows)
		MatMulAct(tp, n, g.w, rows, &parts, got, rows)
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("%v: value %d: ranges %v, whole %v", tp, i, got[i], want[i])
		}
	}
}

// BenchmarkMatMulActF16Shapes runs TinyLlama's F16 matrix shapes the way a
// prompt of 128 tokens does on one thread: the whole matrix in 64-row
// chunks against 128 columns (n = 2048 takes the float32 columns, 5632
// the F16 ones: see f16ColsL1).
func BenchmarkMatMulActF16Shapes(b *testing.B) {
	for _, sh := range [][2]int{{2048, 5632}, {5632, 2048}, {2048, 2048}} {
		n, rows := sh[0], sh[1]
		b.Run(fmt.Sprintf("%dx%d", rows, n), func(b *testing.B) {
			const chunk, cols = 64, 128
			r := rand.New(rand.NewPCG(1, 1))
			g := newGemmCase(r, F16, n, rows, cols)
			var a Act
			a.Prepare(F16, n, g.x, cols)
			dst := make([]float32, rows*cols)
			rs := F16.RowSize(n)
			ns := cpuTimed(b, func() {
				for r0 := 0; r0 < rows; r0 += chunk {
					MatMulAct(F16, n, g.w[r0*rs:(r0+chunk)*rs], chunk, &a, dst[r0:], rows)
				}
			})
			b.ReportMetric(float64(n*rows*cols)/ns, "GMAC/s")
		})
	}
}

// TestBlockSums: quadSums and blockSum (eight bytes at a time) against
// the int8 values summed one by one, for random blocks and the extremes
// (all −128, all 127, alternating), where a carry between lanes would
// show.
func TestBlockSums(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 8))
	blocks := [][]byte{bytes.Repeat([]byte{0x80}, 32), bytes.Repeat([]byte{0x7f}, 32), bytes.Repeat([]byte{0x80, 0x7f}, 16), make([]byte, 32)}
	for i := 0; i < 1000; i++ {
		q := make([]byte, 32)
		for j := range q {
			q[j] = byte(r.IntN(256))
		}
		blocks = append(blocks, q)
	}
	for _, q := range blocks {
		var want [8]int32
		total := int32(0)
		for j, v := range q {
			want[j/4] += int32(int8(v))
			total += int32(int8(v))
		}
		if got := quadSums(q); got != want {
			t.Fatalf("quadSums(% x) = %v, want %v", q, got, want)
		}
		if got := blockSum(q); got != total {
			t.Fatalf("blockSum(% x) = %d, want %d", q, got, total)
		}
	}
}

// TestFillFrom: Act.FillFrom writes the bytes and operands of
// QuantizeActivation followed by Fill, for Q4_0 and Q8_0 (fused in one
// pass where the tile layout's operands alone are asked for, below the
// AMX tiles), a K-quant and F16, one column range at a time as the model's
// row split does; and MatMulAct over the result is the same.
func TestFillFrom(t *testing.T) {
	if quantTile == nil || !b16On[Q4_0] {
		t.Log("no fused kernel or no tile layout on this CPU: FillFrom checked on its two-pass path only")
	}
	r := rand.New(rand.NewPCG(40, 2))
	for _, tp := range []Type{Q4_0, Q8_0, Q4_K, F16} {
		for _, n := range []int{256, 2048} {
			for _, cols := range []int{1, 2, 3, 17} {
				x := make([]float32, n*cols)
				for i := range x {
					x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(9)-4)))
				}
				x[5] = 0
				clear(x[n-32 : n]) // an all-zero block: d = 0
				vt := tp.VecDotType()
				xs := vt.RowSize(n)
				for _, tiles := range []bool{false, true} {
					var want, got Act
					wb, gb := make([]byte, xs*cols), make([]byte, xs*cols)
					for c := 0; c < cols; c++ {
						QuantizeActivation(vt, x[c*n:(c+1)*n], wb[c*xs:(c+1)*xs])
					}
					begin := func(a *Act, b []byte) {
						if tiles {
							a.BeginTiles(tp, n, b, cols)
						} else {
							a.Begin(tp, n, b, cols)
						}
					}
					begin(&want, wb)
					want.Fill(0, cols)
					begin(&got, gb)
					got.FillFrom(x, 0, 1)
					got.FillFrom(x, 1, cols)
					name := fmt.Sprintf("%v n=%d cols=%d tiles=%v", tp, n, cols, tiles)
					if !bytes.Equal(gb, wb) {
						t.Fatalf("%s: quantized bytes differ", name)
					}
					if got.b16 {
						nb := n / 32
						for c := 0; c < cols; c++ {
							for b := 0; b < nb; b++ {
								i := got.bIndex(c, b)
								if got.bstep != want.bstep || got.bstep != map[bool]int{true: 1, false: 16}[cols == 1] {
									t.Fatalf("%s: operands %d and %d apart", name, got.bstep, want.bstep)
								}
								if math.Float32bits(got.bdx[i]) != math.Float32bits(want.bdx[i]) || got.bcorr[i] != want.bcorr[i] {
									t.Fatalf("%s: column %d block %d: d_x %v corr %d, want %v %d", name, c, b, got.bdx[i], got.bcorr[i], want.bdx[i], want.bcorr[i])
								}
							}
						}
					}
					rows := 24
					var w []byte
					for range rows {
						w = append(w, randomRow(r, tp, n)...)
					}
					dw, dg := nanSlice(cols*rows), nanSlice(cols*rows)
					MatMulAct(tp, n, w, rows, &want, dw, rows)
					MatMulAct(tp, n, w, rows, &got, dg, rows)
					for i := range dw {
						if math.Float32bits(dw[i]) != math.Float32bits(dg[i]) {
							t.Fatalf("%s: product %d is %v, want %v", name, i, dg[i], dw[i])
						}
					}
				}
			}
		}
	}
}

// passCopies runs the decode kernel over every copy of a wlen-byte rows×n
// matrix of tp in set, into dst: MatMulActRows4 where the copies are
// interleaved (il), MatMulAct where they are row-major. The streaming
// benchmarks share it.
func passCopies(tp Type, n, rows int, set []byte, wlen int, a *Act, dst []float32, il bool) {
	for off := 0; off < len(set); off += wlen {
		if il {
			MatMulActRows4(tp, n, set[off:off+wlen], rows, a, dst, rows)
		} else {
			MatMulAct(tp, n, set[off:off+wlen], rows, a, dst, rows)
		}
	}
}
