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

// TestRope: RopePairs and RopeHalves as installed give their twins' bits
// for 0 to 40 pairs and a few head sizes, over real angles' cosines and
// sines, and a rotation keeps each pair's length.
func TestRope(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 10))
	for _, n := range append([]int{64, 80, 128}, seq(41)...) {
		cs, sn := make([]float32, n), make([]float32, n)
		for i := range cs {
			a := r.Float64() * 1000
			cs[i], sn[i] = float32(math.Cos(a)), float32(math.Sin(a))
		}
		x := make([]float32, 2*n+3)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 4)
		}
		for name, f := range map[string][2]func(x, c, s []float32){
			"pairs":  {RopePairs, ropePairsGo},
			"halves": {RopeHalves, ropeHalvesGo},
		} {
			got, want := append([]float32(nil), x...), append([]float32(nil), x...)
			f[0](got, cs, sn)
			f[1](want[:2*n], cs, sn)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s, %d pairs: element %d is %v, twin %v", name, n, i, got[i], want[i])
				}
			}
			for i := 0; i < n; i++ {
				a, b := 2*i, 2*i+1
				if name == "halves" {
					a, b = i, i+n
				}
				l0 := math.Hypot(float64(x[a]), float64(x[b]))
				if l1 := math.Hypot(float64(got[a]), float64(got[b])); math.Abs(l1-l0) > 1e-5*(l0+1) {
					t.Fatalf("%s, %d pairs: pair %d's length %v became %v", name, n, i, l0, l1)
				}
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestWidenF16: the installed widenF16 (assembly on AVX2 and AVX-512
// CPUs) gives the table's bits for every half value, at lengths with and
// without a tail, but for signaling NaNs, which VCVTPH2PS quiets (a NaN
// either way; no activation is one).
func TestWidenF16(t *testing.T) {
	h := make([]uint16, 1<<16+5)
	for i := range h {
		h[i] = uint16(i)
	}
	for _, n := range []int{0, 7, 8, 13, 1 << 16, len(h)} {
		f := make([]float32, n)
		widenF16(h[:n], f)
		for i, v := range f {
			if h[i]&0x7e00 == 0x7c00 && h[i]&0x3ff != 0 { // signaling NaN
				if !math.IsNaN(float64(v)) {
					t.Fatalf("n=%d: %#04x widened to %v", n, h[i], v)
				}
				continue
			}
			if math.Float32bits(v) != math.Float32bits(fp16Table[h[i]]) {
				t.Fatalf("n=%d: %#04x widened to %#08x, table %#08x", n, h[i], math.Float32bits(v), math.Float32bits(fp16Table[h[i]]))
			}
		}
	}
}
