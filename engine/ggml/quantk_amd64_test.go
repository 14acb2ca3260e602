//go:build amd64 && !noasm

package ggml

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantQ8KAsm: the AVX2 Q8_K activation quantizer writes the Go
// reference's bytes exactly: random blocks at scales from 2⁻¹³⁰
// (subnormal) to 2⁶⁰, ties of the largest magnitude (either sign first),
// all-zero blocks, and blocks with a NaN or an infinity, which go back to
// the Go code, between ordinary ones.
func TestQuantQ8KAsm(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2")
	}
	r := rand.New(rand.NewPCG(8, 256))
	const nb = 12
	for trial := 0; trial < 200; trial++ {
		x := make([]float32, nb*QK_K)
		for b := 0; b < nb; b++ {
			blk := x[QK_K*b : QK_K*(b+1)]
			scale := math.Ldexp(1, r.IntN(190)-130)
			for i := range blk {
				blk[i] = float32(r.NormFloat64() * scale)
			}
			switch r.IntN(8) {
			case 0: // a tie: the same magnitude twice, signs either way
				i, j := r.IntN(QK_K), r.IntN(QK_K)
				m := float32(scale * 8)
				blk[i], blk[j] = m, -m
				if r.IntN(2) == 0 {
					blk[i], blk[j] = -m, m
				}
			case 1:
				clear(blk)
			case 2:
				blk[r.IntN(QK_K)] = float32(math.NaN())
			case 3:
				blk[r.IntN(QK_K)] = float32(math.Inf(1 - 2*r.IntN(2)))
			case 4: // values that round to ±127 and halves
				for i := range blk {
					blk[i] = float32(r.IntN(255)-127) + 0.5
				}
			}
		}
		want, got := make([]byte, nb*292), make([]byte, nb*292+64)
		for i := range got {
			got[i] = 0xa5
		}
		quantActQ8KGo(x, want)
		quantActQ8KAsm(x, got[:nb*292])
		for i := nb * 292; i < len(got); i++ {
			if got[i] != 0xa5 {
				t.Fatalf("trial %d: byte %d past the output written", trial, i)
			}
		}
		if !bytes.Equal(got[:nb*292], want) {
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("trial %d: block %d byte %d is %#x, the Go code's %#x", trial, i/292, i%292, got[i], want[i])
				}
			}
		}
	}
}
