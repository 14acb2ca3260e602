package ggml

import (
	"fmt"
	"unsafe"
)

// The interleaved layout (Rows4) of a block-quantized matrix: its rows in
// groups of 4, each group stored block by block, the 4 rows' k-th blocks
// one after the other (row i's block k at (4k+i)·bs within the group), the
// rows past the last full group row-major as before. A group still takes
// 4·RowSize bytes at 4·RowSize·g, so any run of rows starting on a multiple
// of 4 is itself a matrix in this layout. The decode kernels read one
// group as one sequential stream instead of four: on the EPYC VM the Q4_0
// strip read 19-22 GB/s of weights on one core this way against 14-16
// row-major (BenchmarkKStream, docs/PERFORMANCE.md, issue 18), because a
// prefetch per line ahead of one stream keeps up where four streams and
// the hardware prefetcher did not. The arithmetic is unchanged: results are
// bit-identical to the row-major kernels (TestRows4MatchesRowMajor).

// gemmRows4 holds the matrix kernels on the interleaved layout by weight
// type (nil: no such layout on this CPU).
var gemmRows4 [32]gemmFunc

// rows4Pairs marks the types whose interleaved layout here also pairs the
// blocks (the AVX2 tier's Q4_0): each pair of a group's blocks, rows 0-1
// and 2-3 of block k, is stored as [d_a d_b qs_a qs_b] instead of
// [d_a qs_a d_b qs_b], 36 bytes either way, so that one load takes both
// rows' nibbles and another both scales (gemm_amd64.s, "pair layout").
// The group's size and place are unchanged, and so is a pair's start.
var rows4Pairs [32]bool

// pairSwap converts one 36-byte pair of Q4_0 blocks between the two
// layouts: [d_a qs_a d_b qs_b] → [d_a d_b qs_a qs_b] (split) or back.
func pairSwap(p []byte, split bool) {
	var t [36]byte
	copy(t[:], p[:36])
	if split {
		copy(p[2:4], t[18:20])
		copy(p[4:20], t[2:18])
	} else {
		copy(p[2:18], t[4:20])
		copy(p[18:20], t[2:4])
	}
}

// Rows4 reports whether matrices of type t can be held interleaved
// (InterleaveRows4) and multiplied that way (MatMulActRows4) here.
func Rows4(t Type) bool { return int(t) < len(gemmRows4) && gemmRows4[t] != nil }

// InterleaveRows4 rewrites the rows × n matrix w of type t in place from
// row-major to the interleaved layout here: groups of 4 rows, or with the
// AMX tier the tile layout of Q4_0 and Q8_0 (b16.go); scratch holds
// InterleaveGroup(t) rows (nil or short: they are allocated).
func InterleaveRows4(t Type, n int, w []byte, rows int, scratch []byte) {
	if tileRows16[t] {
		rows16Move(t, n, w, rows, scratch, true)
		return
	}
	rows4Move(t, n, w, rows, scratch, true, rows4Pairs[t])
}

// InterleaveRowsTo writes the rows × n row-major matrix src of type t
// into dst in the interleaved layout here: what copying src to dst and
// then InterleaveRows4 give, in one pass. The huge-page copy of a load
// reads each run of rows into a small buffer and lays it out into its
// place this way (engine/model/loadcopy.go), instead of a second pass over
// the whole copy. A run starting on a multiple of InterleaveGroup(t) rows
// is itself a matrix in the layout, so a matrix may be written run by run.
func InterleaveRowsTo(t Type, n int, dst, src []byte, rows int) {
	rs := t.RowSize(n)
	if len(dst) < rs*rows || len(src) < rs*rows || rs%t.RowSize(t.BlockSize()) != 0 {
		panic(fmt.Sprintf("ggml: interleave %v %dx%d: %d bytes into %d", t, rows, n, len(src), len(dst)))
	}
	g := InterleaveGroup(t)
	full := rows / g * g
	for r := 0; r < full; r += g {
		if g == 16 {
			rows16In(t, n, dst[r*rs:(r+g)*rs], src[r*rs:(r+g)*rs])
		} else {
			rows4In(t, n, dst[r*rs:(r+g)*rs], src[r*rs:(r+g)*rs], rows4Pairs[t])
		}
	}
	copy(dst[full*rs:rows*rs], src[full*rs:rows*rs])
}

// rows4In lays out one group of 4 row-major rows src into dst (the same
// size, not overlapping), with the blocks paired or not.
func rows4In(t Type, n int, dst, src []byte, pairs bool) {
	rs, bs := t.RowSize(n), t.RowSize(t.BlockSize())
	nb := rs / bs
	switch bs { // the load's hot loop: fixed-size moves, not a copy call a block
	case 18:
		rows4Blocks[[18]byte](dst, src, nb, rs)
	case 34:
		rows4Blocks[[34]byte](dst, src, nb, rs)
	case 144:
		rows4Blocks[[144]byte](dst, src, nb, rs)
	case 176:
		rows4Blocks[[176]byte](dst, src, nb, rs)
	case 210:
		rows4Blocks[[210]byte](dst, src, nb, rs)
	default:
		for i := 0; i < 4; i++ {
			for k := 0; k < nb; k++ {
				rm, il := i*rs+k*bs, (4*k+i)*bs // row-major and interleaved offsets
				copy(dst[il:il+bs], src[rm:rm+bs])
			}
		}
	}
	if pairs {
		for p := 0; p < len(dst); p += 2 * bs {
			pairSwap(dst[p:], true)
		}
	}
}

