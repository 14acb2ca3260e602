package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/ggml"
	"flowchat/engine/quant" // also registers Inferflow's formats as ggml types
)

// The CPU half of the kernel tests: each Go twin against engine/ggml's
// reference arithmetic (dequantize, then dot in float64; ggml's SoftMax,
// SiLUMul and ExpGGML; the engine's RMSNorm and RoPE formulas) on random
// data with odd sizes, for warp sizes 32 (NVIDIA) and 64 (AMD CDNA).
// engine/ggml never imports native/, so this test import makes no cycle.

var warps = []int{32, 64}

var ggmlType = map[WeightType]ggml.Type{
	WeightF32: ggml.F32, WeightF16: ggml.F16, WeightQ8_0: ggml.Q8_0, WeightQ4_0: ggml.Q4_0,
	WeightBF16: ggml.BF16, WeightQ4_1: ggml.Q4_1, WeightQ5_0: ggml.Q5_0, WeightQ5_1: ggml.Q5_1,
	WeightIQ4_NL: ggml.IQ4_NL, WeightQ2_K: ggml.Q2_K, WeightQ3_K: ggml.Q3_K, WeightQ4_K: ggml.Q4_K,
	WeightQ5_K: ggml.Q5_K, WeightQ6_K: ggml.Q6_K,
	WeightQ8_B32: quant.Q8_B32, WeightQ8_B64: quant.Q8_B64, WeightQ6_B64: quant.Q6_B64,
	WeightQ5_B64: quant.Q5_B64, WeightQ4_B32: quant.Q4_B32, WeightQ4_B64: quant.Q4_B64,
	WeightQ3H_B64: quant.Q3H_B64, WeightQ3_B32: quant.Q3_B32, WeightQ2_B32: quant.Q2_B32,
}

// matSizes are row lengths for t: odd ones for float types, whole blocks
// with a tail of lanes (more blocks or units than a warp has lanes) else.
func matSizes(t WeightType) []int {
	switch t.BlockSize() {
	case 1:
		return []int{1, 7, 31, 33, 257, 1000}
	case 32:
		return []int{32, 96, 33 * 32, 65 * 32}
	case 64:
		return []int{64, 3 * 64, 33 * 64}
	}
	return []int{256, 3 * 256, 9 * 256}
}

func randFloats(r *rand.Rand, n int, scale float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = (r.Float32()*2 - 1) * scale
	}
	return x
}

// randWeights quantizes rows × n random values to t with ggml's reference
// quantizer and returns the bytes and what they dequantize to.
func randWeights(r *rand.Rand, t WeightType, n, rows int) ([]byte, []float32) {
	gt := ggmlType[t]
	w := make([]byte, rows*t.RowBytes(n))
	deq := make([]float32, rows*n)
	for i := range rows {
		row := w[i*t.RowBytes(n) : (i+1)*t.RowBytes(n)]
		ggml.QuantizeRow(gt, randFloats(r, n, 1), row)
		ggml.DequantizeRow(gt, row, deq[i*n:(i+1)*n])
	}
	return w, deq
}

// TestMatMulTwin: every (row, column) within float32 rounding of the
// float64 dot product of the dequantized weights, relative to Σ|w·x|.
func TestMatMulTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, wt := range WeightTypes() {
		for _, n := range matSizes(wt) {
			for _, rc := range [][2]int{{1, 1}, {5, 3}, {13, 8}, {3, 9}, {2, 16}} {
				rows, cols := rc[0], rc[1]
				w, deq := randWeights(r, wt, n, rows)
				x := randFloats(r, cols*n, 2)
				for _, warp := range warps {
					y := make([]float32, cols*rows+1)
					y[cols*rows] = 12345 // guard
					mmTwin(wt, warp, w, x, y[:cols*rows], n, rows, cols)
					if y[cols*rows] != 12345 {
						t.Fatalf("%v: wrote past the end", wt)
					}
					checkMM(t, fmt.Sprintf("%v n=%d rows=%d cols=%d warp=%d", wt, n, rows, cols, warp), deq, x, y, n, rows, cols)
				}
			}
		}
	}
}

