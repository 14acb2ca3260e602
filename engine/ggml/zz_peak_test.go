//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func gemmF16A13(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := 2 * n
	c := 0
	for ; c+3 <= a.cols; c += 3 {
		for r := 0; r < rows; r++ {
			f16t13A(&w[r*rs], &a.xf[c*n], 4*n, n/32, &dst[c*ldd+r], 4*ldd)
		}
	}
	rows16(n, w, rows, a, c, dst, ldd)
}

func TestZZF16T13(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 43))
	for _, shape := range [][3]int{{32, 4, 3}, {64, 7, 9}, {2048, 7, 11}, {5632, 8, 3}} {
		n, rows, cols := shape[0], shape[1], shape[2]
		g := newGemmCase(r, F16, n, rows, cols)
		var a Act
		a.prepare(F16, n, g.x, cols, prepKindF32, 0, 1)
		ldd := rows + 1
		got := nanSlice(cols * ldd)
		gemmF16A13(n, g.w, rows, &a, got, ldd)
		checkGemm(t, fmt.Sprintf("F16 13 n=%d %dx%d", n, rows, cols), got, g.want(F16, goDot[F16], ldd), rows, ldd)
	}
}

func BenchmarkZZF16AB(b *testing.B) {
	for _, sh := range [][2]int{{2048, 5632}, {5632, 2048}, {2048, 2048}} {
		n, rows := sh[0], sh[1]
		const cols, chunk = 128, 64
		r := rand.New(rand.NewPCG(1, 1))
		g := newGemmCase(r, F16, n, rows, cols)
		var a Act
		a.prepare(F16, n, g.x, cols, prepKindF32, 0, 1)
		dst := make([]float32, rows*cols)
		rs := 2 * n
		for _, v := range []int{43, 13, 43, 13} {
			b.Run(fmt.Sprintf("%dx%d/%d", rows, n, v), func(b *testing.B) {
				ns := cpuTimed(b, func() {
					for r0 := 0; r0 < rows; r0 += chunk {
						if v == 13 {
							gemmF16A13(n, g.w[r0*rs:(r0+chunk)*rs], chunk, &a, dst[r0:], rows)
						} else {
							gemmF16A(n, g.w[r0*rs:(r0+chunk)*rs], chunk, &a, dst[r0:], rows)
						}
					}
				})
				b.ReportMetric(float64(n*rows*cols)/ns, "GMAC/s")
			})
		}
	}
}
