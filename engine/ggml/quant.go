package ggml

import "math"

type quantFunc func(x []float32, blk []byte)

// refQuantizers quantize one block the way llama-quantize does without an
// importance matrix: ggml-quants.c quantize_row_*_ref for the legacy and
// 8-bit types, quantize_q*_K / quantize_iq4_nl with imatrix = NULL for the
// rest. Float operations are evaluated in float32 in the C order.
var refQuantizers = map[Type]quantFunc{
	Q4_0: quantRefQ4_0, Q4_1: quantRefQ4_1, Q5_0: quantRefQ5_0, Q5_1: quantRefQ5_1,
	Q8_0: quantRefQ8_0, Q8_1: quantRefQ8_1, Q8_K: quantRefQ8_K,
	Q2_K: quantRefQ2_K, Q3_K: quantRefQ3_K, Q4_K: quantRefQ4_K, Q5_K: quantRefQ5_K,
	Q6_K: quantRefQ6_K, IQ4_NL: quantRefIQ4_NL,
}

// QuantizeRow encodes src as type t into dst (t.RowSize(len(src)) bytes)
// with ggml's reference quantizers, so quantizing a GGUF's F32 tensor
// reproduces llama-quantize's output byte for byte. For activations that
// feed VecDot/MatVec use QuantizeActivation, which follows ggml-cpu.
func QuantizeRow(t Type, src []float32, dst []byte) {
	checkRow(t, len(src), len(dst))
	if quantizeFloat(t, src, dst) {
		return
	}
	f := refQuantizers[t]
	bs, ts := t.BlockSize(), t.TypeSize()
	for b := 0; b < len(src)/bs; b++ {
		f(src[b*bs:(b+1)*bs], dst[b*ts:(b+1)*ts])
	}
}

// quantizeFloat handles F32/F16/BF16; it reports false for other types.
func quantizeFloat(t Type, src []float32, dst []byte) bool {
	switch t {
	case F32:
		copy(dst, F32Bytes(src))
	case F16:
		for i, v := range src {
			put16(dst[2*i:], FP32ToFP16(v))
		}
	case BF16:
		for i, v := range src {
			put16(dst[2*i:], FP32ToBF16(v))
		}
	default:
		return false
	}
	return true
}

// QuantizeActivation encodes an activation row as type t (normally
// w.VecDotType()) the way ggml-cpu's from_float does on an AVX2 machine,
// which is what llama.cpp runs before each quantized product: for Q8_0 and
// Q8_1 that is id = 127/amax and round-half-even (quantize_row_q8_0/_1),
// which differs from the reference quantizer in rare last-bit cases; Q8_K
// and the float types are the same as QuantizeRow.
func QuantizeActivation(t Type, src []float32, dst []byte) {
	checkRow(t, len(src), len(dst))
	switch t {
	case Q8_0:
		quantActQ8Rows(src, dst, false)
	case Q8_1:
		quantActQ8Rows(src, dst, true)
	case F16:
		fp32ToFP16Row(src, dst)
	case Q8_K:
		quantActQ8K(src, dst)
	default:
		QuantizeRow(t, src, dst)
	}
}

// quantActQ8Rows and fp32ToFP16Row are replaced by assembly where the CPU
// allows; the Go versions are their reference.
var (
	quantActQ8Rows = quantActQ8Go
	fp32ToFP16Row  = fp32ToFP16Go
	quantActQ8K    = quantActQ8KGo
)

func quantActQ8KGo(x []float32, y []byte) {
	for b := 0; b < len(x)/QK_K; b++ {
		quantRefQ8_K(x[QK_K*b:QK_K*(b+1)], y[292*b:292*(b+1)])
	}
}

func quantActQ8Go(x []float32, y []byte, withSum bool) {
	bs := 34
	if withSum {
		bs = 36
	}
	for b := 0; b < len(x)/32; b++ {
		quantActQ8(x[32*b:32*b+32], y[bs*b:bs*b+bs], withSum)
	}
}

func fp32ToFP16Go(x []float32, y []byte) {
	for i, v := range x {
		put16(y[2*i:], FP32ToFP16(v))
	}
}

// quantActQ8 is ggml-cpu's AVX2 quantize_row_q8_0 (withSum: _q8_1) for one
// block of 32.
func quantActQ8(x []float32, blk []byte, withSum bool) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	qs := blk[2:34]
	if withSum {
		qs = blk[4:36]
	}
	sum := 0
	for j, v := range x {
		// |v·id| <= 127(1+2^-23): nearestInt rounds half to even as
		// _mm256_round_ps(_MM_ROUND_NEAREST) does.
		q := nearestInt(v * id)
		qs[j] = byte(int8(q))
		sum += q
	}
	put16(blk, FP32ToFP16(d))
	if withSum {
		put16(blk[2:], FP32ToFP16(d*float32(sum)))
	}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// nearestInt rounds half to even through the 1.5*2^23 trick of ggml's
