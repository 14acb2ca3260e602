package ggml

import "fmt"

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

// Rows4 reports whether matrices of type t can be held interleaved
// (InterleaveRows4) and multiplied that way (MatMulActRows4) here.
func Rows4(t Type) bool { return int(t) < len(gemmRows4) && gemmRows4[t] != nil }

// InterleaveRows4 rewrites the rows × n matrix w of type t in place from
// row-major to the interleaved layout; scratch holds 4 rows (nil: one is
// allocated).
func InterleaveRows4(t Type, n int, w []byte, rows int, scratch []byte) {
	rows4Move(t, n, w, rows, scratch, true)
}

// DeinterleaveRows4 is InterleaveRows4's inverse.
func DeinterleaveRows4(t Type, n int, w []byte, rows int, scratch []byte) {
	rows4Move(t, n, w, rows, scratch, false)
}

func rows4Move(t Type, n int, w []byte, rows int, scratch []byte, in bool) {
	rs, bs := t.RowSize(n), t.RowSize(t.BlockSize())
	if len(w) < rs*rows || rs%bs != 0 {
		panic(fmt.Sprintf("ggml: rows4 %v %dx%d: %d bytes", t, rows, n, len(w)))
	}
	if len(scratch) < 4*rs {
		scratch = make([]byte, 4*rs)
	}
	nb := rs / bs
	for g := 0; g+4 <= rows; g += 4 {
		grp := w[g*rs : (g+4)*rs]
		copy(scratch, grp)
		for i := 0; i < 4; i++ {
			for k := 0; k < nb; k++ {
				rm, il := i*rs+k*bs, (4*k+i)*bs // row-major and interleaved offsets
				if in {
					copy(grp[il:il+bs], scratch[rm:rm+bs])
				} else {
					copy(grp[rm:rm+bs], scratch[il:il+bs])
				}
			}
		}
	}
}

// Rows4Row copies row r of the interleaved rows × n matrix w into dst
// (RowSize(n) bytes) and returns it.
func Rows4Row(t Type, n int, w []byte, rows, r int, dst []byte) []byte {
	rs, bs := t.RowSize(n), t.RowSize(t.BlockSize())
	dst = dst[:rs]
	if r >= rows/4*4 {
		copy(dst, w[r*rs:(r+1)*rs])
		return dst
	}
	g, i := r/4*4, r%4
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
