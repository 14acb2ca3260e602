//go:build amd64 && !noasm

package ggml

// The AVX2 tier's F16 matrix kernel (CPUs without AVX-512, whose F16
// kernels are in gemmf_amd64.go): 4x3 tiles for prefill (f16t43A), the
// single-row kernel for decode and the leftovers. Before it, F16 prefill
// on AVX2 ran one row dot per (row, column), two widenings per FMA: on
// the EPYC VM with AVX-512 masked off (GODEBUG=cpu.avx512f=off) TinyLlama
// F16 pp128 ran 0.54–0.61× llama.cpp's AVX2 build, and 0.80–0.93× with
// these tiles (docs/PERFORMANCE.md, sitting 5).

//go:noescape
func f16t43A(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)

//go:noescape
func f16h43A(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int, s *float32)

func init() {
	if hasAVX2 && !hasAVX512 {
		gemmImpl[F16] = gemmF16A
		prepKinds[F16] = prepKindF32
	}
}

// gemmF16A walks 4x3 tiles, columns in groups of 3 over all rows (the
// caller's chunk, in L2); leftover rows and columns, and decode, go
// through the row kernel on the F16 columns: every value is VecDot's.
// Past f16ColsL1 the tiles read the F16 columns (f16h43A), as the AVX-512
// tier does: on the EPYC VM, masked, 64-row chunks of a 2048×5632 matrix
// against 128 columns ran 40.3–44.1 GMAC/s against 37.1–40.6 through the
// float32 ones (BenchmarkF16TileA, 2026-11-26); at n = 2048 the F16
// columns were 0–8% faster too, and the threshold is not yet retuned.
// f16t43A's inner loop is 12 FMAs per 4 widenings; alone in L1 it runs
// 52–55 GMAC/s, on TinyLlama's shapes 37–48 (docs/PERFORMANCE.md,
// sitting 6).
func gemmF16A(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := 2 * n
	var s [384]float32
	half := 12*n > f16ColsL1
	c := 0
	for ; c+3 <= a.cols; c += 3 {
		r := 0
		for ; r+4 <= rows; r += 4 {
			if half {
				f16h43A(&w[r*rs], rs, &bytesU16(a.x)[c*n], 2*n, n/32, &dst[c*ldd+r], 4*ldd, &s[0])
			} else {
				f16t43A(&w[r*rs], rs, &a.xf[c*n], 4*n, n/32, &dst[c*ldd+r], 4*ldd, &s[0])
			}
		}
		for ; r < rows; r++ {
			for cc := c; cc < c+3; cc++ {
				dst[cc*ldd+r] = dotImpl[F16](n, w[r*rs:(r+1)*rs], a.Column(cc))
			}
		}
	}
	rows16(n, w, rows, a, c, dst, ldd)
}
