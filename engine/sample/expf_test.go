package sample

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpf compares expf with math.Exp (its plain-Go twin in float64) on a
// dense grid and random points of [-87.3, 0], and at the edges.
func TestExpf(t *testing.T) {
	worst := 0.0
	check := func(x float32) {
		want := math.Exp(float64(x))
		got := float64(expf(x))
		if rel := math.Abs(got-want) / want; rel > worst {
			worst = rel
			if rel > 3e-7 {
				t.Fatalf("expf(%g) = %g, math.Exp %g (relative error %.3g)", x, got, want, rel)
			}
		}
	}
	for x := float32(0); x > expfMinX; x -= 1.0 / 1024 {
		check(x)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 200000 {
		check(float32(r.Float64() * expfMinX))
	}
	check(0)
	check(-1e-30)
	check(expfMinX)
	t.Logf("worst relative error %.3g", worst)
	for _, x := range []float32{expfMinX - 0.01, -1000, float32(math.Inf(-1)), float32(math.NaN())} {
		if got := expf(x); got != 0 {
			t.Errorf("expf(%g) = %g, want 0", x, got)
		}
	}
	if expf(0) != 1 {
		t.Errorf("expf(0) = %g", expf(0))
	}
}
