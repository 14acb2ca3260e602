//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRepackQ8Gemm: Q5_0 and IQ4_NL prompt batches through the Q8_0 tiles
// of every tier this CPU has, in every column grouping, equal bit for bit
// the per-row kernel's MatVec of each column (the installed decode
// kernels, which these batches must match) for odd shapes, the strip
// boundary (repackRows) included; and the rewritten blocks dequantize to
// the original's values exactly.
func TestRepackQ8Gemm(t *testing.T) {
	tiers := testTiers(t)
	r := rand.New(rand.NewPCG(55, 56))
	for _, tp := range []Type{Q5_0, IQ4_NL} {
		// The rewrite is exact: same values, same scale; the word-wise
		// rewrite equals the element-wise one.
		for _, n := range []int{32, 288, 4096} {
			w := randomRow(r, tp, n)
			w8, ref := make([]byte, Q8_0.RowSize(n)), make([]byte, Q8_0.RowSize(n))
			toQ8_0(tp, n/32, w, w8)
			toQ8_0Ref(tp, n/32, w, ref)
			if string(w8) != string(ref) {
				t.Fatalf("%v n=%d: the word-wise rewrite differs from the element-wise one", tp, n)
			}
			a, b := make([]float32, n), make([]float32, n)
			DequantizeRow(tp, w, a)
			DequantizeRow(Q8_0, w8, b)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("%v n=%d: element %d is %v rewritten as Q8_0, %v before", tp, n, i, b[i], a[i])
				}
			}
		}
		for _, tier := range tiers {
			k := tier[Q8_0]
			g := repackGemm(tp, k)
			for _, shape := range [][3]int{{32, 1, 2}, {288, 7, 5}, {288, 17, 8}, {768, 33, 13}, {96, 16, 24}, {64, 40, 3}, {4096, 5, 9}} {
				n, rows, cols := shape[0], shape[1], shape[2]
				c := newGemmCase(r, tp, n, rows, cols)
				want := c.want(tp, func(n int, w, x []byte) float32 {
					var out [1]float32
					MatVec(tp, n, w, x, out[:])
					return out[0]
				}, rows+2)
				for i, group := range []int{1, zGroup(k), zGroup(k)} {
					rowsOuter = i != 2
					var a Act
					a.prepare(tp, n, c.x, cols, prepKindQ8, k.off, group)
					ldd := rows + 2
					got := nanSlice(cols * ldd)
					g(n, c.w, rows, &a, got, ldd)
					checkGemm(t, fmt.Sprintf("%v via Q8_0 %s group %d n=%d %dx%d", tp, k.tier, a.group, n, rows, cols), got, want, rows, ldd)
				}
				rowsOuter = true
			}
		}
	}
	// The installed path: MatMulAct of a prepared batch equals MatVec, on
	// both sides of repackMinCols (the AMX tier leaves these types alone).
	for _, tp := range []Type{Q5_0, IQ4_NL} {
		for _, cols := range []int{1, repackMinCols - 1, repackMinCols, 11, 33} {
			n, rows := 288, 21
			c := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, c.x, cols)
			got := nanSlice(cols * rows)
			MatMulAct(tp, n, c.w, rows, &a, got, rows)
			want := c.want(tp, func(n int, w, x []byte) float32 {
				var out [1]float32
				MatVec(tp, n, w, x, out[:])
				return out[0]
			}, rows)
			checkGemm(t, fmt.Sprintf("%v MatMulAct %d columns", tp, cols), got, want, rows, rows)
		}
	}
}

// BenchmarkRepack: the rewrite of a 4096-element row against one per-row
// product of it (the cost repackMinCols weighs).
func BenchmarkRepack(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, rows = 4096, 64
	for _, tp := range []Type{Q5_0, IQ4_NL} {
		w := randomRow(r, tp, n*rows)
		x := randomActivation(r, Q8_0, n)
		buf := make([]byte, Q8_0.RowSize(n))
		out := make([]float32, rows)
		b.Run(fmt.Sprintf("%v/rewrite", tp), func(b *testing.B) {
			for range b.N {
				for row := range rows {
					toQ8_0(tp, n/32, w[row*tp.RowSize(n):], buf)
				}
			}
		})
		b.Run(fmt.Sprintf("%v/matvec", tp), func(b *testing.B) {
			for range b.N {
				MatVec(tp, n, w, x, out)
			}
		})
	}
}