func checkMM(t *testing.T, name string, deq, x, y []float32, n, rows, cols int) {
	t.Helper()
	for c := range cols {
		for rr := range rows {
			var want, mag float64
			for i := range n {
				p := float64(deq[rr*n+i]) * float64(x[c*n+i])
				want += p
				mag += math.Abs(p)
			}
			got := float64(y[c*rows+rr])
			if mag > math.MaxFloat32/4 || math.IsNaN(want) {
				continue // float32 overflows somewhere in the sum (extreme scales)
			}
			if math.Abs(got-want) > 1e-6*mag+1e-30 {
				t.Errorf("%s: y[%d][%d] = %g, want %g (|w·x| %g)", name, c, rr, got, want, mag)
				return
			}
		}
	}
}

// engineRMSNorm is engine/model's rmsNorm followed by the gain, copied
// (engine/model keeps it unexported).
func engineRMSNorm(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		dst[i] = v * scale
	}
	for i := range w {
		dst[i] *= w[i]
	}
}

// TestRMSNormTwin: only the float64 summation order differs from the
// engine, so the results agree to one unit in the last place.
func TestRMSNormTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 255, 257, 1000, 4096} {
		rows := 3
		x := randFloats(r, rows*n, 3)
		g := randFloats(r, n, 1.5)
		for _, warp := range warps {
			for _, gain := range [][]float32{nil, g} {
				y := make([]float32, rows*n)
				rmsNormTwin(warp, x, gain, y, n, 1e-5)
				want := make([]float32, n)
				for row := range rows {
					engineRMSNorm(want, x[row*n:(row+1)*n], gain, 1e-5)
					checkULP(t, fmt.Sprintf("rmsnorm n=%d warp=%d gain=%v row %d", n, warp, gain != nil, row), y[row*n:(row+1)*n], want, 1)
				}
			}
		}
	}
}

// checkULP fails when got and want differ by more than maxULP units in the
// last place of float32.
func checkULP(t *testing.T, name string, got, want []float32, maxULP int) {
	t.Helper()
	for i := range want {
		if d := ulpDiff(got[i], want[i]); d > maxULP {
			t.Errorf("%s: [%d] = %g, want %g (%d ulp)", name, i, got[i], want[i], d)
			return
		}
	}
}

func ulpDiff(a, b float32) int {
	if a == b {
		return 0
	}
	if a != a || b != b || (a < 0) != (b < 0) {
		return math.MaxInt32
	}
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	return int(min(max(d, -d), math.MaxInt32))
}

// engineRoPE is engine/model's ropeTable.fill + rope, copied.
func engineRoPE(x []float32, pos int, base float64, freqScale float32, nRot int, half bool) {
	n := nRot / 2
	cs, sn := make([]float32, n), make([]float32, n)
	thetaScale := float32(math.Pow(base, -2/float64(nRot)))
	theta := float32(pos)
	for i := range n {
		t := freqScale * theta
		cs[i], sn[i] = float32(math.Cos(float64(t))), float32(math.Sin(float64(t)))
		theta *= thetaScale
	}
	for i := range n {
		i0, i1 := 2*i, 2*i+1
		if half {
			i0, i1 = i, i+n
		}
		x0, x1 := x[i0], x[i1]
		x[i0] = x0*cs[i] - x1*sn[i]
		x[i1] = x0*sn[i] + x1*cs[i]
	}
}

// TestRoPETwin: bit-identical to the engine, both pairings, partial
// rotation (n_rot < head_dim), several heads and positions.
func TestRoPETwin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const nHeads, headDim = 3, 80
	for _, nRot := range []int{80, 32} {
		for _, neox := range []bool{false, true} {
			pos := []int32{0, 1, 17, 4095, 100000}
			stride := nHeads*headDim + 8
			x := randFloats(r, len(pos)*stride, 2)
			want := append([]float32(nil), x...)
			thetaScale := float32(math.Pow(500000, -2/float64(nRot)))
			ropeTwin(x, pos, stride, nHeads, headDim, nRot, thetaScale, 0.25, neox)
			for ti, p := range pos {
				for h := range nHeads {
					o := ti*stride + h*headDim
					engineRoPE(want[o:o+headDim], int(p), 500000, 0.25, nRot, neox)
				}
			}
			checkULP(t, fmt.Sprintf("rope nRot=%d neox=%v", nRot, neox), x, want, 0)
		}
	}
}

func TestSiLUMulTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	g, u := randFloats(r, 10001, 30), randFloats(r, 10001, 4)
	g = append(g, 0, -0, 88, -88, 100, -100, float32(math.Inf(-1)))
	u = append(u, 1, 1, 1, 1, 1, 1, 1)
	got, want := make([]float32, len(g)), make([]float32, len(g))
	siluMulTwin(got, g, u)
	ggml.SiLUMul(want, g, u)
	checkULP(t, "silu_mul", got[:len(g)-1], want[:len(g)-1], 0)
}

// TestExpGGMLTwin: the kernels' exponential is engine/ggml's bit for bit,
// over the whole range that softmax feeds it (x − max ≤ 0) and beyond.
func TestExpGGMLTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 200000 {
		x := (r.Float32()*2 - 1) * 200
		if i < 1000 {
			x = -float32(i) * 0.125
		}
		if got, want := expGGML(x), ggml.ExpGGML(x); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("expGGML(%g) = %g, ggml.ExpGGML %g", x, got, want)
		}
	}
}

// TestSoftmaxTwin against ggml.SoftMax: the same exponentials, summed in
// another order, so within a few ulp.
func TestSoftmaxTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 255, 257, 1000, 32000} {
		x := randFloats(r, 2*n, 20)
		for _, warp := range warps {
			got := append([]float32(nil), x...)
			softmaxTwin(warp, got, n)
			for row := range 2 {
				want := append([]float32(nil), x[row*n:(row+1)*n]...)
				ggml.SoftMax(want)
				checkULP(t, fmt.Sprintf("softmax n=%d warp=%d", n, warp), got[row*n:(row+1)*n], want, 4)
			}
		}
	}
}

// TestAttnTwin against a float64 softmax attention, with GQA (8 query
// heads over 2 KV heads) and odd lengths and head sizes.
func TestAttnTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, shape := range [][3]int{{1, 64, 1}, {7, 72, 2}, {129, 128, 2}, {1000, 96, 8}} {
		nKV, hd, nKVHead := shape[0], shape[1], shape[2]
		const nHead = 8
		stride := nKVHead*hd + 3
		q := randFloats(r, nHead*hd, 1)
		k, v := randFloats(r, nKV*stride, 1), randFloats(r, nKV*stride, 1)
		scale := float32(1 / math.Sqrt(float64(hd)))
		want := attnRef(q, k, v, nKV, hd, nHead, nKVHead, stride, scale)
		// An F16 cache holds ggml's rounding of the same rows.
		k16, v16 := halfRound(k), halfRound(v)
		want16 := attnRef(q, k16, v16, nKV, hd, nHead, nKVHead, stride, scale)
		for _, warp := range warps {
			for _, kvt := range []WeightType{WeightF32, WeightF16} {
				kb, vb := make([]byte, kvt.RowBytes(len(k))), make([]byte, kvt.RowBytes(len(v)))
				kvStoreTwin(kvt, kb, k)
				kvStoreTwin(kvt, vb, v)
				got := make([]float32, nHead*hd)
				attnTwin(warp, kvt, q, kb, vb, got, nKV, hd, nHead, nKVHead, stride, scale)
				ref := want
				if kvt == WeightF16 {
					ref = want16
				}
				for i := range ref {
					if math.Abs(float64(got[i])-ref[i]) > 2e-6 {
						t.Fatalf("attn %v nKV=%d hd=%d warp=%d: out[%d] = %g, want %g", kvt, nKV, hd, warp, i, got[i], ref[i])
					}
				}
			}
		}
	}
}

// halfRound is x through ggml's float32 → fp16 → float32.
func halfRound(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = ggml.FP16ToFP32(ggml.FP32ToFP16(v))
	}
	return out
}

