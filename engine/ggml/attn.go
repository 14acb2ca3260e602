package ggml

import "math"

// Kernels of the attention inner loops (scores, softmax, weighted sum of
// values) over float32 rows. Each has a plain-Go twin here that the
// assembly matches bit for bit; the Go versions are the meaning.

// DotsF32 sets out[j] to the F32 dot product of q with the key row
// k[j·stride : j·stride+len(q)] for every j < len(out), each exactly as
// VecDot(F32, …) computes it (ggml's ggml_vec_dot_f32 order: the scores of
// llama.cpp's KQ product).
func DotsF32(q, k []float32, stride int, out []float32) {
	if len(out) == 0 {
		return
	}
	n := len(q)
	if len(k) < (len(out)-1)*stride+n {
		panic("ggml: DotsF32 keys too short")
	}
	dotsF32(q, k, stride, out)
}

var dotsF32 = dotsF32Go

func dotsF32Go(q, k []float32, stride int, out []float32) {
	n := len(q)
	for j := range out {
		row := k[j*stride : j*stride+n]
		out[j] = lanesDot(n, 4, func(i int) (float32, float32) { return row[i], q[i] })
	}
}

// AccumulateRows adds Σ_j w[j]·v[j·stride : j·stride+len(out)] to out: for
// every element, in j order, a float32 multiply then a float32 add (the
// rounding of the plain loop out[i] += w[j]*v[j*stride+i], no fused
// multiply-add).
func AccumulateRows(out, w, v []float32, stride int) {
	if len(w) == 0 || len(out) == 0 {
		return
	}
	if len(v) < (len(w)-1)*stride+len(out) {
		panic("ggml: AccumulateRows values too short")
	}
	accumulateRows(out, w, v, stride)
}

var accumulateRows = accumulateRowsGo

func accumulateRowsGo(out, w, v []float32, stride int) {
	for j, a := range w {
		row := v[j*stride : j*stride+len(out)]
		for i := range out {
			out[i] += float32(a * row[i]) // the conversion forbids a fused multiply-add
		}
	}
}

// Add adds x to dst element by element (the residual connections), through
// AccumulateRows' kernel with the weight 1, whose products are exact.
func Add(dst, x []float32) {
	if len(x) < len(dst) {
		panic("ggml: Add values too short")
	}
	if len(dst) > 0 {
		accumulateRows(dst, addOne[:], x, 0)
	}
}

var addOne = [1]float32{1}

// Scale multiplies x by s in place.
func Scale(x []float32, s float32) { scale(x, s) }

var scale = scaleGo

func scaleGo(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// SoftMax normalizes x in place as ggml_vec_soft_max_f32 does on an AVX2
// machine: the maximum subtracted, every full group of 8 through ggml's
// vectorized expf (ExpGGML), each group's sum reduced in float32 lanes and
// added in float64; the tail through the C library's expf (ExpShift); then
// one float32 multiply by float32(1/sum). The maximum comes from a vector
// kernel where there is one: the same value as maxF32's (a vector max may
// return −0 where maxF32 returns +0 or the reverse, and x − (±0) and its
// exp do not depend on that sign), so the result does not depend on it.
func SoftMax(x []float32) {
	if len(x) == 0 {
		return
	}
	maxv := maxRow(x)
	scale(x, float32(1/ExpShift(x, maxv)))
}

// maxRow is maxF32, or a vector kernel with the same result.
var maxRow = maxF32

func maxF32(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

var expGroups = expGroupsGo

// expGroupsGo replaces each value v of x (a multiple of 8 long) by
// ExpGGML(v − maxv) and returns the float64 sum of the groups' float32
// lane reductions.
func expGroupsGo(x []float32, maxv float32) float64 {
	var sum float64
	for i := 0; i+8 <= len(x); i += 8 {
		g := x[i : i+8]
		for l := range g {
			g[l] = ExpGGML(g[l] - maxv)
		}
		t0, t1, t2, t3 := g[0]+g[4], g[1]+g[5], g[2]+g[6], g[3]+g[7]
		sum += float64((t0 + t1) + (t2 + t3))
	}
	return sum
}

// ExpGGML is ggml's vectorized expf (ggml_v_expf on AVX2+FMA, from ARM's
// optimized routines: max error 1.45 ulp + 0.5), one lane at a time.
func ExpGGML(x float32) float32 {
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
