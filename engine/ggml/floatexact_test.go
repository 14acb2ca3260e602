package ggml

import (
	"math/rand/v2"
	"testing"
)

// TestFloatDotsBitExact: the float kernels and their plain-Go twins run the
// same operations in the same order, so they must agree exactly.
func TestFloatDotsBitExact(t *testing.T) {
	if Accel() == "go" {
		t.Skip("no assembly kernels on this machine")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []Type{F32, F16, BF16} {
		for _, n := range []int{1, 7, 8, 15, 16, 24, 31, 32, 33, 64, 100, 172, 257, 2048} {
			f := make([]float32, n)
			w, x := make([]byte, typ.RowSize(n)), make([]byte, typ.RowSize(n))
			for i := range f {
				f[i] = float32(r.NormFloat64())
			}
			QuantizeRow(typ, f, w)
			for i := range f {
				f[i] = float32(r.NormFloat64())
			}
			QuantizeActivation(typ, f, x)
			if got, want := dotImpl[typ](n, w, x), goDot[typ](n, w, x); got != want {
				t.Errorf("%v n=%d: assembly %v, plain Go %v", typ, n, got, want)
			}
		}
	}
}
