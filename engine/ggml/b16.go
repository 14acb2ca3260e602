package ggml

import (
	"encoding/binary"
	"fmt"
)

// The tile layout (Rows16) of a Q4_0 or Q8_0 matrix, the interleaved
// layout of the AMX tier (amx_amd64.go): rows in groups of 16, each group
// stored block by block, block b of the group taking 16·TypeSize bytes at
// 16·TypeSize·b:
//
//	32 bytes   the 16 rows' fp16 scales d_w, row m at 2m;
//	then       Q8_0: 8 chunks of 64 bytes, chunk k holding dword k
//	           (values 4k..4k+3) of each row, row m's at 64k + 4m;
//	           Q4_0: 4 chunks of 64 bytes, chunk k holding row m's nibble
//	           bytes qs[4k..4k+3] at 64k + 4m, whose low nibbles are values
//	           4k..4k+3 and high nibbles values 16+4k..16+4k+3.
//
// The rows past the last full group stay row-major. A group takes
// 16·RowSize bytes at 16·RowSize·g, so a run of rows starting on a
// multiple of 16 (the engine's row chunks) is itself a matrix in this
// layout, as with the 4-row interleave (rows4.go).
//
// Why a third layout: it gives one rounding to prompt batches and decode.
// A Q8_0 chunk is the B operand of TDPBSSD as it lies (8 rows of 64 bytes:
// dword k of 16 weight rows), with the activations' Q8_0 columns as the A
// tile, read in place; and the same chunk is 16 rows' dword k side by side
// for one VPDPBUSD against a broadcast dword of one column. Both compute
// per row and block the exact integer sum of the 32 products, and then
// the same chain, acc = fma(float32(Σ), float32(d_w·d_x), acc) block after
// block (blocksQ32, the twin): prompt batches of any width and token-by-
// token decode give the same bits, which the preemption recompute and the
// batch-invariance tests need. The VNNI tiers' lane sums (lanesQ32) could
// not be had from the tiles (amx.go), which is why the earlier AMX tier
// over the row-major layout was opt-in.

// tileRows16 marks the types whose interleaved layout (Rows4, InterleaveRows4)
// is the tile layout here (set with the AMX tier).
var tileRows16 [32]bool

// InterleaveGroup is the rows of a group of t's interleaved layout here: 16
// (the tile layout) or 4.
func InterleaveGroup(t Type) int {
	if int(t) < len(tileRows16) && tileRows16[t] {
		return 16
	}
	return 4
}

// rows16Move rewrites the rows × n matrix w of type t (Q4_0, Q8_0, or
// Q4_K, Q5_K and Q6_K: k16.go, k16q5.go, k16q6.go)
// between row-major and the tile layout (in: to it), group by group
// through scratch (16 rows; allocated when short).
func rows16Move(t Type, n int, w []byte, rows int, scratch []byte, in bool) {
	rs := t.RowSize(n)
	if (t != Q4_0 && t != Q8_0 && t != Q4_K && t != Q5_K && t != Q6_K) || len(w) < rs*rows || n%t.BlockSize() != 0 {
		panic(fmt.Sprintf("ggml: tile layout %v %dx%d: %d bytes", t, rows, n, len(w)))
	}
	if len(scratch) < 16*rs {
		scratch = make([]byte, 16*rs)
	}
	for g := 0; g+16 <= rows; g += 16 {
		grp := w[g*rs : (g+16)*rs]
		copy(scratch, grp)
		if in {
			rows16In(t, n, grp, scratch[:16*rs])
			continue
		}
		for m := 0; m < 16; m++ { // the group in scratch is a 16-row matrix in the layout
			rows16Row(t, n, scratch, 16, m, grp[m*rs:])
		}
	}
}

// rows16In lays out one group of 16 row-major rows src into dst (the same
// size, not overlapping) in the tile layout.
func rows16In(t Type, n int, dst, src []byte) {
	nb, rs := n/t.BlockSize(), t.RowSize(n)
	switch t {
	case Q4_K:
		rows16InQ4K(dst, src, nb, rs)
	case Q6_K:
		rows16InQ6K(dst, src, nb, rs)
	case Q5_K:
		rows16InQ5K(dst, src, nb, rs)
	case Q8_0:
		rows16InQ8Impl(dst, src, nb, rs)
	default:
		rows16InQ4Impl(dst, src, nb, rs)
	}
}

