package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The Q4_K tile layout: Q4_K matrices in groups of 16 rows, the layout
// AVX-512 VNNI CPUs give them at load (Model.InterleaveRows4; installK16),
// beside the AMX tier's for Q4_0 and Q8_0 (b16.go). Per group and super-block, 2304 bytes (16 rows' 144,
// so a group keeps its size and place, and any run of rows starting on a
// multiple of 16 is itself a matrix in this layout):
//
//	[0, 32)       the 16 rows' d (fp16)
//	[32, 64)      their dmin (fp16)
//	[64, 128)     scLo: byte 16·jj + r, jj < 4: sc_jj & 15 | (sc_jj+4 & 15) << 4
//	[128, 192)    mLo: the same for the mins
//	[192, 256)    hi: byte 16·jj + r: sc_jj>>4 | sc_jj+4>>4 << 2 | m_jj>>4 << 4 | m_jj+4>>4 << 6
//	[256, 2304)   qs: at 256 + 64·(8i + k), byte 4r + t is row r's qs byte 32i + 4k + t
//
// (sc_j, m_j: sub-block j's 6-bit scale and min, scaleMinK4.) One 64-byte
// load of qs is dword k of sub-blocks 2i (low nibbles) and 2i+1 (high
// nibbles) for the 16 rows, so one VPDPBUSD against a broadcast dword of a
// column sums 4 products into each row's lane; the 6-bit scales unpack for
// 16 rows in a few byte operations. What it replaces: the flat kernels
// (q4kf8) took a VPMADDUBSW and a VPDPWSSD per 64 products and a VPERMW per
// sub-block and 8 columns; this takes one VPDPBUSD per 64 products (the
// layout of llama.cpp's AMX buffer for Q4_K does the same).
//
// One rounding for prompts and decode (dotQ4_K16, the twin): per row,
// column and super-block, the exact int32 sum v_j of each sub-block's 32
// products, then
//
//	s   = fma(float32(v_j), float32(sc_j), s)        j = 0…7, s from 0
//	M   = Σ_j m_j·(bsums[2j] + bsums[2j+1])           exact (VPDPWSSD)
//	acc = fma(s, float32(d·d_x), acc)
//	acc = fma(−float32(M), float32(dmin·d_x), acc)
//
// so a sequence's logits are the same in a prompt, a batch or alone.

// k16State says whether the K-quant tile layouts are installed, and why
// not where they are not (Kernels reports it).
var k16State string

// k16Bytes is the bytes of one group's super-block.
const k16Bytes = 16 * 144

// k16Kernels are the Q4_K tile layout's kernels over one group of 16 rows
// and nb super-blocks: eight and four columns (x: the first column's Q8_K
// blocks, xs bytes apart; dst[c·ldd + r]) and one.
type k16Kernels struct {
	eight, four func(w []byte, nb int, x []byte, xs int, dst []float32, ldd int)
	one         func(w []byte, nb int, x []byte, dst []float32)
}

// k16Gemm computes dst[c·ldd + r] for rows rows of w (Q4_K, Q5_K or Q6_K
// in its tile layout) and the Q8_K columns of a: group by group, the columns eight at
// a time, then four, then one by one; the rows past the last group
// (row-major) through the twin. (Eight at a time spreads each line's
// nibble unpacking and the scales' over twice the columns: TinyLlama
// Q4_K_M pp512 on the 2-vCPU AMX VM, docs/PERFORMANCE.md.)
func k16Gemm(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int, k *k16Kernels) {
	if (t != Q4_K && t != Q5_K && t != Q6_K) || a.wt != t || a.n != n {
		panic(fmt.Sprintf("ggml: %v tile layout over columns prepared for %v", t, a.wt))
	}
	dot := dotQ4_K16
	switch t {
	case Q5_K:
		dot = dotQ5_K16
	case Q6_K:
		dot = dotQ6_K16
	}
	nb, rs, xs := n/QK_K, t.RowSize(n), a.xs
	full := rows / 16 * 16
	for g := 0; g < full; g += 16 {
		grp := w[g*rs : (g+16)*rs]
		c := 0
		for ; c+8 <= a.cols; c += 8 {
			k.eight(grp, nb, a.x[c*xs:(c+8)*xs], xs, dst[c*ldd+g:], ldd)
		}
		for ; c+4 <= a.cols; c += 4 {
			k.four(grp, nb, a.x[c*xs:(c+4)*xs], xs, dst[c*ldd+g:], ldd)
		}
		for ; c < a.cols; c++ {
			k.one(grp, nb, a.x[c*xs:(c+1)*xs], dst[c*ldd+g:][:16])
		}
	}
	for r := full; r < rows; r++ {
		row := w[r*rs : (r+1)*rs]
		for c := 0; c < a.cols; c++ {
			dst[c*ldd+r] = dot(n, row, a.Column(c))
		}
	}
}

// dotQ4_K16 is the tile layout's chain on one row-major Q4_K row and a
// Q8_K column (see the top of this file).
func dotQ4_K16(n int, w, x []byte) float32 {
	return k4Chain(n, w, x, 144, func(blk []byte, j, t int) int32 {
		return int32(blk[16+32*(j/2)+t] >> (4 * uint(j%2)) & 15)
	})
}

