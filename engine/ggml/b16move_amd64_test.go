//go:build amd64 && !noasm

package ggml

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRows16InAsm holds the assembly rewrite of a 16-row group to the
// tile layout to its plain-Go twin, byte for byte, over groups of 1 to 9
// blocks and row strides with and without room past the blocks (the rows
// of a longer matrix), with the bytes around dst untouched.
func TestRows16InAsm(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2, the assembly's tier")
	}
	r := rand.New(rand.NewPCG(18, 22))
	for _, k := range []struct {
		t         Type
		asm, twin func(dst, src []byte, nb, rs int)
	}{{Q8_0, rows16InQ8Asm, rows16InQ8}, {Q4_0, rows16InQ4Asm, rows16InQ4}} {
		ts := k.t.TypeSize()
		for nb := 1; nb <= 9; nb++ {
			for _, pad := range []int{0, ts, 3*ts + 7} {
				rs := nb*ts + pad
				src := make([]byte, 16*rs)
				for i := range src {
					src[i] = byte(r.Uint32())
				}
				want := nanBytes(16*ts*nb + 64)
				got := nanBytes(16*ts*nb + 64)
				k.twin(want[32:], src, nb, rs)
				k.asm(got[32:], src, nb, rs)
				if !bytes.Equal(got, want) {
					i := 0
					for got[i] == want[i] {
						i++
					}
					t.Fatalf("%v nb=%d rs=%d: byte %d of the group: asm %#x, twin %#x", k.t, nb, rs, i-32, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkRows16In: the rewrite of a load's matrix (TinyLlama's FFN
// down projection, 160 rows of 5632) to the tile layout, GB/s of the
// matrix on one core, twin against assembly.
func BenchmarkRows16In(b *testing.B) {
	for _, tp := range []Type{Q8_0, Q4_0} {
		for _, asm := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/asm=%v", tp, asm), func(b *testing.B) {
				if asm && !hasAVX2 {
					b.Skip("no AVX2")
				}
				defer func(q8, q4 func(dst, src []byte, nb, rs int), s bool) {
					rows16InQ8Impl, rows16InQ4Impl, tileRows16[tp] = q8, q4, s
				}(rows16InQ8Impl, rows16InQ4Impl, tileRows16[tp])
				tileRows16[tp] = true
				rows16InQ8Impl, rows16InQ4Impl = rows16InQ8, rows16InQ4
				if asm {
					rows16InQ8Impl, rows16InQ4Impl = rows16InQ8Asm, rows16InQ4Asm
				}
				n, rows := 5632, 160
				w := randomRow(rand.New(rand.NewPCG(1, 2)), tp, n*rows)
				dst := make([]byte, len(w))
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					InterleaveRowsTo(tp, n, dst, w, rows)
				}
			})
		}
	}
}