// rows16InQ8Impl and rows16InQ4Impl lay out one group: the plain-Go twins
// below, or on AVX2 the same bytes by transposes of dwords
// (b16move_amd64.s; TestRows16InAsm).
var rows16InQ8Impl, rows16InQ4Impl = rows16InQ8, rows16InQ4

// rows16InQ8 is rows16Move's rewrite of one Q8_0 group (the load's hot
// loop): the group's row-major rows in src, rs bytes apart, to dst, with
// the sizes fixed so that the dword moves need no bounds checks.
func rows16InQ8(dst, src []byte, nb, rs int) {
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		tb := (*[544]byte)(dst[544*b:])
		for m := 0; m < 16; m++ {
			rb := (*[34]byte)(src[m*rs+34*b:])
			tb[2*m&31], tb[(2*m+1)&31] = rb[0], rb[1]
			q := (*[64*7 + 4]byte)(tb[32+4*(m&15):])
			le.PutUint32(q[0:], le.Uint32(rb[2:]))
			le.PutUint32(q[64:], le.Uint32(rb[6:]))
			le.PutUint32(q[128:], le.Uint32(rb[10:]))
			le.PutUint32(q[192:], le.Uint32(rb[14:]))
			le.PutUint32(q[256:], le.Uint32(rb[18:]))
			le.PutUint32(q[320:], le.Uint32(rb[22:]))
			le.PutUint32(q[384:], le.Uint32(rb[26:]))
			le.PutUint32(q[448:], le.Uint32(rb[30:]))
		}
	}
}

// rows16InQ4 is rows16InQ8 for Q4_0 (18-byte blocks, 288 a group).
func rows16InQ4(dst, src []byte, nb, rs int) {
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		tb := (*[288]byte)(dst[288*b:])
		for m := 0; m < 16; m++ {
			rb := (*[18]byte)(src[m*rs+18*b:])
			tb[2*m&31], tb[(2*m+1)&31] = rb[0], rb[1]
			q := (*[64*3 + 4]byte)(tb[32+4*(m&15):])
			le.PutUint32(q[0:], le.Uint32(rb[2:]))
			le.PutUint32(q[64:], le.Uint32(rb[6:]))
			le.PutUint32(q[128:], le.Uint32(rb[10:]))
			le.PutUint32(q[192:], le.Uint32(rb[14:]))
		}
	}
}

// rows16Row copies row r of the rows × n matrix w in the tile layout into
// dst (RowSize(n) bytes) and returns it.
func rows16Row(t Type, n int, w []byte, rows, r int, dst []byte) []byte {
	rs, ts := t.RowSize(n), t.TypeSize()
	dst = dst[:rs]
	if r >= rows/16*16 {
		copy(dst, w[r*rs:(r+1)*rs])
		return dst
	}
	grp, m := w[r/16*16*rs:], r%16
	switch t {
	case Q4_K:
		return rows16RowQ4K(grp, n/QK_K, m, dst)
	case Q5_K:
		return rows16RowQ5K(grp, n/QK_K, m, dst)
	case Q6_K:
		return rows16RowQ6K(grp, n/QK_K, m, dst)
	}
	for b := 0; b < n/32; b++ {
		tb := 16 * ts * b
		copy(dst[ts*b:ts*b+2], grp[tb+2*m:])
		for k := 0; k < (ts-2)/4; k++ {
			copy(dst[ts*b+2+4*k:ts*b+6+4*k], grp[tb+32+64*k+4*m:])
		}
	}
	return dst
}

// b16Off is the correction's offset of the tile layout's integer sums:
// VPDPBUSD takes the weights as unsigned bytes, Q4_0's nibbles q (w = q−8)
// and Q8_0's w+128, so a block's sum starts at off·Σx.
func b16Off(t Type) int32 {
	if t == Q4_0 {
		return -8
	}
	return -128
}

