package model

import "math"

// fma32 is a float32 fused multiply-add (the float64 FMA rounds once to
// float64, then to float32; the double rounding differs from a true float32
// FMA only at exact float32 midpoints, about once in 2^29).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// expGGML is GGML's vectorized expf (ggml_v_expf on AVX2+FMA, adapted from
// ARM's optimized routines: max error 1.45 ulp + 0.5), one lane at a time.
// llama.cpp applies it to every full group of 8 values of the attention
// softmax; matching it keeps our activations bit-identical to llama.cpp's
// far more often, which matters wherever activations are then rounded (to
// 8-bit blocks, fp16 or bf16) before a matrix product.
func expGGML(x float32) float32 {
	const r = 0x1.8p23
	z := fma32(x, 0x1.715476p+0, r)
	n := z - r
	b := fma32(-n, 0x1.7f7d1cp-20, fma32(-n, 0x1.62e4p-1, x))
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + math.Float32bits(1))
	u := b * b
	j := fma32(fma32(fma32(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fma32(0x1.555e66p-3, b, 0x1.fffdb6p-2)), u, 0x1.ffffecp-1*b)
	an := float32(math.Abs(float64(n)))
	if !(an > 126) {
		return fma32(j, k, k)
	}
	var g uint32
	if n <= 0 {
		g = 0x82000000
	}
	s1 := math.Float32frombits(g + 0x7f000000)
	s2 := math.Float32frombits(e - g)
	if an > 192 {
		return s1 * s1
	}
	return fma32(s2, j, s2) * s1
}

// expfLibm is the C library's expf used by GGML for the lanes left over
// after the groups of 8 (correctly rounded for practical purposes).
func expfLibm(x float32) float32 { return float32(math.Exp(float64(x))) }
