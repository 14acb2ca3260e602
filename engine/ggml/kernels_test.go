package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fp16Fields lists the byte offsets of the fp16 scale fields of each block
// format; randomBlocks keeps them finite and everything else random.
var fp16Fields = map[Type][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0}, IQ4_NL: {0},
	Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
}

// randomRow returns n elements of type t: random bits in every quant field
// (so extreme values such as -128 in Q8_0 occur) and scales drawn from
// [-1, 1]·2^±4; float types get normal random values.
func randomRow(r *rand.Rand, t Type, n int) []byte {
	b := make([]byte, t.RowSize(n))
	switch t {
	case F32, F16, BF16:
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		QuantizeRow(t, x, b)
		return b
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	ts := t.TypeSize()
	for blk := 0; blk < len(b)/ts; blk++ {
		for _, off := range fp16Fields[t] {
			s := float32((r.Float64()*2 - 1) * math.Pow(2, float64(r.IntN(9)-4)))
			put16(b[blk*ts+off:], FP32ToFP16(s))
		}
	}
	return b
}

// randomActivation quantizes normal random values to the activation type.
func randomActivation(r *rand.Rand, t Type, n int) []byte {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	b := make([]byte, t.RowSize(n))
	QuantizeActivation(t, x, b)
	return b
}

// absDot is Σ|w_i·x_i| over the dequantized rows: the scale of the
// rounding error of any summation order.
func absDot(t Type, n int, w, x []byte) float64 {
	wd, xd := make([]float32, n), make([]float32, n)
	DequantizeRow(t, w, wd)
	DequantizeRow(t.VecDotType(), x, xd)
	var s float64
	for i := range wd {
		s += math.Abs(float64(wd[i]) * float64(xd[i]))
	}
	if t.VecDotType() == Q8_1 { // the min term m·s of Q4_1/Q5_1
		for b := 0; b < n/32; b++ {
			s += math.Abs(float64(f16(w[t.TypeSize()*b+2:]) * f16(x[36*b+2:])))
		}
	}
	return s
}

func kernelSizes(t Type) []int {
	if t.BlockSize() == 1 {
		return []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000}
	}
	var ns []int
	for _, k := range []int{1, 2, 3, 5, 7, 8, 9, 31, 64, 65} {
		ns = append(ns, k*t.BlockSize())
	}
	return ns
}

// withGuard copies b into a larger buffer whose tail is poison (0x7f:
// huge values in every format) and returns the exact-length slice.
func withGuard(b []byte) []byte {
	g := make([]byte, len(b)+64)
	copy(g, b)
	for i := len(b); i < len(g); i++ {
		g[i] = 0x7f
	}
	return g[:len(b)]
}

// TestKernelsMatchGo compares the kernels in use (assembly where the CPU
// has it) with the plain-Go twins on random rows with odd block counts,
// poisoned bytes after every input and guard cells after the output.
func TestKernelsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for tp := range goDot {
		if goDot[tp] == nil {
			continue
		}
		tp := Type(tp)
		t.Run(tp.String(), func(t *testing.T) {
			for _, n := range kernelSizes(tp) {
				const rows = 5
				rs := tp.RowSize(n)
				w := withGuard(randomRow(r, tp, n*rows))
				x := withGuard(randomActivation(r, tp.VecDotType(), n))
				dst := make([]float32, rows+3)
				for i := range dst {
					dst[i] = -12345
				}
				MatVec(tp, n, w, x, dst[:rows])
				for i := rows; i < len(dst); i++ {
					if dst[i] != -12345 {
						t.Fatalf("n=%d: MatVec wrote past dst", n)
					}
				}
				for row := 0; row < rows; row++ {
					wr := w[row*rs : (row+1)*rs]
					want := goDot[tp](n, wr, x)
					tol := 2e-6*absDot(tp, n, wr, x) + 1e-30
					got := VecDot(tp, n, wr, x)
					if math.Abs(float64(got-want)) > tol || math.Abs(float64(dst[row]-want)) > tol {
						t.Fatalf("n=%d row %d: VecDot %v, MatVec %v, Go %v (tol %g)", n, row, got, dst[row], want, tol)
					}
					// A row's result must not depend on which rows it is
					// computed with (multi-row kernels, thread splits).
					if math.Float32bits(got) != math.Float32bits(dst[row]) {
						t.Fatalf("n=%d row %d: VecDot %v and MatVec %v differ in bits", n, row, got, dst[row])
					}
				}
			}
		})
	}
}

// TestVecDotMatchesFloat checks the plain-Go kernels against a float64 dot
// product of the dequantized operands.
func TestVecDotMatchesFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for tp := range goDot {
		if goDot[tp] == nil {
			continue
		}
		tp := Type(tp)
		n := 4 * QK_K
		w := randomRow(r, tp, n)
		x := randomActivation(r, tp.VecDotType(), n)
		wd, xd := make([]float32, n), make([]float32, n)
		DequantizeRow(tp, w, wd)
		DequantizeRow(tp.VecDotType(), x, xd)
		var want float64
		for i := range wd {
			want += float64(wd[i]) * float64(xd[i])
		}
		tol := 1e-5 * absDot(tp, n, w, x)
		if tp.VecDotType() == Q8_1 { // s = fp16(d·Σq) is rounded
			tol = 1e-3 * absDot(tp, n, w, x)
		}
		if got := goDot[tp](n, w, x); math.Abs(float64(got)-want) > tol {
			t.Errorf("%v: Go dot %v, float64 %v (tol %g)", tp, got, want, tol)
		}
	}
}

