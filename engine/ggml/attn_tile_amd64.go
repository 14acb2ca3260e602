//go:build amd64 && !noasm

package ggml

import "math"

//go:noescape
func dotsTile2x4AVX(q *float32, qstride int, k *float32, kstride, n, m int, out *float32, ostride int)

//go:noescape
func dotsTile2x8AVX512(q *float32, qstride int, k *float32, kstride, n, m int, out *float32, ostride int)

// tile512 turns the 512-bit kernels on (tests turn it off to check
// the 256-bit one).
var tile512 = hasAVX512

//go:noescape
func accTile2x64AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func accTile2x48AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func accTile2x32AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func accTile2x16AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func accTile2x32AVX(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func accTile2x16AVX(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func accTile2x8AVX(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)

//go:noescape
func maxAVX(x *float32, n int) float32

//go:noescape
func expGroupsAVX512(x *float32, n int, maxv float32) float64

func init() {
	if hasAVX2 {
		dotsTile, accTile, maxRow = dotsTileAsm, accTileAsm, maxRowAsm
	}
	if hasAVX512 {
		expGroups = expRowAsm
	}
}

// expRowAsm is expGroupsAsm in 512-bit registers (the same result): pairs
// of groups through the 512-bit kernel, a last odd group through the
// 256-bit one.
func expRowAsm(x []float32, maxv float32) float64 {
	n := len(x) &^ 15
	var sum float64
	if n > 0 {
		sum = expGroupsAVX512(&x[0], n, maxv)
	}
	if n < len(x) {
		sum += expGroupsAsm(x[n:], maxv)
	}
	return sum
}

// maxRowAsm takes the maximum of the groups of 8 in the kernel and of the
// tail here; NaNs are skipped, as maxF32 skips them.
func maxRowAsm(x []float32) float32 {
	n := len(x) &^ 7
	m := float32(math.Inf(-1))
	if n > 0 {
		m = maxAVX(&x[0], n)
	}
	for _, v := range x[n:] {
		if v > m {
			m = v
		}
	}
	return m
}

// dotsTileAsm runs pairs of rows against blocks of eight keys (512-bit
// kernel) and then four (rows of at least 32 elements, a multiple of 8);
// the last keys, an odd last row and other lengths go through dotsF32.
func dotsTileAsm(q []float32, qstride, rows int, k []float32, kstride, m, n int, out []float32, ostride int) {
	r := 0
	if n >= 32 && n%8 == 0 && m >= 4 {
		for ; r+2 <= rows; r += 2 {
			j := 0
			if tile512 && m >= 8 {
				j = m &^ 7
				dotsTile2x8AVX512(&q[r*qstride], 4*qstride, &k[0], 4*kstride, n, j, &out[r*ostride], 4*ostride)
			}
			if m4 := (m - j) &^ 3; m4 > 0 {
				dotsTile2x4AVX(&q[r*qstride], 4*qstride, &k[j*kstride], 4*kstride, n, m4, &out[r*ostride+j], 4*ostride)
				j += m4
			}
			if j < m {
				for i := r; i < r+2; i++ {
					dotsF32(q[i*qstride:i*qstride+n], k[j*kstride:], kstride, out[i*ostride+j:i*ostride+m])
				}
			}
		}
	}
	for ; r < rows; r++ {
		dotsF32(q[r*qstride:r*qstride+n], k, kstride, out[r*ostride:r*ostride+m])
	}
}

// accTileAsm runs pairs of rows over 64, then 48, 32 or 16 columns at a
// time (512-bit kernels), then 32, 16 and 8 columns at a time (each
// element's chain is independent, so the split keeps its order); an odd
// last row and the last n%8 columns go through accumulateRows.
func accTileAsm(out []float32, ostride int, w []float32, wstride, rows int, v []float32, vstride, m, n int) {
	r := 0
	for ; r+2 <= rows; r += 2 {
		o, wr := out[r*ostride:], w[r*wstride:]
		i := 0
		if tile512 {
			for ; i+64 <= n; i += 64 {
				accTile2x64AVX512(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
			}
			switch rest := (n - i) &^ 15; rest {
			case 48:
				accTile2x48AVX512(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
			case 32:
				accTile2x32AVX512(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
			case 16:
				accTile2x16AVX512(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
			}
			i += (n - i) &^ 15
		}
		for ; i+32 <= n; i += 32 {
			accTile2x32AVX(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
		}
		if i+16 <= n {
			accTile2x16AVX(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
			i += 16
		}
		if i+8 <= n {
			accTile2x8AVX(&o[i], 4*ostride, &wr[0], 4*wstride, &v[i], 4*vstride, m)
			i += 8
		}
		if i < n {
			for e := r; e < r+2; e++ {
				accumulateRows(out[e*ostride+i:e*ostride+n], w[e*wstride:e*wstride+m], v[i:], vstride)
			}
		}
	}
	if r < rows {
		accumulateRows(out[r*ostride:r*ostride+n], w[r*wstride:r*wstride+m], v, vstride)
	}
}
