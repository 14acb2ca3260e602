package ggml

import "math"

// The plain-Go dot products. Each block's integer dot product is exact;
// block results are scaled and summed in float32 as ggml's vec_dot does
// (the float summation order of the SIMD kernels differs in the last bits).

// The float dot products (F32, F16, BF16) run in exactly the order of the
// AVX2 kernels — the same lanes, the same fused multiply-adds, the same
// horizontal sum — so the plain-Go twin and the assembly agree bit for bit:
// four 8-lane FMA accumulators over groups of 32 (BF16: two over groups of
// 16), then groups of 8 into the first, lanes summed as ggml's hsum_float_8,
// then the tail one fused multiply-add at a time.

// fma32 is float32's fused multiply-add: a·b + c rounded once to float32,
// as VFMADD231PS and FMLA do. The product of two float32 values is exact
// in float64 (24+24 significant bits), but float32(math.FMA(…)) rounds the
// sum twice, to float64 and then to float32, and that differs from one
// rounding where the float64 sum lands exactly on a float32 halfway point
// that the exact sum is not on: the AMX tier's extreme-scale tests showed
// it on the first AMX CPU to run them (kernel -4.9506765e+09, model
// -4.950676e+09; docs/PERFORMANCE.md, issue 18). So the float64 sum is
// rounded to odd (its exact error from TwoSum decides the last bit),
// which makes the second rounding the correctly rounded float32 result
// (53 ≥ 24 + 2 bits; Boldo and Melquiond, "When double rounding is odd").
//
// Only a float64 sum that sits on a float32 halfway point can round twice
// wrongly: the halfway points are float64 values, so an exact sum strictly
// between two of them rounds (monotonically) to a float64 between them too.
// So the hardware's float64 FMA answers, and the rounding to odd runs only
// for sums whose 29 bits below float32's last are 1000…0 (or that fall in
// float32's subnormal range, where fewer bits are kept). The noasm builds'
// kernels are these twins: the test suite's plain-Go pass took over ten
// minutes on one package with the rounding to odd on every call.
func fma32(a, b, c float32) float32 {
	s := math.FMA(float64(a), float64(b), float64(c))
	if u := math.Float64bits(s); u&(1<<29-1) != 1<<28 && (s == 0 || math.Abs(s) >= 0x1p-126) {
		return float32(s)
	}
	return fma32Odd(a, b, c)
}

// fma32Odd is fma32 through the float64 sum rounded to odd.
func fma32Odd(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact; the conversion forbids fusion
	s := p + float64(c)
	bv := s - p
	e := (p - (s - bv)) + (float64(c) - bv) // s + e = p + c exactly (NaN for Inf/NaN operands)
	if u := math.Float64bits(s); (e > 0 || e < 0) && u&1 == 0 {
		if (e > 0) == (s > 0) {
			u++ // away from zero: the exact sum lies beyond s
		} else {
			u--
		}
		s = math.Float64frombits(u)
	}
	return float32(s)
}

// lanesDot computes the dot product of n values given by get(i) (weight,
// activation) with acc accumulators over groups of 8·acc.
func lanesDot(n, acc int, get func(i int) (float32, float32)) float32 {
	var a [4][8]float32
	i := 0
	for ; i+8*acc <= n; i += 8 * acc {
		for j := 0; j < acc; j++ {
			for l := 0; l < 8; l++ {
				w, x := get(i + 8*j + l)
				a[j][l] = fma32(w, x, a[j][l])
			}
		}
	}
	for ; i+8 <= n; i += 8 {
		for l := 0; l < 8; l++ {
			w, x := get(i + l)
			a[0][l] = fma32(w, x, a[0][l])
		}
	}
	var v [8]float32
	for l := range v {
		if acc == 4 {
			v[l] = (a[0][l] + a[1][l]) + (a[2][l] + a[3][l])
		} else {
			v[l] = a[0][l] + a[1][l]
		}
	}
	s := hsum8(v)
	for ; i < n; i++ {
		w, x := get(i)
		s = fma32(w, x, s)
	}
	return s
}

// hsum8 is ggml's hsum_float_8: (hi + lo) lanes, then (t0+t2) + (t1+t3).
func hsum8(v [8]float32) float32 {
	t0, t1, t2, t3 := v[4]+v[0], v[5]+v[1], v[6]+v[2], v[7]+v[3]
	return (t0 + t2) + (t1 + t3)
}

func dotF32Go(n int, w, x []byte) float32 {
	a, b := BytesF32(w[:4*n]), BytesF32(x[:4*n])
	return lanesDot(n, 4, func(i int) (float32, float32) { return a[i], b[i] })
}

func dotF16Go(n int, w, x []byte) float32 {
	a, b := bytesU16(w[:2*n]), bytesU16(x[:2*n])
	return lanesDot(n, 4, func(i int) (float32, float32) { return fp16Table[a[i]], fp16Table[b[i]] })
}

