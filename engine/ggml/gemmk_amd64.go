//go:build amd64 && !noasm

package ggml

import "golang.org/x/sys/cpu"

// The K-quant matrix kernels (gemmk_amd64.s): 4-row strips for decode and
// 1-row × 8-column tiles for prompt batches, bit-identical to the
// single-row kernels (dotQ4_KAVX, dotQ6_KAVX) for every (row, column).
// With AVX-512 BW/VNNI, groups of 8 columns take the flat kernels q4kf8
// and q6kf8 (gemmkflat_amd64.s) over the columns prepared by
// Act.fillKFlat.

//go:noescape
func q4kx4(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q4kt18(w *byte, aux *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q6kx4(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q4kx4V(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q6kx4V(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q6kt18(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

// kTypes are the weight types with K-quant matrix kernels.
var kTypes = []Type{Q4_K, Q6_K}

// stripFunc is the signature of the 4-row strips.
type stripFunc func(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

// hasKVNNI reports whether the VNNI strips run here (EVEX-encoded 256-bit
// VPDPWSSD, VPMADDUBSW on Y16-Y31: AVX-512 VL, BW and VNNI).
var hasKVNNI = hasVNNI && cpu.X86.HasAVX512BW

// q4kStrip and q6kStrip are the decode strips in use: the VNNI ones where
// the CPU has them, the AVX2 ones otherwise (the same bits).
var q4kStrip, q6kStrip stripFunc = q4kx4, q6kx4

// installKTiles installs the K-quant matrix kernels; installAVX2 calls it
// last, so that its single-row MatVec does not replace the strips.
func installKTiles() {
	if hasKVNNI {
		q4kStrip, q6kStrip = q4kx4V, q6kx4V
		kFlat = true
	}
	for _, t := range kTypes {
		useKTiles(t)
	}
}

// useKTiles installs the strips (MatVec) and tiles (MatMulAct) of t; the
// tiles read the Q8_K columns in place (prepKindK).
func useKTiles(t Type) {
	k := kTiles(t)
	gemmImpl[t] = k.run
	prepKinds[t] = prepKindK
	matVecImpl[t] = k.matVec
}

// kTiles selects the kernels of one K-quant type.
type kTiles Type

// strip computes the 4 rows at w (rs bytes apart) against column x into
// out[0:4].
func (k kTiles) strip(w *byte, rs int, x *byte, nb int, out *float32) {
	if Type(k) == Q4_K {
		q4kStrip(w, rs, x, 0, nb, &fp16Table[0], out, 0)
	} else {
		q6kStrip(w, rs, x, 0, nb, &fp16Table[0], out, 0)
	}
}

// tile computes the row at w against the 8 columns at x (xs bytes apart)
// into out[c·ldo/4]; aux is the group's part of Act.kaux (Q4_K).
func (k kTiles) tile(w, aux, x *byte, xs, nb int, out *float32, ldo int) {
	if Type(k) == Q4_K {
		q4kt18(w, aux, x, xs, nb, &fp16Table[0], out, ldo)
	} else {
		q6kt18(w, 0, x, xs, nb, &fp16Table[0], out, ldo)
	}
}

// one is the single-row kernel.
func (k kTiles) one(w, x *byte, nb int) float32 {
	if Type(k) == Q4_K {
		return dotQ4_KAVX(w, x, nb, &fp16Table[0])
	}
	return dotQ6_KAVX(w, x, nb, &fp16Table[0])
}

// matVec runs 4-row strips, the leftover rows one by one.
func (k kTiles) matVec(n int, w, x []byte, dst []float32) {
	nb := n / QK_K
	if nb == 0 {
		clear(dst)
		return
	}
	rs := Type(k).RowSize(n)
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		k.strip(&w[r*rs], rs, &x[0], nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dst[r] = k.one(&w[r*rs], &x[0], nb)
	}
}

// run walks the columns in groups of 8, each group row by row over all
// rows (which the caller sizes to stay in cache); leftover columns go
// through the strips.
func (k kTiles) run(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	nb := n / QK_K
	rs, xs := Type(k).RowSize(n), a.xs
	c := 0
	for ; c+8 <= a.cols; c += 8 {
		var aux *byte
		if Type(k) == Q4_K {
			aux = &a.kaux[c/8*nb*256]
		}
		if len(a.kf) > 0 {
			kf := &a.kf[c/8*nb*kfStride(Type(k))]
			for r := 0; r < rows; r++ {
				k.flat(&w[r*rs], kf, nb, &dst[c*ldd+r], 4*ldd)
			}
			continue
		}
		for r := 0; r < rows; r++ {
			k.tile(&w[r*rs], aux, &a.x[c*xs], xs, nb, &dst[c*ldd+r], 4*ldd)
		}
	}
	if c < a.cols && len(a.kf) > c/8*nb*kfStride(Type(k)) {
		k.flatPart(nb, w, rows, a, c, dst, ldd)
		return
	}
	for ; c < a.cols; c++ {
		k.matVec(n, w, a.Column(c), dst[c*ldd:c*ldd+rows])
	}
}

// flat runs k's flat kernel: the row at w against the 8 columns at kf.
func (k kTiles) flat(w, kf *byte, nb int, out *float32, ldo int) {
	if Type(k) == Q4_K {
		q4kf8(w, kf, nb, &fp16Table[0], out, ldo)
	} else {
		q6kf8(w, kf, nb, &fp16Table[0], out, ldo)
	}
}

// flatPart runs the last, partial group of columns c.. (3-7, padded with
// zero columns in Act.kf) through the flat kernel, row by row via a
// scratch of 8 values.
func (k kTiles) flatPart(nb int, w []byte, rows int, a *Act, c int, dst []float32, ldd int) {
	rs := Type(k).RowSize(nb * QK_K)
	kf := &a.kf[c/8*nb*kfStride(Type(k))]
	var part [8]float32
	for r := 0; r < rows; r++ {
		k.flat(&w[r*rs], kf, nb, &part[0], 4)
		for cc := c; cc < a.cols; cc++ {
			dst[cc*ldd+r] = part[cc-c]
		}
	}
}

//go:noescape
func q6kf8(w *byte, x *byte, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q4kf8(w *byte, x *byte, nb int, tab *float32, out *float32, ldo int)
