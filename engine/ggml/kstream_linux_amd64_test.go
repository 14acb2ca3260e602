//go:build !noasm

package ggml

import (
	"fmt"
	"testing"
)

// BenchmarkKStream measures the decode kernels (MatMulAct with one
// prepared column, as decode runs them) per
// weight type streaming a set larger than the last-level cache (stream)
// and on one matrix in cache (hot), in the thread's CPU time: GB/s of
// weights per CPU second, the figure that bounds decode on a shared
// machine.
func BenchmarkKStream(b *testing.B) {
	for _, tp := range []Type{Q4_0, Q8_0, Q4_K, Q6_K} {
		for _, sh := range [][2]int{{5632, 2048}, {2048, 5632}} {
			rows, n := sh[0], sh[1]
			b.Run(fmt.Sprintf("%v/%dx%d/stream", tp, rows, n), func(b *testing.B) {
				benchKStream(b, tp, rows, n)
			})
			// The K-quant strips of every tier this CPU runs.
			for _, v := range kStripVariants(tp) {
				b.Run(fmt.Sprintf("%v/%dx%d/stream-%s", tp, rows, n, v.name), func(b *testing.B) {
					defer useStrip(tp, v.f)()
					benchKStream(b, tp, rows, n)
				})
			}
		}
		// In cache: l1 (32x1024) and hot (256x2048, L2), each call repeated.
		for _, c := range []struct {
			name           string
			rows, n, times int
		}{{"l1", 32, 1024, 2000}, {"hot", 256, 2048, 200}} {
			b.Run(fmt.Sprintf("%v/%s", tp, c.name), func(b *testing.B) {
				ws, x := benchWeights(tp, c.rows, c.n)
				w, dst := ws[0], make([]float32, c.rows)
				var a Act
				a.Prepare(tp, c.n, x, 1)
				ns := cpuTimed(b, func() {
					for i := 0; i < c.times; i++ {
						MatMulAct(tp, c.n, w, c.rows, &a, dst, c.rows)
					}
				})
				b.ReportMetric(float64(c.times)*float64(len(w))/ns, "cpuGB/s")
			})
		}
	}
}

// benchKStream streams copies of one rows×n matrix of tp, set larger than
// the last-level cache, through the decode kernel.
func benchKStream(b *testing.B, tp Type, rows, n int) {
	set, w, x := streamSet(b, tp, rows, n, 1)
	ns := cpuTimed(b, func() { streamPass(tp, rows, n, set, w, x) })
	b.ReportMetric(float64(len(set))/ns, "cpuGB/s")
}
