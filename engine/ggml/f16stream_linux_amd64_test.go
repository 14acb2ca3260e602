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
							rows16(n, set[off:off+len(w)], rows, &a, 0, dst, rows)
						}
					}
				})
				b.ReportMetric(float64(len(set))/ns, "cpuGB/s")
			})
		}
	}
}
