package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestF16QuartersGo holds dotF16QGo, the AVX2 tier's F16 order, to a
// float64 dot of the same values (within n·2⁻²³ of Σ|w·x|, float32
// accumulation) and to dotF16Go wherever the two orders coincide (n < 32:
// both run every octet into the first accumulator).
func TestF16QuartersGo(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 4))
	for _, n := range []int{0, 1, 7, 8, 31, 32, 100, 127, 128, 129, 136, 160, 255, 256, 300, 416, 480, 2048, 2080, 5632, 5639} {
		w, x := randomRow(r, F16, n), randomActivation(r, F16, n)
		var want, abs float64
		for i := 0; i < n; i++ {
			p := float64(fp16Table[bytesU16(w)[i]]) * float64(fp16Table[bytesU16(x)[i]])
			want += p
			abs += math.Abs(p)
		}
		got := dotF16QGo(n, w, x)
		if tol := float64(n+8) * 0x1p-23 * abs; math.Abs(float64(got)-want) > tol {
			t.Errorf("n=%d: dotF16QGo %v, float64 %v (tol %g)", n, got, want, tol)
		}
		if n < 32 {
			if old := dotF16Go(n, w, x); math.Float32bits(old) != math.Float32bits(got) {
				t.Errorf("n=%d: dotF16QGo %v, dotF16Go %v: the orders coincide below 32", n, got, old)
			}
		}
	}
}