// rows4Blocks is rows4In's move for blocks of B's size: block k of row i
// (at i·rs + k·bs in src) to (4k + i)·bs in dst. On the Zen 3 VM it moved
// TinyLlama-wide Q4_K groups at 5.9–8.9 GB/s against 5.1–5.9 with a copy
// call a block, Q6_K at 7.4–10.2 against 6.0–7.2 (a throwaway benchmark,
// docs/PERFORMANCE.md, sitting 21).
func rows4Blocks[B any](dst, src []byte, nb, rs int) {
	bs := int(unsafe.Sizeof(*new(B)))
	if nb <= 0 {
		return
	}
	_, _ = dst[4*nb*bs-1], src[3*rs+nb*bs-1]
	for k := 0; k < nb; k++ {
		d, s := dst[4*k*bs:], src[k*bs:]
		*(*B)(unsafe.Pointer(&d[0])) = *(*B)(unsafe.Pointer(&s[0]))
		*(*B)(unsafe.Pointer(&d[bs])) = *(*B)(unsafe.Pointer(&s[rs]))
		*(*B)(unsafe.Pointer(&d[2*bs])) = *(*B)(unsafe.Pointer(&s[2*rs]))
		*(*B)(unsafe.Pointer(&d[3*bs])) = *(*B)(unsafe.Pointer(&s[3*rs]))
	}
}

// interleaveRows4Unpaired is InterleaveRows4 without the pairing: the
// layout of the VNNI and AMX tiers, whichever tier this CPU runs (the AMX
// model and its self-check read it).
func interleaveRows4Unpaired(t Type, n int, w []byte, rows int) {
	rows4Move(t, n, w, rows, nil, true, false)
}

// DeinterleaveRows4 is InterleaveRows4's inverse.
func DeinterleaveRows4(t Type, n int, w []byte, rows int, scratch []byte) {
	if tileRows16[t] {
		rows16Move(t, n, w, rows, scratch, false)
		return
	}
	rows4Move(t, n, w, rows, scratch, false, rows4Pairs[t])
}

func rows4Move(t Type, n int, w []byte, rows int, scratch []byte, in, pairs bool) {
	rs, bs := t.RowSize(n), t.RowSize(t.BlockSize())
	if len(w) < rs*rows || rs%bs != 0 {
		panic(fmt.Sprintf("ggml: rows4 %v %dx%d: %d bytes", t, rows, n, len(w)))
	}
	if len(scratch) < 4*rs {
		scratch = make([]byte, 4*rs)
	}
	if in {
		for g := 0; g+4 <= rows; g += 4 {
			grp := w[g*rs : (g+4)*rs]
			copy(scratch, grp)
			rows4In(t, n, grp, scratch[:4*rs], pairs)
		}
		return
	}
	nb := rs / bs
	for g := 0; g+4 <= rows; g += 4 {
		grp := w[g*rs : (g+4)*rs]
		if pairs {
			for p := 0; p < len(grp); p += 2 * bs {
				pairSwap(grp[p:], false)
			}
		}
		copy(scratch, grp)
		for i := 0; i < 4; i++ {
			for k := 0; k < nb; k++ {
				rm, il := i*rs+k*bs, (4*k+i)*bs // row-major and interleaved offsets
				copy(grp[rm:rm+bs], scratch[il:il+bs])
			}
		}
	}
}

// Rows4Row copies row r of the interleaved rows × n matrix w into dst
// (RowSize(n) bytes) and returns it.
func Rows4Row(t Type, n int, w []byte, rows, r int, dst []byte) []byte {
	if tileRows16[t] {
		return rows16Row(t, n, w, rows, r, dst)
	}
	rs, bs := t.RowSize(n), t.RowSize(t.BlockSize())
	dst = dst[:rs]
	if r >= rows/4*4 {
		copy(dst, w[r*rs:(r+1)*rs])
		return dst
	}
	g, i := r/4*4, r%4
	if rows4Pairs[t] { // block k's pair at rows i&^1: both scales, then both rows' nibbles
		j := i & 1
		for k := 0; k < rs/bs; k++ {
			p := w[g*rs+(4*k+i&^1)*bs:]
			copy(dst[k*bs:k*bs+2], p[2*j:])
			copy(dst[k*bs+2:(k+1)*bs], p[4+16*j:])
		}
		return dst
	}
	for k := 0; k < rs/bs; k++ {
		copy(dst[k*bs:(k+1)*bs], w[g*rs+(4*k+i)*bs:])
	}
	return dst
}

// MatMulActRows4 is MatMulAct for w in the interleaved layout; Rows4(t)
// must hold.
func MatMulActRows4(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := checkMatMul("MatMulActRows4", t, n, w, rows, a, dst, ldd)
	g := gemmRows4[t]
	if g == nil || !a.prepared {
		panic(fmt.Sprintf("ggml: MatMulActRows4 %v: no interleaved kernels here", t))
	}
	if rows > 0 {
		g(n, w[:rs*rows], rows, a, dst, ldd)
	}
}
