package ggml

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkInterleave times the load-time rewrites of a 5632×2048 matrix
// into the 4-row layout and into the tile layout (one goroutine; MB/s of
// matrix); the rewrite back, between the timed ones, is not timed.
func BenchmarkInterleave(b *testing.B) {
	for _, tp := range []Type{Q4_0, Q8_0} {
		const rows, n = 5632, 2048
		w := randomRow(rand.New(rand.NewPCG(1, 2)), tp, n*rows)
		for _, l := range []string{"rows4", "rows16"} {
			b.Run(fmt.Sprintf("%v/%s", tp, l), func(b *testing.B) {
				scratch := make([]byte, 16*tp.RowSize(n))
				b.SetBytes(int64(len(w)))
				move := func(in bool) {
					if l == "rows4" {
						rows4Move(tp, n, w, rows, scratch, in, false)
					} else {
						rows16Move(tp, n, w, rows, scratch, in)
					}
				}
				for i := 0; i < b.N; i++ {
					move(true)
					b.StopTimer()
					move(false)
					b.StartTimer()
				}
			})
		}
	}
}