// dotF16QGo is the AVX2 tier's F16 order (CPUs without AVX-512:
// dotF16QAVX and its prefill tile f16t43A), which the plain-Go reference
// takes there: four 8-lane accumulators, accumulator k over the k-th of
// four ranges of ⌊n/128⌋·32 elements, octet after octet; the octets past
// the four ranges into the first; then as lanesDot.
func dotF16QGo(n int, w, x []byte) float32 {
	a, b := bytesU16(w[:2*n]), bytesU16(x[:2*n])
	var acc [4][8]float32
	r := n / 128 * 32
	for k := range acc {
		for i := k * r; i < (k+1)*r; i += 8 {
			for l := 0; l < 8; l++ {
				acc[k][l] = fma32(fp16Table[a[i+l]], fp16Table[b[i+l]], acc[k][l])
			}
		}
	}
	i := 4 * r
	for ; i+8 <= n; i += 8 {
		for l := 0; l < 8; l++ {
			acc[0][l] = fma32(fp16Table[a[i+l]], fp16Table[b[i+l]], acc[0][l])
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	s := hsum8(v)
	for ; i < n; i++ {
		s = fma32(fp16Table[a[i]], fp16Table[b[i]], s)
	}
	return s
}

func dotBF16Go(n int, w, x []byte) float32 {
	a, b := bytesU16(w[:2*n]), bytesU16(x[:2*n])
	return lanesDot(n, 2, func(i int) (float32, float32) { return BF16ToFP32(a[i]), BF16ToFP32(b[i]) })
}

// dotQ8 is the signed dot product of 32 int8 weights with 32 int8 values.
func dotQ8(w, x []byte) int {
	s := 0
	for j := 0; j < 32; j++ {
		s += int(int8(w[j])) * int(int8(x[j]))
	}
	return s
}

func dotQ4_0Go(n int, w, x []byte) float32 {
	var sum float32
	for b := 0; b < n/32; b++ {
		wb, xb := w[18*b:18*b+18], x[34*b:34*b+34]
		s := 0
		for j := 0; j < 16; j++ {
			s += (int(wb[2+j]&0xf)-8)*int(int8(xb[2+j])) + (int(wb[2+j]>>4)-8)*int(int8(xb[18+j]))
		}
		sum += float32(float32(s) * (f16(wb) * f16(xb)))
	}
	return sum
}

func dotQ4_1Go(n int, w, x []byte) float32 {
	var sum float32
	for b := 0; b < n/32; b++ {
		wb, xb := w[20*b:20*b+20], x[36*b:36*b+36]
		s := 0
		for j := 0; j < 16; j++ {
			s += int(wb[4+j]&0xf)*int(int8(xb[4+j])) + int(wb[4+j]>>4)*int(int8(xb[20+j]))
		}
		sum += float32(float32(s)*(f16(wb)*f16(xb))) + float32(f16(wb[2:])*f16(xb[2:]))
	}
	return sum
}

// q5Levels decodes the 32 five-bit values of a Q5_0/Q5_1 block (0..31).
func q5Levels(qh uint32, qs []byte, out *[32]int) {
	for j := 0; j < 16; j++ {
		out[j] = int(qs[j]&0xf) | int(qh>>uint(j)&1)<<4
		out[j+16] = int(qs[j]>>4) | int(qh>>uint(j+16)&1)<<4
	}
}

func dotQ5_0Go(n int, w, x []byte) float32 {
	var sum float32
	var q [32]int
	for b := 0; b < n/32; b++ {
		wb, xb := w[22*b:22*b+22], x[34*b:34*b+34]
		q5Levels(le32(wb[2:]), wb[6:22], &q)
		s := 0
		for j, v := range q {
			s += (v - 16) * int(int8(xb[2+j]))
		}
		sum += float32(float32(s) * (f16(wb) * f16(xb)))
	}
	return sum
}

func dotQ5_1Go(n int, w, x []byte) float32 {
	var sum float32
	var q [32]int
	for b := 0; b < n/32; b++ {
		wb, xb := w[24*b:24*b+24], x[36*b:36*b+36]
		q5Levels(le32(wb[4:]), wb[8:24], &q)
		s := 0
		for j, v := range q {
			s += v * int(int8(xb[4+j]))
		}
		sum += float32(float32(s)*(f16(wb)*f16(xb))) + float32(f16(wb[2:])*f16(xb[2:]))
	}
	return sum
}

func dotQ8_0Go(n int, w, x []byte) float32 {
	var sum float32
	for b := 0; b < n/32; b++ {
		wb, xb := w[34*b:34*b+34], x[34*b:34*b+34]
		sum += float32(float32(dotQ8(wb[2:], xb[2:])) * (f16(wb) * f16(xb)))
	}
	return sum
}

func dotIQ4_NLGo(n int, w, x []byte) float32 {
	var sum float32
	for b := 0; b < n/32; b++ {
		wb, xb := w[18*b:18*b+18], x[34*b:34*b+34]
		s := 0
		for j := 0; j < 16; j++ {
			s += int(kvaluesIQ4NL[wb[2+j]&0xf])*int(int8(xb[2+j])) + int(kvaluesIQ4NL[wb[2+j]>>4])*int(int8(xb[18+j]))
		}
		sum += float32(float32(s) * (f16(wb) * f16(xb)))
	}
	return sum
}

// q8K splits a Q8_K block into its scale, quants and 16-element sums.
func q8K(b []byte) (d float32, qs []byte, bsum func(g int) int) {
	return math.Float32frombits(le32(b)), b[4 : 4+QK_K], func(g int) int {
		return int(int16(le16(b[4+QK_K+2*g:])))
	}
}

// kblock is one decoded K-quant super-block: levels, sub-block scales and
// mins (group elements each) and the super-block scales.
type kblock struct {
	lv      [QK_K]int
	sc, mn  [16]int
	d, dmin float32
}

// dotLevels returns Σ scale[e/group]·level[e]·y[e] over a super-block.
func (k *kblock) dotLevels(group int, y []byte) int {
	s := 0
	for g := 0; g < QK_K/group; g++ {
		gs := 0
		for e := g * group; e < (g+1)*group; e++ {
			gs += k.lv[e] * int(int8(y[e]))
		}
		s += k.sc[g] * gs
	}
	return s
}

// kDot sums the super-blocks of a K-quant row (bsize bytes each) decoded by
// decode against Q8_K activations: d·yd·Σ sc·q·y − dmin·yd·Σ mn·bsum.
func kDot(n, bsize, group int, w, x []byte, decode func(b []byte) kblock) float32 {
	var sum float32
	for b := 0; b < n/QK_K; b++ {
		k := decode(w[bsize*b : bsize*(b+1)])
		yd, ys, bsum := q8K(x[292*b : 292*(b+1)])
		isum := k.dotLevels(group, ys)
		msum := 0
		for g := 0; g < QK_K/group; g++ {
			for j := g * group / 16; j < (g+1)*group/16; j++ {
				msum += k.mn[g] * bsum(j)
			}
		}
		sum += float32(float32(yd*k.d)*float32(isum)) - float32(float32(yd*k.dmin)*float32(msum))
	}
	return sum
}

func dotQ2_KGo(n int, w, x []byte) float32 { return kDot(n, 84, 16, w, x, decodeQ2_K) }

func decodeQ2_K(b []byte) (k kblock) {
	for e := 0; e < QK_K; e++ {
		k.lv[e] = int(b[16+32*(e/128)+e%32]>>(2*uint(e%128/32))) & 3
	}
	for g := 0; g < 16; g++ {
		k.sc[g], k.mn[g] = int(b[g]&0xf), int(b[g]>>4)
	}
	k.d, k.dmin = f16(b[80:]), f16(b[82:])
	return k
}

func dotQ3_KGo(n int, w, x []byte) float32 { return kDot(n, 110, 16, w, x, decodeQ3_K) }

func decodeQ3_K(b []byte) (k kblock) {
	for e := 0; e < QK_K; e++ {
		v := int(b[32+32*(e/128)+e%32]>>(2*uint(e%128/32))) & 3
		if b[e%32]>>uint(e/32)&1 == 0 {
			v -= 4
		}
		k.lv[e] = v
	}
	for g, s := range q3Scales(b[96:108]) {
		k.sc[g], k.mn[g] = int(s)-32, 0
	}
	k.d = f16(b[108:])
	return k
}

func dotQ4_KGo(n int, w, x []byte) float32 { return kDot(n, 144, 32, w, x, decodeQ4_K) }

func decodeQ4_K(b []byte) (k kblock) {
	for e := 0; e < QK_K; e++ {
		k.lv[e] = int(b[16+32*(e/64)+e%32]>>(4*uint(e%64/32))) & 0xf
	}
	k4ScalesMins(b[4:16], &k)
	k.d, k.dmin = f16(b), f16(b[2:])
	return k
}

func dotQ5_KGo(n int, w, x []byte) float32 { return kDot(n, 176, 32, w, x, decodeQ5_K) }

func decodeQ5_K(b []byte) (k kblock) {
	for e := 0; e < QK_K; e++ {
		v := int(b[48+32*(e/64)+e%32]>>(4*uint(e%64/32))) & 0xf
		v |= int(b[16+e%32]>>uint(e/32)&1) << 4
		k.lv[e] = v
	}
	k4ScalesMins(b[4:16], &k)
	k.d, k.dmin = f16(b), f16(b[2:])
	return k
}

func k4ScalesMins(p []byte, k *kblock) {
	for j := 0; j < 8; j++ {
		s, m := scaleMinK4(j, p)
		k.sc[j], k.mn[j] = int(s), int(m)
	}
}

func dotQ6_KGo(n int, w, x []byte) float32 { return kDot(n, 210, 16, w, x, decodeQ6_K) }

func decodeQ6_K(b []byte) (k kblock) {
	for e := 0; e < QK_K; e++ {
		h, r := e/128, e%128
		l, q := r%32, r/32 // element l of quarter q
		lo := b[64*h+l+32*(q&1)] >> (4 * uint(q>>1)) & 0xf
		hi := b[128+32*h+l] >> (2 * uint(q)) & 3
		k.lv[e] = int(lo|hi<<4) - 32
	}
	for g := 0; g < 16; g++ {
		k.sc[g] = int(int8(b[192+g]))
	}
	k.d = f16(b[208:])
	return k
}
