//go:build !noasm

package ggml

import (
	"fmt"
	"testing"
)

// BenchmarkF16Stream measures F16 decode streaming a set larger than the
// last-level cache, in the thread's CPU time (GB/s of weights per CPU
// second): rows16 (what MatMulAct runs, the row kernel row after row)
// against the 4-row strips it replaced on AVX-512 CPUs, alternated.
func BenchmarkF16Stream(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no AVX-512: the 4-row F16 strips need it")
	}
	rows, n := 5632, 2048
	k := avx512Float[F16]
	for rep := 0; rep < 3; rep++ {
		for _, strip := range []bool{false, true} {
			name := "rows16"
			if strip {
				name = "strip"
			}
			b.Run(fmt.Sprintf("%s/%d", name, rep), func(b *testing.B) {
				set, w, x := streamSet(b, F16, rows, n, 1)
				var a Act
				a.Prepare(F16, n, x, 1)
				dst := make([]float32, rows)
				ns := cpuTimed(b, func() {
					for off := 0; off < len(set); off += len(w) {
						if strip {
							k.strips(n, set[off:off+len(w)], rows, &a, 0, dst)
						} else {
							rows16(dotF16Asm, n, set[off:off+len(w)], rows, &a, 0, dst, rows)
						}
					}
				})
				b.ReportMetric(float64(len(set))/ns, "cpuGB/s")
			})
		}
	}
}

// BenchmarkF16StreamRows measures F16 decode streaming a set larger than
// the last-level cache, alternated: dotF16AVX row after row (the AVX-512
// tier's order: one stream a row, no software prefetch), dotF16QAVX row
// after row (the AVX2 tier's order: four streams a row, and a prefetch of
// the next row, line by line) and rows4Q (the AVX2 tier's decode: the
// same order four rows at a time, each row one stream), on TinyLlama's,
// stories110M's and stories15M's head's shapes.
func BenchmarkF16StreamRows(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	for _, sh := range [][2]int{{5632, 2048}, {2048, 768}, {32000, 288}} {
		rows, n := sh[0], sh[1]
		for rep := 0; rep < 3; rep++ {
			for _, name := range []string{"dotF16AVX", "dotF16QAVX", "rows4Q"} {
				dot := dotF16Asm
				if name != "dotF16AVX" {
					dot = dotF16QAsm
				}
				b.Run(fmt.Sprintf("%dx%d/%s/%d", rows, n, name, rep), func(b *testing.B) {
					set, w, x := streamSet(b, F16, rows, n, 1)
					var a Act
					a.Prepare(F16, n, x, 1)
					dst, rs := make([]float32, rows), 2*n
					ns := cpuTimed(b, func() {
						for off := 0; off < len(set); off += len(w) {
							m, xc := set[off:off+len(w)], a.Column(0)
							if name == "rows4Q" {
								rows4Q(n, m, rows, &a, 0, dst, rows)
								continue
							}
							for r := range dst {
								dst[r] = dot(n, m[r*rs:(r+1)*rs], xc)
							}
						}
					})
					b.ReportMetric(float64(len(set))/ns, "cpuGB/s")
				})
			}
		}
	}
}
