package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFP16RoundTrip checks every finite half survives FP16→FP32→FP16 and
// that NaNs stay NaN.
func TestFP16RoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := FP16ToFP32(uint16(h))
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			if !math.IsNaN(float64(f)) || FP32ToFP16(f)&0x7fff <= 0x7c00 {
				t.Fatalf("NaN %#04x -> %v -> %#04x", h, f, FP32ToFP16(f))
			}
			continue
		}
		if got := FP32ToFP16(f); got != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, got)
		}
	}
}

// TestFP32ToFP16Nearest checks round-to-nearest-even against a float64
// search over the neighbouring halves, on random bit patterns and on the
// exact midpoints between halves.
func TestFP32ToFP16Nearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(f float32) {
		h := FP32ToFP16(f)
		if math.IsNaN(float64(f)) {
			return
		}
		if math.Abs(float64(f)) >= 65520 { // rounds to infinity
			if h&0x7fff != 0x7c00 {
				t.Fatalf("%v -> %#04x, want inf", f, h)
			}
			return
		}
		got := float64(FP16ToFP32(h))
		for _, nb := range []uint16{h - 1, h + 1} {
			if nb&0x7c00 == 0x7c00 {
				continue
			}
			alt := float64(FP16ToFP32(nb))
			dg, da := math.Abs(got-float64(f)), math.Abs(alt-float64(f))
			if da < dg || (da == dg && h&1 == 1 && math.Signbit(alt) == math.Signbit(float64(f))) {
				t.Fatalf("%v -> %#04x (%v), but %#04x (%v) is nearer or even", f, h, got, nb, alt)
			}
		}
	}
	for i := 0; i < 1<<20; i++ {
		check(math.Float32frombits(r.Uint32()))
		check(float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-30))))
	}
	for h := uint16(0); h < 0x7bff; h++ {
		mid := (float64(FP16ToFP32(h)) + float64(FP16ToFP32(h+1))) / 2
		check(float32(mid))
		check(-float32(mid))
	}
}

func TestFP32ToBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1<<20; i++ {
		u := r.Uint32()
		f := math.Float32frombits(u)
		h := FP32ToBF16(f)
		if math.IsNaN(float64(f)) {
			if !math.IsNaN(float64(BF16ToFP32(h))) || h&64 == 0 {
				t.Fatalf("NaN %#08x -> %#04x", u, h)
			}
			continue
		}
		lo, hi := uint16(u>>16), uint16(u>>16)+1
		dl := math.Abs(float64(f) - float64(BF16ToFP32(lo)))
		hv := float64(BF16ToFP32(hi))
		if math.IsInf(hv, 0) { // the next step above the largest finite value
			hv = math.Copysign(math.Pow(2, 128), hv)
		}
		dh := math.Abs(hv - float64(f))
		want := lo
		if dh < dl || (dh == dl && lo&1 == 1) {
			want = hi
		}
		if h != want {
			t.Fatalf("%v (%#08x) -> %#04x, want %#04x", f, u, h, want)
		}
	}
}

// TestFP16ToFP32Normal: the bit-arithmetic conversion gives the table's
// bits for every one of the 65536 half values.
func TestFP16ToFP32Normal(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		if got, want := math.Float32bits(fp16ToFP32Normal(uint16(h))), math.Float32bits(fp16Table[h]); got != want {
			t.Fatalf("%#04x: %#08x, table %#08x", h, got, want)
		}
	}
}