// TestActivationVsReference: the ggml-cpu activation quantizer and the
// reference one agree up to rare one-step rounding differences.
func TestActivationVsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tp := range []Type{Q8_0, Q8_1, Q8_K} {
		n := 64 * QK_K
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		a, b := make([]byte, tp.RowSize(n)), make([]byte, tp.RowSize(n))
		QuantizeActivation(tp, x, a)
		QuantizeRow(tp, x, b)
		ad, bd := make([]float32, n), make([]float32, n)
		DequantizeRow(tp, a, ad)
		DequantizeRow(tp, b, bd)
		diff := 0
		for i := range ad {
			if ad[i] != bd[i] {
				diff++
			}
		}
		if diff > n/1000 {
			t.Errorf("%v: %d of %d values differ", tp, diff, n)
		}
		if rel := relErr(x, ad); rel > 0.01 {
			t.Errorf("%v: relative RMS error %.4f", tp, rel)
		}
	}
}

func relErr(x, y []float32) float64 {
	var e, s float64
	for i := range x {
		e += float64(x[i]-y[i]) * float64(x[i]-y[i])
		s += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(e / s)
}

// TestRoundTripBounds checks dequantize(quantize(x)) error per type on
// Gaussian data and exact round trips of the float types.
func TestRoundTripBounds(t *testing.T) {
	bound := map[Type]float64{
		F32: 0, F16: 1e-3, BF16: 8e-3, Q8_0: 0.01, Q8_1: 0.01, Q8_K: 0.01, Q6_K: 0.03,
		Q5_0: 0.06, Q5_1: 0.06, Q5_K: 0.06, Q4_0: 0.12, Q4_1: 0.12, Q4_K: 0.12, IQ4_NL: 0.12,
		Q3_K: 0.25, Q2_K: 0.45,
	}
	r := rand.New(rand.NewPCG(13, 14))
	n := 8 * QK_K
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for tp, b := range bound {
		q := make([]byte, tp.RowSize(n))
		QuantizeRow(tp, x, q)
		y := make([]float32, n)
		DequantizeRow(tp, q, y)
		if e := relErr(x, y); e > b || (b == 0 && e != 0) {
			t.Errorf("%v: relative RMS error %.5f > %.5f", tp, e, b)
		}
	}
}

var benchSink float32

// BenchmarkMatVec measures single-threaded matrix-vector products whose
// weights (64 MiB rotating set) do not fit in cache; GB/s is weight bytes.
func BenchmarkMatVec(b *testing.B) {
	for _, tp := range []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		for _, shape := range [][2]int{{2048, 2048}, {5632, 2048}} {
			rows, n := shape[0], shape[1]
			b.Run(fmt.Sprintf("%v/%dx%d", tp, rows, n), func(b *testing.B) {
				benchMatVec(b, tp, rows, n)
			})
		}
	}
}

func benchMatVec(b *testing.B, tp Type, rows, n int) {
	ws, x := benchWeights(tp, rows, n)
	dst := make([]float32, rows)
	b.SetBytes(int64(len(ws[0])))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MatVec(tp, n, ws[i%len(ws)], x, dst)
	}
	benchSink = dst[0]
}

// benchWeights quantizes one matrix of weights distributed like a trained
// model's (N(0, 0.02²): narrow scale range) and copies it until the set
// exceeds 64 MiB, so every product streams its weights from DRAM.
func benchWeights(tp Type, rows, n int) ([][]byte, []byte) {
	r := rand.New(rand.NewPCG(1, 1))
	f := make([]float32, rows*n)
	for i := range f {
		f[i] = float32(r.NormFloat64() * 0.02)
	}
	w := make([]byte, tp.RowSize(rows*n))
	QuantizeRow(tp, f, w)
	ws := make([][]byte, max(1, (64<<20)/len(w)+1))
	for i := range ws {
		ws[i] = append([]byte(nil), w...)
	}
	return ws, randomActivation(r, tp.VecDotType(), n)
}

// BenchmarkMatVecHot is BenchmarkMatVec with a 256x2048 matrix that stays
// in cache: the compute ceiling of each kernel.
func BenchmarkMatVecHot(b *testing.B) {
	for _, tp := range []Type{F32, F16, Q8_0, Q4_0, IQ4_NL, Q4_K, Q5_K, Q6_K, Q3_K, Q2_K} {
		b.Run(tp.String(), func(b *testing.B) {
			ws, x := benchWeights(tp, 256, 2048)
			dst := make([]float32, 256)
			b.SetBytes(int64(len(ws[0])))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				MatVec(tp, 2048, ws[0], x, dst)
			}
		})
	}
}

