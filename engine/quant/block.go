package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"flowchat/engine/ggml"
)

// The reference quantizer, evaluated in float32 in this exact order:
//
//	lo, hi = min(x), max(x)
//	lo16, d16 = fp16(lo), fp16((hi − lo)/(L − 1))
//	q = clamp(⌊(x − lo16)·(1/d16) + 0.5⌋, 0, L−1)   (q = 0 when d16 = 0 or x is NaN)
//	x' = q·d16 + lo16                               (product rounded, then sum)
//
// Codes are computed against the stored fp16 values, not the exact lo and
// d, so the reconstruction error stays within half a step plus the fp16
// rounding of lo and d. Rounding is half up (round-half-away from zero on
// the non-negative argument), which reproduces the paper's worked example.

// QuantizeBlock encodes one block of f.Block weights into f.Size bytes.
func (f *Format) QuantizeBlock(x []float32, blk []byte) {
	var q [64]uint8
	lo, d := f.levels(x, q[:f.Block])
	binary.LittleEndian.PutUint16(blk, lo)
	binary.LittleEndian.PutUint16(blk[2:], d)
	f.pack(q[:f.Block], blk[headerSize:f.Size])
}

// levels computes the block's fp16 lo and d and the level of each weight.
func (f *Format) levels(x []float32, q []uint8) (lo16, d16 uint16) {
	lo, hi := minMax(x)
	lo16 = ggml.FP32ToFP16(lo)
	d16 = ggml.FP32ToFP16((hi - lo) / float32(f.Levels-1))
	m, d := ggml.FP16ToFP32(lo16), ggml.FP16ToFP32(d16)
	var id float32
	if d > 0 && !math.IsInf(float64(d), 0) {
		id = 1 / d
	}
	top := float32(f.Levels - 1)
	for i, v := range x {
		t := float32((v-m)*id) + 0.5 // conversion: no fused multiply-add
		switch {
		case !(t >= 1): // also NaN
			q[i] = 0
		case t >= top:
			q[i] = uint8(top)
		default:
			q[i] = uint8(t)
		}
	}
	return lo16, d16
}

func minMax(x []float32) (lo, hi float32) {
	lo, hi = x[0], x[0]
	for _, v := range x[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// pack stores the levels q (Block of them) into the block's code planes.
func (f *Format) pack(q []uint8, dst []byte) {
	codes := q
	if f.pairs {
		var c [32]uint8
		for i := range c[:len(q)/2] {
			c[i] = q[2*i]*11 + q[2*i+1]
		}
		codes = c[:len(q)/2]
	}
	clear(dst)
	for _, p := range f.planes {
		n := len(codes) * int(p.width) / 8
		mask := uint8(1)<<p.width - 1
		for i, c := range codes {
			dst[i%n] |= (c >> p.shift & mask) << (uint(i/n) * p.width)
		}
		dst = dst[n:]
	}
}

// unpack decodes a block's code planes into Block levels.
func (f *Format) unpack(src []byte, q []uint8) {
	var c [64]uint8
	codes := c[:f.codes()]
	for _, p := range f.planes {
		n := len(codes) * int(p.width) / 8
		mask := uint8(1)<<p.width - 1
		for i := range codes {
			codes[i] |= (src[i%n] >> (uint(i/n) * p.width) & mask) << p.shift
		}
		src = src[n:]
	}
	if !f.pairs {
		copy(q, codes)
		return
	}
	for i, v := range codes {
		q[2*i], q[2*i+1] = v/11, v%11
	}
}

// DequantizeBlock decodes one block into f.Block floats.
func (f *Format) DequantizeBlock(blk []byte, y []float32) {
	var q [64]uint8
	f.unpack(blk[headerSize:f.Size], q[:f.Block])
	lo, d := blockScales(blk)
	for i := range y[:f.Block] {
		y[i] = float32(float32(q[i])*d) + lo
	}
}

// blockScales reads a block's lo and d.
func blockScales(blk []byte) (lo, d float32) {
	return ggml.FP16ToFP32(binary.LittleEndian.Uint16(blk)), ggml.FP16ToFP32(binary.LittleEndian.Uint16(blk[2:]))
}

// QuantizeRow encodes len(src) weights (a multiple of f.Block) into
// dst, which must hold f.RowSize(len(src)) bytes.
func (f *Format) QuantizeRow(src []float32, dst []byte) {
	f.checkRow(len(src), len(dst))
	for b := 0; b < len(src)/f.Block; b++ {
		f.QuantizeBlock(src[b*f.Block:(b+1)*f.Block], dst[b*f.Size:(b+1)*f.Size])
	}
}

// DequantizeRow decodes len(dst) weights from src (f.RowSize(len(dst)) bytes).
func (f *Format) DequantizeRow(src []byte, dst []float32) {
	f.checkRow(len(dst), len(src))
	for b := 0; b < len(dst)/f.Block; b++ {
		f.DequantizeBlock(src[b*f.Size:(b+1)*f.Size], dst[b*f.Block:(b+1)*f.Block])
	}
}

// checkRow panics on a length mismatch: callers size rows from a tensor's
// shape, so a mismatch is a programmer error.
func (f *Format) checkRow(n, nbytes int) {
	if n%f.Block != 0 {
		panic(fmt.Sprintf("quant: %d weights is not a multiple of the %s block size %d", n, f.Name, f.Block))
	}
	if want := f.RowSize(n); nbytes != want {
		panic(fmt.Sprintf("quant: %s row of %d weights needs %d bytes, got %d", f.Name, n, want, nbytes))
	}
}

// Codes returns the level of every weight of a row (for tests and
// inspection: the paper's worked example is stated in levels).
func (f *Format) Codes(src []byte, n int) []uint8 {
	f.checkRow(n, len(src))
	q := make([]uint8, n)
	for b := 0; b < n/f.Block; b++ {
		f.unpack(src[b*f.Size+headerSize:(b+1)*f.Size], q[b*f.Block:(b+1)*f.Block])
	}
	return q
}