// k4Chain is the chain of the Q4_K and Q5_K tile layouts over row-major
// blocks of bs bytes (d, dmin and the 12 bytes of 6-bit scales and mins
// first, as both types have them); level(blk, j, t) is value t of
// sub-block j, 0…15 or 0…31.
func k4Chain(n int, w, x []byte, bs int, level func(blk []byte, j, t int) int32) float32 {
	var acc float32
	for b := 0; b < n/QK_K; b++ {
		blk, xb := w[bs*b:bs*(b+1)], x[292*b:292*(b+1)]
		var s float32
		var mins int32
		for j := 0; j < 8; j++ {
			sc, m := scaleMinK4(j, blk[4:16])
			v := int32(0)
			for t := 0; t < 32; t++ {
				v += level(blk, j, t) * int32(int8(xb[4+32*j+t]))
			}
			s = fma32(float32(v), float32(sc), s)
			mins += int32(m) * (int32(int16(le16(xb[260+4*j:]))) + int32(int16(le16(xb[262+4*j:]))))
		}
		dx := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		acc = fma32(s, float32(f16(blk)*dx), acc)
		acc = fma32(-float32(mins), float32(f16(blk[2:])*dx), acc)
	}
	return acc
}

// k16Twins is a K-quant tile layout's kernels in plain Go, the twins of
// its assembly: each of the group's rows read back row-major (row) and run
// through the layout's chain (dot), column by column.
func k16Twins(t Type, row func(grp []byte, nb, r int, dst []byte) []byte, dot func(n int, w, x []byte) float32) k16Kernels {
	one := func(w []byte, nb int, x []byte, dst []float32) {
		n := nb * QK_K
		buf := make([]byte, t.RowSize(n))
		for r := 0; r < 16; r++ {
			dst[r] = dot(n, row(w, nb, r, buf), x)
		}
	}
	cols := func(nc int) func(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
		return func(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
			for c := 0; c < nc; c++ {
				one(w, nb, x[c*xs:(c+1)*xs], dst[c*ldd:][:16])
			}
		}
	}
	return k16Kernels{cols(8), cols(4), one}
}

// k16Go, k16q5Go and k16q6Go are the twins of the three layouts' kernels.
var (
	k16Go   = k16Twins(Q4_K, rows16RowQ4K, dotQ4_K16)
	k16q5Go = k16Twins(Q5_K, rows16RowQ5K, dotQ5_K16)
	k16q6Go = k16Twins(Q6_K, rows16RowQ6K, dotQ6_K16)
)

// rows16InQ4K rewrites one group of 16 row-major Q4_K rows (src, rs bytes
// apart) into the tile layout at dst.
func rows16InQ4K(dst, src []byte, nb, rs int) {
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		tb := (*[k16Bytes]byte)(dst[k16Bytes*b:])
		for r := 0; r < 16; r++ {
			rb := (*[144]byte)(src[r*rs+144*b:])
			tb[2*r], tb[2*r+1] = rb[0], rb[1]
			tb[32+2*r], tb[33+2*r] = rb[2], rb[3]
			var sc, mn [8]byte
			for j := 0; j < 8; j++ {
				sc[j], mn[j] = scaleMinK4(j, rb[4:16])
			}
			for jj := 0; jj < 4; jj++ {
				i := 16*jj + r
				tb[64+i] = sc[jj]&15 | (sc[jj+4]&15)<<4
				tb[128+i] = mn[jj]&15 | (mn[jj+4]&15)<<4
				tb[192+i] = sc[jj]>>4 | sc[jj+4]>>4<<2 | mn[jj]>>4<<4 | mn[jj+4]>>4<<6
			}
			for i := 0; i < 4; i++ {
				for k := 0; k < 8; k++ {
					le.PutUint32(tb[256+64*(8*i+k)+4*r:], le.Uint32(rb[16+32*i+4*k:]))
				}
			}
		}
	}
}

// rows16RowQ4K copies row r of one group in the tile layout (nb
// super-blocks) into dst as a row-major Q4_K row and returns it.
func rows16RowQ4K(grp []byte, nb, r int, dst []byte) []byte {
	le := binary.LittleEndian
	dst = dst[:144*nb]
	for b := 0; b < nb; b++ {
		tb, rb := grp[k16Bytes*b:][:k16Bytes], dst[144*b:][:144]
		rb[0], rb[1], rb[2], rb[3] = tb[2*r], tb[2*r+1], tb[32+2*r], tb[33+2*r]
		var sc, mn [8]byte
		for jj := 0; jj < 4; jj++ {
			i := 16*jj + r
			lo, ml, hi := tb[64+i], tb[128+i], tb[192+i]
			sc[jj], sc[jj+4] = lo&15|(hi&3)<<4, lo>>4|(hi>>2&3)<<4
			mn[jj], mn[jj+4] = ml&15|(hi>>4&3)<<4, ml>>4|(hi>>6)<<4
		}
		for j := 0; j < 4; j++ { // the inverse of scaleMinK4
			rb[4+j] = sc[j] | sc[j+4]>>4<<6
			rb[8+j] = mn[j] | mn[j+4]>>4<<6
			rb[12+j] = sc[j+4]&15 | mn[j+4]&15<<4
		}
		for i := 0; i < 4; i++ {
			for k := 0; k < 8; k++ {
				le.PutUint32(rb[16+32*i+4*k:], le.Uint32(tb[256+64*(8*i+k)+4*r:]))
			}
		}
	}
	return dst
}
