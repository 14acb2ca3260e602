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
		t.Skip("skipping: no AVX-512 BW/VNNI, which the Q4_K tile layout's kernels need")
	}
	r := rand.New(rand.NewPCG(16, 6))
	for _, nb := range []int{1, 2, 9} {
		n := nb * QK_K
		for trial := 0; trial < 4; trial++ {
			w := make([]byte, 0, 16*Q4_K.RowSize(n))
			var x []byte
			switch trial {
			case 0, 1:
				w = randomRow(r, Q4_K, 16*n)
				for c := 0; c < 8; c++ {
					x = append(x, randomActivation(r, Q8_K, n)...)
				}
			default:
				v := int8(-128)
				if trial == 3 {
					v = 127
				}
				for m := 0; m < 16; m++ {
					ew, ex := k16Extremes(n, v)
					w = append(w, ew...)
					if m < 8 {
						x = append(x, ex...)
					}
				}
			}
			rows16Move(Q4_K, n, w, 16, nil, true)
			w, x = withGuard(w), withGuard(x)
			xs := Q8_K.RowSize(n)
			const ldd = 19
			want, got := nanSlice(8*ldd), nanSlice(4*ldd)
			k16EightGo(w, nb, x, xs, want, ldd)
			k16AsmFour(w, nb, x, xs, got, ldd)
			checkGemm(t, fmt.Sprintf("four columns, nb=%d trial %d", nb, trial), got, want[:4*ldd], 16, ldd)
			got = nanSlice(8 * ldd)
			k16AsmEight(w, nb, x, xs, got, ldd)
			checkGemm(t, fmt.Sprintf("eight columns, nb=%d trial %d", nb, trial), got, want, 16, ldd)
			for c := 0; c < 8; c++ {
				one := nanSlice(16)
				k16AsmOne(w, nb, x[c*xs:(c+1)*xs], one)
				for m := range one {
					if math.Float32bits(one[m]) != math.Float32bits(want[c*ldd+m]) {
						t.Fatalf("one column, nb=%d trial %d: column %d row %d is %v, the twin's %v", nb, trial, c, m, one[m], want[c*ldd+m])
					}
				}
			}
		}
	}
}

// TestK16Dispatch: with the AMX tier installed (over the emulator where
// the CPU has no AMX), Q4_K takes the tile layout, and MatMulActRows4
// gives every column the chain's value (dotQ4_K16 on the row-major rows),
// the same bits alone and in batches of 3 to 17 columns.
func TestK16Dispatch(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2, whose tiers prepare the columns")
	}
	withAMX(t, amxModel)
	if !Rows4(Q4_K) || InterleaveGroup(Q4_K) != 16 {
		t.Fatal("Q4_K: the tile layout is not installed")
	}
	r := rand.New(rand.NewPCG(16, 7))
	const n, rows = 2 * QK_K, 37
	g := newGemmCase(r, Q4_K, n, rows, 17)
	w16 := append([]byte(nil), g.w...)
	InterleaveRows4(Q4_K, n, w16, rows, nil)
	var alone []float32
	for _, cols := range []int{1, 3, 4, 5, 8, 9, 13, 17} {
		sub := g
		sub.cols, sub.x = cols, g.x[:cols*Q8_K.RowSize(n)]
		var a Act
		a.Prepare(Q4_K, n, sub.x, cols)
		ldd := rows + 1
		got := nanSlice(cols * ldd)
		MatMulActRows4(Q4_K, n, w16, rows, &a, got, ldd)
		checkGemm(t, fmt.Sprintf("Q4_K tile layout, %d columns", cols), got, sub.want(Q4_K, dotQ4_K16, ldd), rows, ldd)
		if alone == nil {
			alone = got[:rows]
		}
		for i := range alone {
			if math.Float32bits(got[i]) != math.Float32bits(alone[i]) {
				t.Fatalf("row %d of column 0 is %v in a batch of %d, %v alone", i, got[i], cols, alone[i])
			}
		}
	}
}
