//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestK16Kernels (AVX-512 VNNI CPUs) runs the Q4_K tile layout's assembly
// kernels against their plain-Go twins bit for bit: random and extreme
// operands, 1 to 9 super-blocks, guard cells between the columns' outputs.
func TestK16Kernels(t *testing.T) {
	if !hasKVNNI {
		t.Skip("skipping: no AVX-512 BW/VNNI, which the K-quant tile layouts' kernels need")
	}
	r := rand.New(rand.NewPCG(16, 6))
	for _, tp := range []Type{Q4_K, Q5_K, Q6_K} {
		asm, twin := k16Asm, k16Go
		switch tp {
		case Q5_K:
			asm, twin = k16q5Asm, k16q5Go
		case Q6_K:
			asm, twin = k16q6Asm, k16q6Go
		}
		for _, nb := range []int{1, 2, 9} {
			n := nb * QK_K
			for trial := 0; trial < 6; trial++ {
				w := make([]byte, 0, 16*tp.RowSize(n))
				var x []byte
				switch trial {
				case 0, 1:
					w = randomRow(r, tp, 16*n)
					for c := 0; c < 8; c++ {
						x = append(x, randomActivation(r, Q8_K, n)...)
					}
				default:
					v := int8(-128)
					if trial%2 == 1 {
						v = 127
					}
					for m := 0; m < 16; m++ {
						ew, ex := k16Extremes(n, v)
						if tp == Q5_K {
							ew = q5Extremes(n)
						}
						if tp == Q6_K {
							sc := int8(127)
							if trial >= 4 {
								sc = -128
							}
							ew, ex = q6Extremes(n, byte(0xff*(m%2)), sc, v)
						}
						w = append(w, ew...)
						if m < 8 {
							x = append(x, ex...)
						}
					}
				}
				rows16Move(tp, n, w, 16, nil, true)
				w, x = withGuard(w), withGuard(x)
				xs := Q8_K.RowSize(n)
				const ldd = 19
				name := fmt.Sprintf("%v nb=%d trial %d", tp, nb, trial)
				want, got := nanSlice(8*ldd), nanSlice(4*ldd)
				twin.eight(w, nb, x, xs, want, ldd)
				asm.four(w, nb, x, xs, got, ldd)
				checkGemm(t, name+", four columns", got, want[:4*ldd], 16, ldd)
				got = nanSlice(8 * ldd)
				asm.eight(w, nb, x, xs, got, ldd)
				checkGemm(t, name+", eight columns", got, want, 16, ldd)
				for c := 0; c < 8; c++ {
					one := nanSlice(16)
					asm.one(w, nb, x[c*xs:(c+1)*xs], one)
					for m := range one {
						if math.Float32bits(one[m]) != math.Float32bits(want[c*ldd+m]) {
							t.Fatalf("%s, one column: column %d row %d is %v, the twin's %v", name, c, m, one[m], want[c*ldd+m])
						}
					}
				}
			}
		}
	}
}

// TestK16Dispatch: with the K-quant tile layouts installed (over the Go
// twins where the CPU lacks AVX-512 VNNI), Q4_K, Q5_K and Q6_K take them, and MatMulActRows4
// gives every column the chain's value (dotQ4_K16 on the row-major rows),
// the same bits alone and in batches of 3 to 17 columns.
func TestK16Dispatch(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2, whose tiers prepare the columns")
	}
	saved4, savedPairs, saved16, savedState := gemmRows4, rows4Pairs, tileRows16, k16State
	t.Cleanup(func() { gemmRows4, rows4Pairs, tileRows16, k16State = saved4, savedPairs, saved16, savedState })
	if hasKVNNI {
		useK16(k16Asm, k16q5Asm, k16q6Asm)
	} else {
		useK16(k16Go, k16q5Go, k16q6Go)
	}
	r := rand.New(rand.NewPCG(16, 7))
	for _, tp := range []Type{Q4_K, Q5_K, Q6_K} {
		if !Rows4(tp) || InterleaveGroup(tp) != 16 {
			t.Fatalf("%v: the tile layout is not installed", tp)
		}
		if prepKinds[tp] != prepKindK {
			t.Logf("%v: this CPU's tier prepares no columns for its matrix kernels (AVX2: Q5_K has none), so the walk is unchecked here", tp)
			continue
		}
		dot := dotQ4_K16
		switch tp {
		case Q5_K:
			dot = dotQ5_K16
		case Q6_K:
			dot = dotQ6_K16
		}
		const n, rows = 2 * QK_K, 37
		g := newGemmCase(r, tp, n, rows, 17)
		w16 := append([]byte(nil), g.w...)
		InterleaveRows4(tp, n, w16, rows, nil)
		var alone []float32
		for _, cols := range []int{1, 3, 4, 5, 8, 9, 13, 17} {
			sub := g
			sub.cols, sub.x = cols, g.x[:cols*Q8_K.RowSize(n)]
			var a Act
			a.Prepare(tp, n, sub.x, cols)
			ldd := rows + 1
			got := nanSlice(cols * ldd)
			MatMulActRows4(tp, n, w16, rows, &a, got, ldd)
			checkGemm(t, fmt.Sprintf("%v tile layout, %d columns", tp, cols), got, sub.want(tp, dot, ldd), rows, ldd)
			if alone == nil {
				alone = got[:rows]
			}
			for i := range alone {
				if math.Float32bits(got[i]) != math.Float32bits(alone[i]) {
					t.Fatalf("%v: row %d of column 0 is %v in a batch of %d, %v alone", tp, i, got[i], cols, alone[i])
				}
			}
		}
	}
}

// q5Extremes is a Q5_K row with every value 31 (nibbles 15, every qh bit
// set), every scale and min 63 and d = dmin = 1.
func q5Extremes(n int) []byte {
	w := make([]byte, Q5_K.RowSize(n))
	for b := 0; b < n/QK_K; b++ {
		blk := w[176*b:]
		put16(blk, FP32ToFP16(1))
		put16(blk[2:], FP32ToFP16(1))
		for i := 4; i < 176; i++ {
			blk[i] = 0xff
		}
	}
	return w
}