// TestKernelsDoNotAllocate: a decode step allocates nothing, so neither may
// VecDot, MatVec or QuantizeActivation once warm.
func TestKernelsDoNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for tp := range goDot {
		if goDot[tp] == nil {
			continue
		}
		tp := Type(tp)
		n := 2 * QK_K
		w := randomRow(r, tp, 6*n)
		f := make([]float32, n)
		x := make([]byte, tp.VecDotType().RowSize(n))
		dst := make([]float32, 6)
		allocs := testing.AllocsPerRun(20, func() {
			QuantizeActivation(tp.VecDotType(), f, x)
			MatVec(tp, n, w, x, dst)
			dst[0] += VecDot(tp, n, w[:tp.RowSize(n)], x)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per product", tp, allocs)
		}
	}
}

// FuzzKernels feeds arbitrary bytes as weight blocks (scales forced finite)
// to the kernels in use and to the plain-Go twins.
func FuzzKernels(f *testing.F) {
	f.Add(uint8(Q4_0), []byte("seed"), int64(1))
	f.Add(uint8(Q6_K), []byte{0xff, 0x80, 0x7f, 0}, int64(2))
	f.Fuzz(func(t *testing.T, typ uint8, data []byte, seed int64) {
		tp := Type(typ % 32)
		if goDot[tp] == nil || len(data) == 0 {
			return
		}
		r := rand.New(rand.NewPCG(uint64(seed), 0))
		n := tp.BlockSize() * (1 + int(data[0])%9)
		if tp.BlockSize() == 1 {
			n = 1 + int(data[0])
		}
		w := randomRow(r, tp, n)
		for i := range w {
			w[i] ^= data[i%len(data)]
		}
		if _, ok := fp16Fields[tp]; !ok || tp.BlockSize() == 1 {
			w = randomRow(r, tp, n) // float rows: keep values finite
		}
		ts := tp.TypeSize()
		for b := 0; b < len(w)/ts; b++ {
			for _, off := range fp16Fields[tp] {
				put16(w[b*ts+off:], le16(w[b*ts+off:])&0xbbff) // exponent < 31
			}
		}
		x := randomActivation(r, tp.VecDotType(), n)
		want, got := goDot[tp](n, w, x), VecDot(tp, n, w, x)
		if tol := 2e-6*absDot(tp, n, w, x) + 1e-30; math.Abs(float64(got-want)) > tol {
			t.Fatalf("%v n=%d: kernel %v, Go %v", tp, n, got, want)
		}
	})
}

// BenchmarkQuantizeActivation: the per-product cost of preparing a 4096
// activation row.
func BenchmarkQuantizeActivation(b *testing.B) {
	for _, tp := range []Type{Q8_0, Q8_1, Q8_K, F16} {
		b.Run(tp.String(), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := make([]float32, 4096)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			q := make([]byte, tp.RowSize(len(x)))
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				QuantizeActivation(tp, x, q)
			}
		})
	}
}

// TestActivationKernelsMatchGo: the assembly activation quantizers are
// byte-identical to their Go twins, zero blocks and extremes included.
func TestActivationKernelsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{32, 64, 96, 320, 4096} {
		x := make([]float32, n+5)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
		}
		x[3] = 1e30       // overflows fp16 scales
		x[n-1] = 65519.99 // rounds to the largest half
		if n >= 96 {
			clear(x[32:64]) // an all-zero block
			x[70] = -1e-30  // tiny next to zeros
		}
		for _, ws := range []bool{false, true} {
			bs := 34
			if ws {
				bs = 36
			}
			a, b := make([]byte, bs*n/32), make([]byte, bs*n/32)
			quantActQ8Rows(x[:n], a, ws)
			quantActQ8Go(x[:n], b, ws)
			if bad, first := diffBytes(a, b); bad > 0 {
				t.Errorf("n=%d q8 sum=%v: %d bytes differ, first at %d", n, ws, bad, first)
			}
		}
		a, b := make([]byte, 2*(n+5)), make([]byte, 2*(n+5))
		fp32ToFP16Row(x, a)
		fp32ToFP16Go(x, b)
		if bad, first := diffBytes(a, b); bad > 0 {
			t.Errorf("n=%d f16: %d bytes differ, first at %d", n+5, bad, first)
		}
	}
}

func diffBytes(a, b []byte) (bad, first int) {
	first = -1
	for i := range a {
		if a[i] != b[i] {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	return bad, first
}

// BenchmarkMatMul: a 32-token prefill over a 2048x2048 matrix, bytes
// counted once per weight (as read from memory).
func BenchmarkMatMul(b *testing.B) {
	for _, tp := range []Type{Q8_0, Q4_0, Q4_K} {
		b.Run(tp.String(), func(b *testing.B) {
			ws, x1 := benchWeights(tp, 2048, 2048)
			var x []byte
			for c := 0; c < 32; c++ {
				x = append(x, x1...)
			}
			dst := make([]float32, 2048*32)
			b.SetBytes(int64(len(ws[0])))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				MatMul(tp, 2048, ws[i%len(ws)], 2048, x, 32, dst)
			}
		})
	}
}
