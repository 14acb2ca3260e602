package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRMSNorm: rmsScale's 16 float64 chains (ggml.SumSquares) give
// GGML's one-chain float32 scale for random rows of decode's widths (and
// odd lengths for the tail), and Norm.Forward's fused pass (ggml.ScaleMul:
// scale, then weight) gives the bits of rmsNorm followed by the weight
// multiply.
func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{1, 3, 7, 64, 288, 2049, 2048, 5632} {
		for rep := 0; rep < 50; rep++ {
			x, w := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Exp(r.Float64()*6-3))
				w[i] = float32(r.NormFloat64())
			}
			var sum float64
			for _, v := range x {
				sum += float64(v * v)
			}
			const eps = 1e-5
			want := 1 / sqrtf(float32(sum/float64(n))+eps)
			if got := rmsScale(x, eps); got != want {
				t.Fatalf("n=%d: rmsScale %v, one chain %v", n, got, want)
			}
			steps := make([]float32, n)
			rmsNorm(steps, x, eps)
			for i := range steps {
				steps[i] *= w[i]
			}
			fused := make([]float32, n)
			(&Norm{RMS: true, Eps: eps, W: w}).Forward(fused, x)
			for i := range fused {
				if math.Float32bits(fused[i]) != math.Float32bits(steps[i]) {
					t.Fatalf("n=%d: element %d is %v fused, %v in steps", n, i, fused[i], steps[i])
				}
			}
		}
	}
}

// BenchmarkNormForward is one RMS norm with its weight over 2048 values
// (TinyLlama's width), as decode runs two a layer on the caller's thread.
func BenchmarkNormForward(b *testing.B) {
	x, w, dst := make([]float32, 2048), make([]float32, 2048), make([]float32, 2048)
	for i := range x {
		x[i] = float32(i%7) - 3
		w[i] = 1.01
	}
	n := &Norm{RMS: true, Eps: 1e-5, W: w}
	for i := 0; i < b.N; i++ {
		n.Forward(dst, x)
	}
}