// nearest_int; valid for |f| <= 4194303.
func nearestInt(f float32) int {
	v := f + 12582912
	return int(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// roundf rounds half away from zero, as C's roundf.
func roundf(f float32) float32 { return float32(math.Round(float64(f))) }

// truncI8 is C's (int8_t) conversion of a float in int8 range.
func truncI8(f float32) int { return int(int8(int32(f))) }

// absMaxSigned returns the element of largest magnitude (first one on ties)
// and its magnitude.
func absMaxSigned(x []float32) (maxv, amax float32) {
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, maxv = a, v
		}
	}
	return maxv, amax
}

func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

func inv(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

func quantRefQ4_0(x []float32, b []byte) {
	maxv, _ := absMaxSigned(x)
	d := maxv / -8
	id := inv(d)
	put16(b, FP32ToFP16(d))
	for j := 0; j < 16; j++ {
		x0 := min(15, truncI8(float32(x[j]*id)+8.5))
		x1 := min(15, truncI8(float32(x[j+16]*id)+8.5))
		b[2+j] = byte(x0) | byte(x1)<<4
	}
}

func quantRefQ4_1(x []float32, b []byte) {
	lo, hi := minMax(x)
	d := (hi - lo) / 15
	id := inv(d)
	put16(b, FP32ToFP16(d))
	put16(b[2:], FP32ToFP16(lo))
	for j := 0; j < 16; j++ {
		x0 := min(15, truncI8(float32((x[j]-lo)*id)+0.5))
		x1 := min(15, truncI8(float32((x[j+16]-lo)*id)+0.5))
		b[4+j] = byte(x0) | byte(x1)<<4
	}
}

func quantRefQ5_0(x []float32, b []byte) {
	maxv, _ := absMaxSigned(x)
	d := maxv / -16
	id := inv(d)
	put16(b, FP32ToFP16(d))
	var qh uint32
	for j := 0; j < 16; j++ {
		x0 := byte(min(31, truncI8(float32(x[j]*id)+16.5)))
		x1 := byte(min(31, truncI8(float32(x[j+16]*id)+16.5)))
		b[6+j] = x0&0xf | (x1&0xf)<<4
		qh |= uint32(x0>>4&1)<<uint(j) | uint32(x1>>4&1)<<uint(j+16)
	}
	put32(b[2:], qh)
}

func quantRefQ5_1(x []float32, b []byte) {
	lo, hi := minMax(x)
	d := (hi - lo) / 31
	id := inv(d)
	put16(b, FP32ToFP16(d))
	put16(b[2:], FP32ToFP16(lo))
	var qh uint32
	for j := 0; j < 16; j++ {
		x0 := byte(int32(float32((x[j]-lo)*id) + 0.5))
		x1 := byte(int32(float32((x[j+16]-lo)*id) + 0.5))
		b[8+j] = x0&0xf | (x1&0xf)<<4
		qh |= uint32(x0>>4&1)<<uint(j) | uint32(x1>>4&1)<<uint(j+16)
	}
	put32(b[4:], qh)
}

func quantRefQ8_0(x []float32, b []byte) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	id := inv(d)
	put16(b, FP32ToFP16(d))
	for j, v := range x {
		b[2+j] = byte(int8(roundf(v * id)))
	}
}

func quantRefQ8_1(x []float32, b []byte) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	id := inv(d)
	put16(b, FP32ToFP16(d))
	sum := 0
	for j, v := range x {
		q := int8(roundf(v * id))
		b[4+j] = byte(q)
		sum += int(q)
	}
	put16(b[2:], FP32ToFP16(float32(sum)*d))
}

func quantRefQ8_K(x []float32, b []byte) {
	maxv, amax := absMaxSigned(x)
	qs := b[4 : 4+QK_K]
	if amax == 0 {
		clear(b)
		return
	}
	iscale := -127 / maxv
	for j, v := range x {
		qs[j] = byte(int8(min(127, nearestInt(iscale*v))))
	}
	for j := 0; j < QK_K/16; j++ {
		sum := 0
		for _, q := range qs[16*j : 16*j+16] {
			sum += int(int8(q))
		}
		put16(b[4+QK_K+2*j:], uint16(int16(sum)))
	}
	put32(b, math.Float32bits(1/iscale))
}