// fillB16 writes column c's (zeros past the last column, which only the
// tiles read: Fill pads only for them) d_x and
// correction off·Σx per block at bIndex(c, b) of bdx and bcorr: for one
// column, bstep apart block after block (the decode kernels), for a group
// of 16, the block's 16 columns together (the tiles' d_x).
// For the tiles (bqs sized: amxCols[t] columns or more) it also packs the
// column's 32 values of block b at ((c/16)·nb + b)·512 + 32·(c%16): a
// block's A tile in 512 contiguous bytes (8 cache lines, where the columns
// in place took 16 to 32, which bound the tiles by the L2's bandwidth).
func (a *Act) fillB16(c int) {
	nb, off := a.n/32, b16Off(a.wt)
	for b := 0; b < nb; b++ {
		i := a.bIndex(c, b)
		var q []byte
		if len(a.bqs) > 0 {
			q = a.bqs[32*i:][:32]
		}
		if c >= a.cols {
			a.bdx[i], a.bcorr[i] = 0, 0
			clear(q)
			continue
		}
		blk := a.x[c*a.xs+34*b:][:34]
		copy(q, blk[2:])
		a.bdx[i], a.bcorr[i] = fp16ToFP32Normal(le16(blk)), off*blockSum(blk[2:])
	}
}

// prepareB16 readies a's cols columns x (Q8_0) for the tile layout's
// kernels of t alone, as Begin and Fill do where the layout is installed;
// pack: the AMX tiles' packed operands too. The self-check and the tests
// use it with the layout installed or not.
func (a *Act) prepareB16(t Type, n int, x []byte, cols int, pack bool) {
	a.begin(t, n, x, cols, prepKindQ8, b16Off(t), 1)
	a.b16 = true
	a.growB16(n/32, cols, pack)
	a.Fill(0, cols)
}

// bIndex is where column c's d_x and correction of block b lie in bdx and
// bcorr: ((c/16)·nb + b)·bstep + c%16 (bstep 1 only for a lone column).
func (a *Act) bIndex(c, b int) int {
	return ((c/16)*(a.n/32)+b)*a.bstep + c%16
}

// growB16 sizes bdx and bcorr for cols columns of nb blocks, and bqs
// where the AMX tiles will take them (pack, and amxCols[t] columns or
// more); and sets bstep.
func (a *Act) growB16(nb, cols int, pack bool) {
	size := (cols + 15) / 16 * 16 * nb
	if cap(a.bdx) < size {
		a.bdx, a.bcorr = make([]float32, size), make([]int32, size)
	}
	a.bdx, a.bcorr, a.bqs = a.bdx[:size], a.bcorr[:size], a.bqs[:0]
	a.bstep = 16
	if pack && cols >= amxCols[a.wt] {
		if cap(a.bqs) < 32*size {
			a.bqs = make([]byte, 32*size)
		}
		a.bqs = a.bqs[:32*size]
	} else if cols == 1 { // decode's: no tile reads the operands 16 apart
		a.bstep = 1
	}
}

// b16Twin computes what the tile layout's kernels compute, through the
// block twin (blocksQ32) row by row: the reference of their tests and of
// the start-up self-check, and the kernel of the rows past the last full
// group.
func b16Twin(t Type, n int, w []byte, rows, r0, r1 int, a *Act, dst []float32, ldd int) {
	rs := t.RowSize(n)
	row := make([]byte, rs)
	dot := dotQ8_0Blocks
	if t == Q4_0 {
		dot = dotQ4_0Blocks
	}
	for r := r0; r < r1; r++ {
		rw := rows16Row(t, n, w, rows, r, row)
		for c := 0; c < a.cols; c++ {
			dst[c*ldd+r] = dot(n, rw, a.Column(c))
		}
	}
}

// r16State says whether the tile layout of Q4_0 and Q8_0 below AMX
// (r16_amd64.go) is installed, with which kernels, and why not where it
// could be (Kernels shows it); empty in builds without those kernels.
var r16State string

// r16On reports whether the kernels below AMX run the tile layout
// (r16_amd64.go): they read the columns in place, so Acts pack no bqs.
var r16On bool

// b16On marks the types whose Acts carry the tile layout's operands (set
// with the AMX tier, or below it by installR16: Q4_0 and Q8_0).
var b16On [32]bool
