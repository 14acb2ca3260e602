package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowOps: SumSquares and ScaleMul as installed (the assembly on an
// AVX2 CPU) give their Go twins' bits for every length from 0 to 300 and
// decode's widths, over values whose magnitudes span 2⁻²⁰ to 2²⁰; and
// the twin's sum is the float64 sum of the rounded squares within the
// reordering's error.
func TestRowOps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	lengths := []int{2048, 2049, 5632, 4096 + 15}
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		x, w := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(41)-20)))
			w[i] = float32(r.NormFloat64())
		}
		got, want := SumSquares(x), sumSquaresGo(x)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("n=%d: SumSquares %v, twin %v", n, got, want)
		}
		var chain float64
		for _, v := range x {
			chain += float64(v * v)
		}
		if math.Abs(want-chain) > 1e-12*chain {
			t.Fatalf("n=%d: twin %v, one chain %v", n, want, chain)
		}
		s := float32(r.Float64() + 0.5)
		dst, ref := make([]float32, n), make([]float32, n)
		ScaleMul(dst, x, s, w)
		scaleMulGo(ref, x, s, w)
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(ref[i]) {
				t.Fatalf("n=%d: ScaleMul element %d is %v, twin %v", n, i, dst[i], ref[i])
			}
		}
	}
}
