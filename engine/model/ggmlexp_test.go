package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expGGML is an approximation with a documented error bound: check it
// against math.Exp over the range the softmax and SiLU feed it.
func TestExpGGMLAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		x := float32(r.Float64()*180 - 100)
		got, want := float64(expGGML(x)), math.Exp(float64(x))
		if want < 1e-37 {
			continue // subnormal results flush in GGML's version
		}
		if math.Abs(got-want) > 2.5*float64(ulp32(float32(want))) {
			t.Fatalf("expGGML(%g) = %g, want %g (> 2.5 ulp)", x, got, want)
		}
	}
	if expGGML(float32(math.Inf(-1))) != 0 || expGGML(-200) != 0 {
		t.Errorf("large negative inputs must give 0")
	}
}

func ulp32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x)+1) - x
}
