package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestShortRowsMatchGo runs every type's fast MatVec on rows of one to a few
// blocks (the 64- and 128-wide rows of the tiny trained models) against the
// plain-Go dot, treating NaN as a mismatch.
func TestShortRowsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		bs := typ.BlockSize()
		for _, blocks := range []int{1, 2, 3, 4, 5, 9} {
			n := blocks * max(bs, 32)
			if bs == 1 {
				n = blocks*32 + 12
			}
			for _, rows := range []int{1, 3, 4, 5, 8} {
				w := make([]byte, typ.RowSize(n)*rows)
				f := make([]float32, n)
				for rr := 0; rr < rows; rr++ {
					for i := range f {
						f[i] = float32(r.NormFloat64())
					}
					QuantizeRow(typ, f, w[rr*typ.RowSize(n):(rr+1)*typ.RowSize(n)])
				}
				for i := range f {
					f[i] = float32(r.NormFloat64())
				}
				vt := typ.VecDotType()
				x := make([]byte, vt.RowSize(n))
				QuantizeActivation(vt, f, x)
				dst := make([]float32, rows)
				MatVec(typ, n, w, x, dst)
				for rr := range dst {
					want := goDot[typ](n, w[rr*typ.RowSize(n):(rr+1)*typ.RowSize(n)], x)
					if math.IsNaN(float64(dst[rr])) || math.Abs(float64(dst[rr]-want)) > 1e-4*(1+math.Abs(float64(want))) {
						t.Errorf("%v n=%d rows=%d row %d: got %v, plain Go %v", typ, n, rows, rr, dst[rr], want)
					}
				}
			}
		}
	}
}
