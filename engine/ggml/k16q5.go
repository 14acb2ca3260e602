package ggml

import (
	"encoding/binary"
)

// The Q5_K tile layout: Q4_K's (k16.go) with the fifth bits. Per group of
// 16 rows and super-block, 2816 bytes (16 rows' 176, in place): Q4_K's
// 2304 (d, dmin, the re-split scales and mins, the nibble lines), then
// [2304, 2816) the qh lines, at 2304 + 64k byte 4r + t being row r's qh
// byte 4k + t. A kernel ORs bit j of a qh dword into bit 4 of sub-block
// j's nibbles (a shift and a VPTERNLOGD per line and half), so u = q is
// 0…31 and the chain is dotQ4_K16's (dotQ5_K16, the twin).

// k16q5Bytes is the bytes of one group's super-block.
const k16q5Bytes = 16 * 176

// dotQ5_K16 is the Q5_K tile layout's chain on one row-major Q5_K row and
// a Q8_K column: dotQ4_K16's, over 5-bit values.
func dotQ5_K16(n int, w, x []byte) float32 {
	return k4Chain(n, w, x, 176, func(blk []byte, j, t int) int32 {
		return int32(blk[48+32*(j/2)+t]>>(4*uint(j%2))&15 | (blk[16+t]>>uint(j)&1)<<4)
	})
}

// q5AsQ4 is a Q5_K block's fields in Q4_K's block order (d, dmin, scales,
// qs), the part rows16InQ4K lays out.
func q5AsQ4(dst *[144]byte, rb []byte) {
	copy(dst[:16], rb[:16])
	copy(dst[16:], rb[48:176])
}

// rows16InQ5K rewrites one group of 16 row-major Q5_K rows (src, rs bytes
// apart) into the tile layout at dst.
func rows16InQ5K(dst, src []byte, nb, rs int) {
	le := binary.LittleEndian
	var q4 [16 * 144]byte
	for b := 0; b < nb; b++ {
		tb := (*[k16q5Bytes]byte)(dst[k16q5Bytes*b:])
		for r := 0; r < 16; r++ {
			q5AsQ4((*[144]byte)(q4[144*r:]), src[r*rs+176*b:])
		}
		rows16InQ4K(tb[:k16Bytes], q4[:], 1, 144)
		for r := 0; r < 16; r++ {
			rb := src[r*rs+176*b:]
			for k := 0; k < 8; k++ {
				le.PutUint32(tb[k16Bytes+64*k+4*r:], le.Uint32(rb[16+4*k:]))
			}
		}
	}
}

// rows16RowQ5K copies row r of one group in the tile layout (nb
// super-blocks) into dst as a row-major Q5_K row and returns it.
func rows16RowQ5K(grp []byte, nb, r int, dst []byte) []byte {
	le := binary.LittleEndian
	dst = dst[:176*nb]
	var q4 [144]byte
	for b := 0; b < nb; b++ {
		tb, rb := grp[k16q5Bytes*b:][:k16q5Bytes], dst[176*b:][:176]
		rows16RowQ4K(tb[:k16Bytes], 1, r, q4[:])
		copy(rb[:16], q4[:16])
		copy(rb[48:], q4[16:])
		for k := 0; k < 8; k++ {
			le.PutUint32(rb[16+4*k:], le.Uint32(tb[k16Bytes+64*k+4*r:]))
		}
	}
	return dst
}
