package ggml

import (
	"encoding/binary"
	"math"
)

// The Q6_K tile layout: Q6_K matrices in groups of 16 rows, beside Q4_K's
// (k16.go) and for the same reason. Per group and super-block, 3360 bytes
// (16 rows' 210, in place):
//
//	[0, 32)        the 16 rows' d (fp16)
//	[32, 288)      scales: byte 32p + 2r + s is row r's scale of sub-block 2p+s
//	               (so that 32 bytes widen to the word pairs of sub-blocks
//	               2p, 2p+1 per row)
//	[288, 2336)    ql: at 288 + 64·(16h + 8m + k), byte 4r + t is row r's
//	               ql byte 64h + 32m + 4k + t
//	[2336, 3360)   qh: at 2336 + 64·(8h + k), byte 4r + t is row r's qh
//	               byte 32h + 4k + t
//
// A kernel builds each 6-bit value u = q + 32 (0…63) of dword k of 16 rows
// from one ql line and one qh line in four byte operations, and adds its
// products with a column by VPDPBUSD. The chain (dotQ6_K16, the twin), per
// row, column and super-block: the sub-blocks j (16 values) in the order
// h = 0, 1; kk = 0, 1; g = 0…3 (j = 8h + 2g + kk), v_j = Σ u·x exact,
//
//	s   = fma(float32(v_j), float32(sc_j), s)    s from 0
//	M   = Σ_j sc_j·bsum_j                         exact (the 32 of u = q + 32)
//	t   = float32(d·d_x)
//	acc = fma(s, t, acc); acc = fma(−float32(32·M), t, acc)

// k16q6Bytes is the bytes of one group's super-block.
const k16q6Bytes = 16 * 210

// q6u is the 6-bit value u = q + 32 of element e of a row-major Q6_K block.
func q6u(blk []byte, e int) int32 {
	h, l, g := e/128, e%32, e%128/32
	lo := blk[64*h+32*(g&1)+l] >> (4 * uint(g>>1)) & 15
	hi := blk[128+32*h+l] >> (2 * uint(g)) & 3
	return int32(lo | hi<<4)
}

// dotQ6_K16 is the tile layout's chain on one row-major Q6_K row and a
// Q8_K column.
func dotQ6_K16(n int, w, x []byte) float32 {
	var acc float32
	for b := 0; b < n/QK_K; b++ {
		blk, xb := w[210*b:210*(b+1)], x[292*b:292*(b+1)]
		var s float32
		var mins int32
		for h := 0; h < 2; h++ {
			for kk := 0; kk < 2; kk++ {
				for g := 0; g < 4; g++ {
					j := 8*h + 2*g + kk
					v := int32(0)
					for i := 0; i < 16; i++ {
						e := 128*h + 32*g + 16*kk + i
						v += q6u(blk, e) * int32(int8(xb[4+e]))
					}
					s = fma32(float32(v), float32(int8(blk[192+j])), s)
				}
			}
		}
		for j := 0; j < 16; j++ {
			mins += int32(int8(blk[192+j])) * int32(int16(le16(xb[260+2*j:])))
		}
		dx := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		t := float32(f16(blk[208:]) * dx)
		acc = fma32(s, t, acc)
		acc = fma32(-float32(32*mins), t, acc)
	}
	return acc
}

// rows16InQ6K rewrites one group of 16 row-major Q6_K rows (src, rs bytes
// apart) into the tile layout at dst.
func rows16InQ6K(dst, src []byte, nb, rs int) {
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		tb := (*[k16q6Bytes]byte)(dst[k16q6Bytes*b:])
		for r := 0; r < 16; r++ {
			rb := (*[210]byte)(src[r*rs+210*b:])
			tb[2*r], tb[2*r+1] = rb[208], rb[209]
			for j := 0; j < 16; j++ {
				tb[32+32*(j/2)+2*r+j%2] = rb[192+j]
			}
			for i := 0; i < 32; i++ { // ql dwords: i = 16h + 8m + k
				le.PutUint32(tb[288+64*i+4*r:], le.Uint32(rb[4*i:]))
			}
			for i := 0; i < 16; i++ { // qh dwords: i = 8h + k
				le.PutUint32(tb[2336+64*i+4*r:], le.Uint32(rb[128+4*i:]))
			}
		}
	}
}

// rows16RowQ6K copies row r of one group in the tile layout (nb
// super-blocks) into dst as a row-major Q6_K row and returns it.
func rows16RowQ6K(grp []byte, nb, r int, dst []byte) []byte {
	le := binary.LittleEndian
	dst = dst[:210*nb]
	for b := 0; b < nb; b++ {
		tb, rb := grp[k16q6Bytes*b:][:k16q6Bytes], dst[210*b:][:210]
		rb[208], rb[209] = tb[2*r], tb[2*r+1]
		for j := 0; j < 16; j++ {
			rb[192+j] = tb[32+32*(j/2)+2*r+j%2]
		}
		for i := 0; i < 32; i++ {
			le.PutUint32(rb[4*i:], le.Uint32(tb[288+64*i+4*r:]))
		}
		for i := 0; i < 16; i++ {
			le.PutUint32(rb[128+4*i:], le.Uint32(tb[2336+64*i+4*r:]))
		}
	}
	return dst
}
