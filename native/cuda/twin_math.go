package cuda

import "math"

// The device arithmetic the twins need, bit for bit: fmaf, fmaxf, the
// half-precision widening, ggml's expf and the reductions of fc_port.h.

var negInf = float32(math.Inf(-1))

// warpSum is fc_warp_sum over len(v) lanes (a power of two): the butterfly
// v[l] + v[l^m] for m = W/2 … 1. It overwrites v.
func warpSum(v []float32) float32 {
	tmp := make([]float32, len(v))
	for m := len(v) / 2; m > 0; m >>= 1 {
		for l := range v {
			tmp[l] = v[l] + v[l^m]
		}
		copy(v, tmp)
	}
	return v[0]
}

func warpSumD(v []float64) float64 {
	tmp := make([]float64, len(v))
	for m := len(v) / 2; m > 0; m >>= 1 {
		for l := range v {
			tmp[l] = v[l] + v[l^m]
		}
		copy(v, tmp)
	}
	return v[0]
}

func warpMax(v []float32) float32 {
	tmp := make([]float32, len(v))
	for m := len(v) / 2; m > 0; m >>= 1 {
		for l := range v {
			tmp[l] = fmaxf(v[l], v[l^m])
		}
		copy(v, tmp)
	}
	return v[0]
}

// blockSum is fc_block_sum_d for len(part) threads: each warp's butterfly,
// then one butterfly over the warp results padded with zeros. It
// overwrites part.
func blockSum(part []float64, warp int) float64 {
	sh := make([]float64, warp)
	for w := 0; w < len(part)/warp; w++ {
		sh[w] = warpSumD(part[w*warp : (w+1)*warp])
	}
	return warpSumD(sh)
}

func blockSumF(part []float32, warp int) float32 {
	sh := make([]float32, warp)
	for w := 0; w < len(part)/warp; w++ {
		sh[w] = warpSum(part[w*warp : (w+1)*warp])
	}
	return warpSum(sh)
}

func blockMax(part []float32, warp int) float32 {
	sh := make([]float32, warp)
	for i := range sh {
		sh[i] = negInf
	}
	for w := 0; w < len(part)/warp; w++ {
		sh[w] = warpMax(part[w*warp : (w+1)*warp])
	}
	return warpMax(sh)
}

// fmaxf is C's fmaxf: a NaN operand is ignored.
func fmaxf(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b, a > b:
		return a
	}
	return b
}

// fmaf is a·b + c rounded once to float32. The product is exact in
// float64; the float64 sum is rounded, so when it lands exactly halfway
// between two float32 values the sum's rounding error (TwoSum) decides.
func fmaf(a, b, c float32) float32 {
	p, cc := float64(a)*float64(b), float64(c)
	s := p + cc
	r := float32(s)
	if math.IsInf(s, 0) || math.IsNaN(s) || float64(r) == s {
		return r
	}
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
	if e == 0 {
		return r
	}
	lo, hi := r, r
	if float64(r) < s {
		hi = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if s-float64(lo) != float64(hi)-s {
		return r // not a tie: the float64 rounding did not matter
	}
	if e > 0 {
		return hi
	}
	return lo
}

// halfToFloat widens IEEE binary16 exactly (PTX cvt.f32.f16).
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	v := float32(mant) * (1.0 / (1 << 24)) // subnormal: mant · 2^−24, exact
	if sign != 0 {
		v = -v
	}
	return v
}

// expGGML is fc_expf_ggml (ggml_v_expf lane by lane), engine/ggml's ExpGGML.
func expGGML(x float32) float32 {
	const r = 0x1.8p23
	z := fmaf(x, 0x1.715476p+0, r)
	n := z - r
	b := fmaf(-n, 0x1.7f7d1cp-20, fmaf(-n, 0x1.62e4p-1, x))
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + math.Float32bits(1))
	u := b * b
	j := fmaf(fmaf(fmaf(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fmaf(0x1.555e66p-3, b, 0x1.fffdb6p-2)), u, float32(0x1.ffffecp-1*b))
	an := float32(math.Abs(float64(n)))
	if !(an > 126) {
		return fmaf(j, k, k)
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
	return fmaf(s2, j, s2) * s1
}

// floatToHalf is fc_float_to_half: binary16 rounded to nearest even,
// overflow to ±Inf, any NaN 0x7fff (PTX's canonical NaN).
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign, mant := uint16(b>>16)&0x8000, b&0x7fffff
	exp := int(b>>23) & 0xff
	switch {
	case exp == 0xff && mant != 0:
		return 0x7fff
	case exp == 0xff, exp-112 >= 0x1f:
		return sign | 0x7c00
	case exp > 112: // a normal half; rounding may carry up to Inf
		return sign | uint16(roundShift(uint32(exp-112)<<23|mant, 13))
	case exp == 0 || 126-exp > 25:
		return sign
	}
	return sign | uint16(roundShift(mant|0x800000, uint(126-exp)))
}

// roundShift is m >> s rounded to nearest, ties to even.
func roundShift(m uint32, s uint) uint32 {
	q, rest, half := m>>s, m&(1<<s-1), uint32(1)<<(s-1)
	if rest > half || rest == half && q&1 != 0 {
		q++
	}
	return q
}
