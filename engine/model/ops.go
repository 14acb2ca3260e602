package model

import (
	"math"
	"sync"

	"flowchat/engine/ggml"
)

// The element-wise operations below follow GGML's CPU definitions (sums
// accumulated in float64, scales in float32) so that our logits agree with
// llama.cpp's to float rounding.

// rmsNorm writes x / sqrt(mean(x²) + eps) into dst.
func rmsNorm(dst, x []float32, eps float32) {
	scale := rmsScale(x, eps)
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v * scale
	}
}

// rmsScale is 1 / sqrt(mean(x²) + eps), the sum of squares by
// ggml.SumSquares (16 float64 chains, GGML's in one: the same float32 mean
// but for a sum within 2⁻²⁹ of a float32 rounding boundary). Decode runs
// every norm on one thread while the others wait (two a layer), so its
// latency counts.
func rmsScale(x []float32, eps float32) float32 {
	mean := float32(ggml.SumSquares(x) / float64(len(x)))
	return 1 / sqrtf(mean+eps)
}

// layerNorm writes (x - mean) / sqrt(var + eps) into dst.
func layerNorm(dst, x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := float32(sum / float64(len(x)))
	var sum2 float64
	for i, v := range x {
		d := v - mean
		dst[i] = d
		sum2 += float64(d * d)
	}
	variance := float32(sum2 / float64(len(x)))
	scale := 1 / sqrtf(variance+eps)
	for i := range dst[:len(x)] {
		dst[i] *= scale
	}
}

// sqrtf is C's sqrtf: the square root rounded to float32 (so that 1/sqrtf
// rounds twice, as GGML's norms do).
func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// softmax normalizes x in place as ggml_vec_soft_max_f32 does (groups of
// 8 through GGML's vectorized exp, group sums in float64; see
// ggml.SoftMax).
func softmax(x []float32) { ggml.SoftMax(x) }

func silu(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

func relu(x float32) float32 { return max(x, 0) }

const (
	geluCoefA    = 0.044715
	sqrt2OverPi  = 0.79788456080286535587989211986876
	geluTableMin = -10
	geluTableMax = 10
)

// geluTanh is GELU's tanh approximation in float32.
func geluTanh(x float32) float32 {
	return 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2OverPi*x*(1+geluCoefA*x*x)))))
}

// geluErf is the exact GELU.
func geluErf(x float32) float32 {
	return float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2)))
}

var (
	geluOnce  sync.Once
	geluTable []uint16 // fp16 GELU of every fp16 input, as GGML builds it
)

// geluFP16 is GELU as GGML's CPU backend computes it: the input rounded to
// fp16 and looked up in a table of fp16 results (llama.cpp's numerics).
func geluFP16(x float32) float32 {
	if x <= geluTableMin {
		return 0
	}
	if x >= geluTableMax {
		return x
	}
	geluOnce.Do(func() {
		geluTable = make([]uint16, 1<<16)
		for i := range geluTable {
			geluTable[i] = ggml.FP32ToFP16(geluTanh(ggml.FP16ToFP32(uint16(i))))
		}
	})
	return ggml.FP16ToFP32(geluTable[ggml.FP32ToFP16(x)])
}

// activation returns the element-wise function named by a spec.
func activation(name string) func(float32) float32 {
	switch name {
	case "silu", "swiglu":
		return silu
	case "gelu", "geglu":
		return geluFP16
	case "gelu_exact", "geglu_exact":
		return geluTanh
	case "gelu_erf", "geglu_erf":
		return geluErf
	case "relu", "reglu":
		return relu
	}
	panic("model: unknown activation " + name)
}

// isSiLU reports whether the activation named by a spec is SiLU (whose
// gated form runs fused through ggml.SiLUMul, equal to silu·up).
func isSiLU(name string) bool { return name == "silu" || name == "swiglu" }

func isGLU(name string) bool {
	switch name {
	case "swiglu", "geglu", "geglu_exact", "geglu_erf", "reglu":
		return true
	}
	return false
}

// ropeTable holds cos/sin of each rotation pair for one position.
type ropeTable struct {
	cos, sin []float32 // [nRot/2]
}

// fill computes the angles for position pos the way GGML does: theta for
// pair i is pos·freqScale·base^(-2i/nRot), built by repeated float32
// multiplication.
func (r *ropeTable) fill(pos int, base float64, freqScale float32) {
	nRot := 2 * len(r.cos)
	thetaScale := float32(math.Pow(base, -2/float64(nRot)))
	theta := float32(pos)
	for i := range r.cos {
		t := freqScale * theta
		r.cos[i] = float32(math.Cos(float64(t)))
		r.sin[i] = float32(math.Sin(float64(t)))
		theta *= thetaScale
	}
}

// rope rotates the first nRot dims of one head vector x. half selects the
// rotate-half (NEOX) pairing (i, i+nRot/2); otherwise pairs are (2i, 2i+1).
func rope(x []float32, r *ropeTable, half bool) {
	if half {
		ggml.RopeHalves(x, r.cos, r.sin)
		return
	}
	ggml.RopePairs(x, r.cos, r.sin)
}

// alibiSlopes returns ALiBi's per-head slopes as GGML computes them.
func alibiSlopes(nHead int, maxBias float64) []float32 {
	nLog2 := 1 << uint(math.Floor(math.Log2(float64(nHead))))
	m0 := math.Pow(2, -maxBias/float64(nLog2))
	m1 := math.Pow(2, -maxBias/2/float64(nLog2))
	s := make([]float32, nHead)
	for h := range s {
		if h < nLog2 {
			s[h] = float32(math.Pow(m0, float64(h+1)))
		} else {
			s[h] = float32(math.Pow(m1, float64(2*(h-nLog2)+1)))
		}
	}
	return s
}

// dot is the float32 dot product of the attention scores (4 accumulators).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpy(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += a * x[i]
	}
}

func add(dst, x []float32) { ggml.Add(dst, x) }

// softcap squashes x into (−c, c): c·tanh(x/c) (Gemma 2's attention and
// final logit soft-capping, as GGML computes it: scale, tanh, scale).
func softcap(x []float32, c float32) {
	inv := 1 / c
	for i, v := range x {
		x[i] = c * float32(math.Tanh(float64(v*inv)))
	}
}
