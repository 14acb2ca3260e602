//go:build amd64 && !noasm

package ggml

// The AVX2 tier's F16 matrix kernel (CPUs without AVX-512, whose F16
// kernels are in gemmf_amd64.go): 4x3 tiles for prefill (f16t43A), the
// row kernel (dotF16QAVX) for decode and the leftovers. Both keep the
// tier's own order (dotF16QGo: four accumulators, each over a quarter of
// the row), which lets the tile run straight through each quarter's bytes.
// F16 prefill on AVX2 was first one row dot per (row, column), two
// widenings per FMA (TinyLlama F16 pp128 0.54–0.61× llama.cpp's AVX2
// build, docs/PERFORMANCE.md, sitting 5); then a tile over dotF16AVX's
// order, four passes over each block of 16 groups (0.80–0.94×, sittings 5
// and 6); with this one, 0.97–1.25× (sitting 9).

//go:noescape
func f16t43A(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)

func init() {
	if hasAVX2 && !hasAVX512 {
		gemmImpl[F16] = gemmF16A
		prepKinds[F16] = prepKindF32
	}
}

// gemmF16A walks 4x3 tiles, columns in groups of 3 over all rows (the
// caller's chunk, in L2; the three float32 columns in L1 as far as they
// fit); leftover rows and columns, and decode, go through the row kernel
// on the F16 columns. The tile reads the float32 columns at every width:
// in one pass per quarter they beat F16 columns widened in the tile (the
// AVX-512 tier's choice past f16ColsL1) at n = 5632 too: 26.7–29.6 against
// 23.6–25.6 GMAC/s, 64-row chunks by 128 columns (a throwaway benchmark of
// both one-pass tiles, docs/PERFORMANCE.md, sitting 9).
func gemmF16A(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := 2 * n
	var s [384]float32
	c := 0
	for ; c+3 <= a.cols; c += 3 {
		r := 0
		for ; r+4 <= rows; r += 4 {
			f16t43A(&w[r*rs], rs, &a.xf[c*n], 4*n, n/32, &dst[c*ldd+r], 4*ldd, &s[0])
		}
		for ; r < rows; r++ {
			for cc := c; cc < c+3; cc++ {
				dst[cc*ldd+r] = dotF16QAsm(n, w[r*rs:(r+1)*rs], a.Column(cc))
			}
		}
	}
	rows16(dotF16QAsm, n, w, rows, a, c, dst, ldd)
}
