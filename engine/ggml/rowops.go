package ggml

// Row operations of a norm (RMS norm's sum of squares, its scale and
// weight) for the model's serial path: decode runs each norm on one thread
// while the others wait, two a layer, so their latency shows at high
// thread counts. Each has a plain-Go twin here that the assembly matches
// bit for bit; the Go versions are the meaning.

// SumSquares returns Σ float64(x[i]·x[i]), each square rounded to float32
// first as GGML's rms_norm does, summed in sumSquaresGo's order: 16
// float64 partial sums over the whole groups of 16 values (value i into sum
// i mod 16), folded as (k, k+8), then (k, k+4), then (0+2)+(1+3), then the
// values past the last group added in order. (GGML sums in one chain; the
// float32 mean of a norm differs from it only when the float64 sum lies
// within 2⁻²⁹ of a float32 rounding boundary.)
func SumSquares(x []float32) float64 { return sumSquares(x) }

var sumSquares = sumSquaresGo

func sumSquaresGo(x []float32) float64 {
	var s [16]float64
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		g := x[i : i+16 : i+16]
		for k, v := range g {
			s[k] += float64(v * v)
		}
	}
	var u [4]float64
	for k := range u {
		u[k] = (s[k] + s[k+8]) + (s[k+4] + s[k+12])
	}
	sum := (u[0] + u[2]) + (u[1] + u[3])
	for _, v := range x[n:] {
		sum += float64(v * v)
	}
	return sum
}

// ScaleMul sets dst[i] = (x[i]·s)·w[i]: two float32 roundings, in that
// order (a norm's scale, then its weight).
func ScaleMul(dst, x []float32, s float32, w []float32) {
	if len(x) < len(dst) || len(w) < len(dst) {
		panic("ggml: ScaleMul operands too short")
	}
	scaleMul(dst, x[:len(dst)], s, w[:len(dst)])
}

var scaleMul = scaleMulGo

func scaleMulGo(dst, x []float32, s float32, w []float32) {
	x, w = x[:len(dst)], w[:len(dst)]
	for i, v := range x {
		dst[i] = v * s * w[i]
	}
}

// RopePairs rotates the pairs (x[2i], x[2i+1]) by the angles whose cosines
// and sines are cos[i] and sin[i], for i < len(cos) (GGML's normal RoPE):
// x0·c − x1·s and x0·s + x1·c, each product rounded, then the sum.
func RopePairs(x, cos, sin []float32) {
	if len(x) < 2*len(cos) || len(sin) < len(cos) {
		panic("ggml: RopePairs operands too short")
	}
	ropePairs(x[:2*len(cos)], cos, sin[:len(cos)])
}

// RopeHalves rotates the pairs (x[i], x[i+n]), n = len(cos), as RopePairs
// does (GGML's NeoX RoPE).
func RopeHalves(x, cos, sin []float32) {
	if len(x) < 2*len(cos) || len(sin) < len(cos) {
		panic("ggml: RopeHalves operands too short")
	}
	ropeHalves(x[:2*len(cos)], cos, sin[:len(cos)])
}

var ropePairs, ropeHalves = ropePairsGo, ropeHalvesGo

func ropePairsGo(x, cos, sin []float32) {
	for i, c := range cos {
		s, x0, x1 := sin[i], x[2*i], x[2*i+1]
		x[2*i] = x0*c - x1*s
		x[2*i+1] = x0*s + x1*c
	}
}

func ropeHalvesGo(x, cos, sin []float32) { ropeHalvesFrom(x, cos, sin, 0) }

// ropeHalvesFrom rotates the pairs (x[i], x[i+n]) for i from i0 on.
func ropeHalvesFrom(x, cos, sin []float32, i0 int) {
	n := len(cos)
	for i := i0; i < n; i++ {
		c, s, x0, x1 := cos[i], sin[i], x[i], x[i+n]
		x[i] = x0*c - x1*s
		x[i+n] = x0*s + x1*c
	}
}
