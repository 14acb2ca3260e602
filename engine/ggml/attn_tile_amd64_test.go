//go:build amd64 && !noasm

package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnTilesAVX2: TestDotsTileF32 and TestAccumulateTileF32 with
// the 512-bit kernels off, so that the 256-bit ones are covered on
// machines with AVX-512 too.
func TestAttnTilesAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	t.Logf("512-bit kernel available: %v", hasAVX512)
	defer func(v bool) { tile512 = v }(tile512)
	tile512 = false
	checkDotsTile(t)
	checkAccumulateTile(t)
}

// TestExpRowAVX512: the 512-bit exponentials equal expGroupsGo bit for bit
// and sum the groups in the same order, over inputs that reach ggml's slow
// lanes (|n| > 126 and > 192, below and above the maximum).
func TestExpRowAVX512(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(67, 68))
	for _, n := range []int{8, 16, 24, 32, 48, 136, 1024} {
		for _, spread := range []float64{0.5, 10, 60, 150} {
			for _, maxv := range []float32{0, -100, 3} {
				x := randFloats(r, n, spread)
				got, want := append([]float32(nil), x...), append([]float32(nil), x...)
				gs, ws := expRowAsm(got, maxv), expGroupsGo(want, maxv)
				if i := sameBits(got, want); i >= 0 {
					t.Fatalf("n=%d spread=%v max=%v: %d kernel %v, twin %v (x %v)", n, spread, maxv, i, got[i], want[i], x[i])
				}
				if math.Float64bits(gs) != math.Float64bits(ws) {
					t.Fatalf("n=%d spread=%v max=%v: sum kernel %v, twin %v", n, spread, maxv, gs, ws)
				}
			}
		}
	}
}