// halfEdgeFloats are n floats around binary16's edges: random bit
// patterns, values near its normal and subnormal ranges, exact ties
// between halves, its largest finite and the overflow boundary, ±0,
// ±Inf and NaNs.
func halfEdgeFloats(r *rand.Rand, n int) []float32 {
	x := []float32{0, float32(math.Copysign(0, -1)), 65504, 65519.99, 65520, -65520, 1e-8, 2.98e-8, 5.96e-8, 6.1e-5,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc00001)}
	for len(x) < n {
		switch r.IntN(4) {
		case 0:
			x = append(x, math.Float32frombits(r.Uint32()))
		case 1: // within ±2^(−30 … 17)
			x = append(x, float32(math.Ldexp(r.Float64()*2-1, r.IntN(48)-30)))
		case 2: // a tie: a half's value plus half its last place
			h := uint16(r.IntN(0x7c00))
			a, b := float64(halfToFloat(h)), float64(halfToFloat(h+1))
			x = append(x, float32((a+b)/2))
		default: // a subnormal half's neighbourhood
			x = append(x, float32(float64(r.IntN(2048))*math.Ldexp(1, -25)))
		}
	}
	return x
}

// TestFloatToHalf: the twin of fc_float_to_half is ggml's FP32ToFP16 on
// every non-NaN input, and NaN is 0x7fff.
func TestFloatToHalf(t *testing.T) {
	for _, f := range halfEdgeFloats(rand.New(rand.NewPCG(15, 16)), 200000) {
		got, want := floatToHalf(f), ggml.FP32ToFP16(f)
		if f != f {
			want = 0x7fff
		}
		if got != want {
			t.Fatalf("floatToHalf(%g = %#08x) = %#04x, ggml %#04x", f, math.Float32bits(f), got, want)
		}
	}
}

func attnRef(q, k, v []float32, nKV, hd, nHead, nKVHead, stride int, scale float32) []float64 {
	out := make([]float64, nHead*hd)
	s := make([]float64, nKV)
	for h := range nHead {
		g := h / (nHead / nKVHead)
		m := math.Inf(-1)
		for j := range nKV {
			s[j] = 0
			for i := range hd {
				s[j] += float64(q[h*hd+i]) * float64(k[j*stride+g*hd+i])
			}
			s[j] *= float64(scale)
			m = max(m, s[j])
		}
		var sum float64
		for j := range s {
			s[j] = math.Exp(s[j] - m)
			sum += s[j]
		}
		for j := range nKV {
			for i := range hd {
				out[h*hd+i] += s[j] / sum * float64(v[j*stride+g*hd+i])
			}
		}
	}
	return out
}

// TestFMAF checks the single-rounding fmaf, including a case where
// rounding the float64 sum to float32 rounds the wrong way: a·b + c =
// 1 + 2^-23 + 2^-24 − 2^-70, which float64 rounds to the float32 tie
// 1 + 2^-23 + 2^-24, which rounds to even (1 + 2^-22); the true result is
// below the tie (1 + 2^-23).
func TestFMAF(t *testing.T) {
	a, b, c := float32(1+0x1p-23), float32(0x1p-24*(1-0x1p-23)), float32(1+0x1p-23)
	if naive := float32(math.FMA(float64(a), float64(b), float64(c))); naive != 1+0x1p-22 {
		t.Fatalf("test case is not a double-rounding case: naive = %g", naive)
	}
	if got := fmaf(a, b, c); got != 1+0x1p-23 {
		t.Errorf("fmaf double-rounding case = %.10g, want 1+2^-23", got)
	}
	r := rand.New(rand.NewPCG(15, 16))
	for range 100000 {
		a, b, c := randFloats(r, 1, 4)[0], randFloats(r, 1, 4)[0], randFloats(r, 1, 16)[0]
		if got, exact := fmaf(a, b, c), fmaExact(a, b, c); got != exact {
			t.Fatalf("fmaf(%g, %g, %g) = %g, want %g", a, b, c, got, exact)
		}
	}
}

