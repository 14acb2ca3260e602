//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"testing"
)

func BenchmarkZZF16Peak(b *testing.B) {
	for _, n := range []int{512, 2048, 5632} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w := make([]byte, 4*2*n)
			for i := range w {
				w[i] = byte(i*7) & 0x3b
			}
			x := make([]float32, 3*n)
			out := make([]float32, 16)
			var s [384]float32
			reps := 1 << 22 / n
			ns := cpuTimed(b, func() {
				for i := 0; i < reps; i++ {
					f16t43A(&w[0], 2*n, &x[0], 4*n, n/32, &out[0], 16, &s[0])
				}
			})
			b.ReportMetric(float64(12*n*reps)/ns, "GMAC/s")
		})
	}
}
