package ggml

import (
	"fmt"
	"math"
)

// kvaluesIQ4NL is the non-linear 4-bit codebook of IQ4_NL (kvalues_iq4nl).
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

type dequantFunc func(blk []byte, y []float32)

// dequantizers decode one block into BlockSize floats, evaluating in the
// order and precision of ggml-quants.c dequantize_row_* (float32, no fused
// multiply-add), so results are bit-exact with the format definition.
var dequantizers = map[Type]dequantFunc{
	Q4_0: dequantQ4_0, Q4_1: dequantQ4_1, Q5_0: dequantQ5_0, Q5_1: dequantQ5_1,
	Q8_0: dequantQ8_0, Q8_1: dequantQ8_1, Q8_K: dequantQ8_K,
	Q2_K: dequantQ2_K, Q3_K: dequantQ3_K, Q4_K: dequantQ4_K, Q5_K: dequantQ5_K,
	Q6_K: dequantQ6_K, IQ4_NL: dequantIQ4_NL,
}

// DequantizeRow decodes len(dst) elements of type t from src, which must
// hold exactly t.RowSize(len(dst)) bytes. It panics on a size mismatch or an
// unknown type (both are programmer errors: check Type.Known on file input).
func DequantizeRow(t Type, src []byte, dst []float32) {
	checkRow(t, len(dst), len(src))
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le32(src[4*i:]))
		}
		return
	case F16:
		for i := range dst {
			dst[i] = fp16Table[le16(src[2*i:])]
		}
		return
	case BF16:
		for i := range dst {
			dst[i] = BF16ToFP32(le16(src[2*i:]))
		}
		return
	}
	f := dequantizers[t]
	bs, ts := t.BlockSize(), t.TypeSize()
	for b := 0; b < len(dst)/bs; b++ {
		f(src[b*ts:(b+1)*ts], dst[b*bs:(b+1)*bs])
	}
}

func checkRow(t Type, n, nbytes int) {
	if !t.Known() {
		panic(fmt.Sprintf("ggml: unsupported type %v", t))
	}
	if n%t.BlockSize() != 0 {
		panic(fmt.Sprintf("ggml: %d elements is not a multiple of the %v block size %d", n, t, t.BlockSize()))
	}
	if want := t.RowSize(n); nbytes != want {
		panic(fmt.Sprintf("ggml: %v row of %d elements needs %d bytes, got %d", t, n, want, nbytes))
	}
}

func dequantQ4_0(b []byte, y []float32) {
	d := f16(b)
	qs := b[2:18]
	for j := 0; j < 16; j++ {
		y[j] = float32(int(qs[j]&0xf)-8) * d
		y[j+16] = float32(int(qs[j]>>4)-8) * d
	}
}

func dequantQ4_1(b []byte, y []float32) {
	d, m := f16(b), f16(b[2:])
	qs := b[4:20]
	for j := 0; j < 16; j++ {
		y[j] = float32(float32(qs[j]&0xf)*d) + m
		y[j+16] = float32(float32(qs[j]>>4)*d) + m
	}
}

func dequantQ5_0(b []byte, y []float32) {
	d := f16(b)
	qh := le32(b[2:])
	qs := b[6:22]
	for j := 0; j < 16; j++ {
		h0 := byte((qh>>uint(j))<<4) & 0x10
		h1 := byte(qh>>uint(j+12)) & 0x10
		y[j] = float32(int(qs[j]&0xf|h0)-16) * d
		y[j+16] = float32(int(qs[j]>>4|h1)-16) * d
	}
}

func dequantQ5_1(b []byte, y []float32) {
	d, m := f16(b), f16(b[2:])
	qh := le32(b[4:])
	qs := b[8:24]
	for j := 0; j < 16; j++ {
		h0 := byte((qh>>uint(j))<<4) & 0x10
		h1 := byte(qh>>uint(j+12)) & 0x10
		y[j] = float32(float32(qs[j]&0xf|h0)*d) + m
		y[j+16] = float32(float32(qs[j]>>4|h1)*d) + m
	}
}

func dequantQ8_0(b []byte, y []float32) {
	d := f16(b)
	for j, q := range b[2:34] {
		y[j] = float32(int8(q)) * d
	}
}

func dequantQ8_1(b []byte, y []float32) {
	d := f16(b)
	for j, q := range b[4:36] {
		y[j] = float32(int8(q)) * d
	}
}

func dequantQ8_K(b []byte, y []float32) {
	d := math.Float32frombits(le32(b))
	for j, q := range b[4 : 4+QK_K] {
		y[j] = d * float32(int8(q))
	}
}

func dequantIQ4_NL(b []byte, y []float32) {
	d := f16(b)
	qs := b[2:18]
	for j := 0; j < 16; j++ {
		y[j] = d * float32(kvaluesIQ4NL[qs[j]&0xf])
		y[j+16] = d * float32(kvaluesIQ4NL[qs[j]>>4])
	}
}
