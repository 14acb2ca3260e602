package ggml

import (
	"math"
	"math/big"
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

// TestFMA32: the plain-Go fused multiply-add, which every twin of an FMA
// kernel uses, rounds once, as VFMADD231PS does: equal to the exact a·b +
// c (math/big) rounded to float32, on a case where rounding the float64
// sum first lands on a float32 halfway point (float32(math.FMA(…)) got
// 1+2⁻¹¹ there), on block sums times block scales (the AMX and VNNI
// tiers' operands), and on random bit patterns.
func TestFMA32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetPrec(400).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetPrec(400).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	check := func(a, b, c float32) {
		t.Helper()
		got, want := fma32(a, b, c), exact(a, b, c)
		if want == 0 { // math/big has no signed zero sum: x + (−x) is +0, as IEEE's
			want = float32(float64(a)*float64(b) + float64(c))
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%x, %x, %x) = %x, exactly rounded %x", a, b, c, got, want)
		}
	}
	const a = 1 + 0x1p-12 // a·a = 1 + 2⁻¹¹ + 2⁻²⁴: a float32 halfway point
	check(a, a, 0x1p-80)  // just above it: rounds up
	check(a, a, -0x1p-80) // just below it: rounds down
	check(a, a, 0)        // on it: to even
	check(0, -1, 0)
	check(float32(math.Copysign(0, -1)), 1, float32(math.Copysign(0, -1)))
	r := rand.New(rand.NewPCG(18, 9))
	for i := 0; i < 300000; i++ {
		x, y, z := math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32())
		switch i % 3 {
		case 0: // an int32 block sum, a scale product, a running sum
			x = float32(r.IntN(1<<21) - 1<<20)
			y = math.Float32frombits(r.Uint32()&0x807fffff | uint32(90+r.IntN(80))<<23)
			z = math.Float32frombits(r.Uint32()&0x807fffff | uint32(90+r.IntN(80))<<23)
		case 1: // subnormal and tiny products
			x = math.Float32frombits(r.Uint32()&0x807fffff | uint32(r.IntN(40))<<23)
			y = math.Float32frombits(r.Uint32()&0x807fffff | uint32(r.IntN(40))<<23)
			z = math.Float32frombits(r.Uint32() & 0x80ffffff)
		}
		if isFinite32(x) && isFinite32(y) && isFinite32(z) {
			check(x, y, z)
		}
	}
}

func isFinite32(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }
