//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkZZHot(b *testing.B) {
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, d4 := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/dec4=%v", tp, d4), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				n, rows := 2048, 64
				w, x := r16Operands(r, tp, n, rows, 1, false)
				rows16Move(tp, n, w, rows, nil, true)
				var a Act
				a.prepareB16(tp, n, x, 1, false)
				dst := make([]float32, rows)
				old := r16Dec4
				r16Dec4 = d4
				defer func() { r16Dec4 = old }()
				b.SetBytes(int64(len(w)))
				for i := 0; i < b.N; i++ {
					r16Gemm(tp, n, w, rows, &a, dst, rows, r16AVX2[tp])
				}
			})
		}
	}
}
