//go:build amd64 && !noasm

package ggml

import "golang.org/x/sys/cpu"

// The Q2_K prompt tiles (gemmk2_amd64.s): one row against 8 or 4 Q8_K
// columns read in place, each (row, column) bit-identical to dotQ2_KAVX
// and dotQ2_KLanes; the Q5_K tile (kernels_amd64.s) one row against 4,
// bit-identical to dotQ5_KAVX and dotQ5_KLanes; the Q3_K tiles one row
// against 8 or 4, bit-identical to dotQ3_KAVX and dotQ3_KLanes. Before them they ran
// column by column through the single-row kernel, unpacking each weight
// super-block once per column.

//go:noescape
func q2kt18(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q3kt18(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q3kt14(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q5kt14(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q2kt14(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

// hasQ2Tiles reports whether the tiles run here: their column registers
// are Y16-Y31 and their byte and word products EVEX-encoded (AVX-512 VL
// and BW).
var hasQ2Tiles = hasAVX512 && cpu.X86.HasAVX512BW

// installQ2KTiles installs the tiles as the matrix kernels of Q2_K, Q3_K
// and Q5_K; the single-row kernels stay their MatVec (decode).
func installQ2KTiles() {
	if !hasQ2Tiles {
		return
	}
	gemmImpl[Q2_K], gemmImpl[Q3_K], gemmImpl[Q5_K] = runQ2K, runQ3K, runQ5K
	prepKinds[Q2_K], prepKinds[Q3_K], prepKinds[Q5_K] = prepKindK, prepKindK, prepKindK
}

// runQ2K walks the columns in groups of 8, then one group of 4, each
// group row by row over all rows (which the caller sizes to stay in
// cache); the 1-3 columns left run the single-row kernel.
func runQ2K(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	nb := n / QK_K
	rs, xs := Q2_K.RowSize(n), a.xs
	tab := &fp16Table[0]
	c := 0
	for ; c+8 <= a.cols; c += 8 {
		for r := 0; r < rows; r++ {
			q2kt18(&w[r*rs], &a.x[c*xs], xs, nb, tab, &dst[c*ldd+r], 4*ldd)
		}
	}
	if c+4 <= a.cols {
		for r := 0; r < rows; r++ {
			q2kt14(&w[r*rs], &a.x[c*xs], xs, nb, tab, &dst[c*ldd+r], 4*ldd)
		}
		c += 4
	}
	for ; c < a.cols; c++ {
		matVecImpl[Q2_K](n, w[:rows*rs], a.Column(c), dst[c*ldd:c*ldd+rows])
	}
}

// runQ5K walks the columns in groups of 4, each group row by row over all
// rows; the 1-3 columns left run the single-row kernel.
func runQ5K(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	nb := n / QK_K
	rs, xs := Q5_K.RowSize(n), a.xs
	tab := &fp16Table[0]
	c := 0
	for ; c+4 <= a.cols; c += 4 {
		for r := 0; r < rows; r++ {
			q5kt14(&w[r*rs], &a.x[c*xs], xs, nb, tab, &dst[c*ldd+r], 4*ldd)
		}
	}
	for ; c < a.cols; c++ {
		matVecImpl[Q5_K](n, w[:rows*rs], a.Column(c), dst[c*ldd:c*ldd+rows])
	}
}

// runQ3K walks the columns in groups of 8, then one group of 4, each group
// row by row over all rows; the 1-3 columns left run the single-row
// kernel.
func runQ3K(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	nb := n / QK_K
	rs, xs := Q3_K.RowSize(n), a.xs
	tab := &fp16Table[0]
	c := 0
	for ; c+8 <= a.cols; c += 8 {
		for r := 0; r < rows; r++ {
			q3kt18(&w[r*rs], &a.x[c*xs], xs, nb, tab, &dst[c*ldd+r], 4*ldd)
		}
	}
	if c+4 <= a.cols {
		for r := 0; r < rows; r++ {
			q3kt14(&w[r*rs], &a.x[c*xs], xs, nb, tab, &dst[c*ldd+r], 4*ldd)
		}
		c += 4
	}
	for ; c < a.cols; c++ {
		matVecImpl[Q3_K](n, w[:rows*rs], a.Column(c), dst[c*ldd:c*ldd+rows])
	}
}
