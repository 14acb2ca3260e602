package ggml

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkTmpHot(b *testing.B) {
	for _, tp := range []Type{F32, Q8_0, Q4_0} {
		b.Run(tp.String(), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			n, rows := 2048, 128
			w := randomRow(r, tp, n*rows)
			x := randomActivation(r, tp.VecDotType(), n)
			dst := make([]float32, rows)
			b.SetBytes(int64(len(w)))
			for i := 0; i < b.N; i++ {
				MatVec(tp, n, w, x, dst)
			}
		})
	}
}
