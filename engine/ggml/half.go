package ggml

import "math"

// FP16ToFP32 converts an IEEE 754 binary16 value to float32 exactly
// (subnormals, infinities and NaN payloads included).
func FP16ToFP32(h uint16) float32 { return fp16Table[h] }

// fp16Table holds FP16ToFP32 for every half value (256 KiB). Kernels index
// it with a block's raw fp16 scale instead of converting it, which measured
// faster than a per-block vcvtph2ps when compute-bound (PERF-NOTES).
var fp16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = fp16ToFP32Slow(uint16(i))
	}
	return &t
}()

// fp16ToFP32Normal is FP16ToFP32 by bit arithmetic for normal values and
// the table for the others (zeros, subnormals, infinities, NaNs): for the
// serial preparation of decode's activations, where the table's line is
// rarely in cache after a matrix has streamed through (~20 ns a miss, for
// each of TinyLlama's 8096 activation blocks of a token).
func fp16ToFP32Normal(h uint16) float32 {
	if e := h >> 10 & 0x1f; e != 0 && e != 0x1f {
		return math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7fff)+(112<<10))<<13)
	}
	return fp16Table[h]
}

func fp16ToFP32Slow(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // inf or NaN, payload kept
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal half: normalise into a float32 normal.
	e := uint32(113)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

// FP32ToFP16 converts f to binary16 with round-to-nearest-even, as the
// F16C instruction vcvtps2ph (and so ggml on x86) does. NaNs stay NaN
// (quieted, top payload bits kept); overflow gives infinity.
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	if e := exp - 112; e > 0 { // normal half (or overflow via the carry)
		if e >= 0x1f {
			return sign | 0x7c00
		}
		h := uint32(e)<<10 | mant>>13
		h += roundBit(mant, 13, h)
		return sign | uint16(h)
	}
	// Subnormal half: value = (mant|1<<23) * 2^(exp-150); unit 2^-24.
	s := uint(126 - exp)
	if exp == 0 || s > 25 {
		return sign
	}
	m := mant | 0x800000
	q := m >> s
	q += roundBit(m, s, q)
	return sign | uint16(q)
}

// roundBit returns 1 when dropping the low s bits of m (already shifted
// into q) must round q up under round-to-nearest-even.
func roundBit(m uint32, s uint, q uint32) uint32 {
	rem := m & (1<<s - 1)
	half := uint32(1) << (s - 1)
	if rem > half || (rem == half && q&1 == 1) {
		return 1
	}
	return 0
}

// BF16ToFP32 widens a bfloat16 (the top half of a float32).
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 rounds f to bfloat16 as ggml_compute_fp32_to_bf16: round to
// nearest even, NaNs forced quiet.
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}