func TestHalfToFloat(t *testing.T) {
	for h := range 1 << 16 {
		got, want := halfToFloat(uint16(h)), ggml.FP16ToFP32(uint16(h))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("halfToFloat(%#04x) = %g, ggml %g", h, got, want)
		}
	}
}

// TestKernelConstants: the launch constants in twin.go are the #defines of
// the kernel sources.
func TestKernelConstants(t *testing.T) {
	want := map[string]map[string]int{
		"matmul.cu": {"MM_WARPS": mmWarps, "MM_MAX_COLS": mmMaxCols},
		"norm.cu":   {"NORM_THREADS": normThreads},
		"rope.cu":   {"ROPE_THREADS": ropeThreads},
		"act.cu":    {"ACT_THREADS": actThreads},
		"attn.cu": {"ATTN_THREADS": attnThreads, "ATTN_CHUNK": attnChunk, "ATTN_PHI_ABOVE": attnPhiAbove,
			"ATTN_PHI_BELOW": attnPhiBelow, "ATTN_BQ": attnBQ, "ATTN_BK": attnBK, "ATTN_MAX_HD": attnMaxHD,
			"ATTN_G_ROWS": attnGRows, "ATTN_G_THREADS": attnGThreads, "ATTN_G_HD": attnGHD},
	}
	for file, defs := range want {
		src, ok := KernelSource(file)
		if !ok {
			t.Fatalf("%s not embedded", file)
		}
		for name, v := range defs {
			if line := fmt.Sprintf("#define %s %d\n", name, v); !containsLine(src.Code, line) {
				t.Errorf("%s lacks %q", file, line)
			}
		}
	}
}

// TestKVStoreQ8_0: the Q8_0 cache's row store is the CPU cache's
// (ggml.QuantizeActivation) bit for bit, zero blocks and ties included.
func TestKVStoreQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	x := randFloats(r, 64*32, 3)
	clear(x[64:96]) // a block of zeros
	for i := 96; i < 128; i++ {
		x[i] = float32(i-112) * 0.5 // amax 7.5: x·(127/amax) lands on halves
	}
	got, want := make([]byte, WeightQ8_0.RowBytes(len(x))), make([]byte, WeightQ8_0.RowBytes(len(x)))
	kvStoreTwin(WeightQ8_0, got, x)
	ggml.QuantizeActivation(ggml.Q8_0, x, want)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("byte %d (block %d) = %#02x, ggml %#02x", i, i/34, got[i], want[i])
		}
	}
}

// TestAttnTwinQ8_0: attention over a Q8_0 cache against a float64
// softmax attention over the rows ggml dequantizes from it.
func TestAttnTwinQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, shape := range [][3]int{{1, 64, 1}, {37, 96, 2}, {300, 128, 4}} {
		nKV, hd, nKVHead := shape[0], shape[1], shape[2]
		const nHead = 8
		stride := nKVHead * hd
		q, k, v := randFloats(r, nHead*hd, 1), randFloats(r, nKV*stride, 1), randFloats(r, nKV*stride, 1)
		kb, vb := make([]byte, WeightQ8_0.RowBytes(len(k))), make([]byte, WeightQ8_0.RowBytes(len(v)))
		kvStoreTwin(WeightQ8_0, kb, k)
		kvStoreTwin(WeightQ8_0, vb, v)
		ggml.DequantizeRow(ggml.Q8_0, kb, k)
		ggml.DequantizeRow(ggml.Q8_0, vb, v)
		scale := float32(1 / math.Sqrt(float64(hd)))
		want := attnRef(q, k, v, nKV, hd, nHead, nKVHead, stride, scale)
		for _, warp := range warps {
			got := make([]float32, nHead*hd)
			attnTwin(warp, WeightQ8_0, q, kb, vb, got, nKV, hd, nHead, nKVHead, stride, scale)
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 2e-6 {
					t.Fatalf("attn Q8_0 nKV=%d hd=%d warp=%d: out[%d] = %g, want %g", nKV, hd, warp, i, got[i], want[i])
				}
			}
		}
	}
}
