package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/sample"
)

// kvCache is a random cache of rows×stride floats stored as t.
func kvCache(r *rand.Rand, t WeightType, rows, stride int, scale float32) []byte {
	b := make([]byte, t.RowBytes(rows*stride))
	kvStoreTwin(t, b, randFloats(r, rows*stride, scale))
	return b
}

// maxAbsKV is max |v| over a cache.
func maxAbsKV(t WeightType, b []byte, n int) float64 {
	var m float64
	for i := range n {
		m = max(m, math.Abs(float64(kvAt(t, b, i))))
	}
	return m
}

// argmaxRows are rows for the greedy argmax: random, ties of the maximum
// in several threads' strides, −Inf entries, all equal, all −Inf.
func argmaxRows(r *rand.Rand, n int) [][]float32 {
	rows := [][]float32{randFloats(r, n, 5), randFloats(r, n, 5), make([]float32, n), make([]float32, n)}
	tie := rows[1]
	for _, i := range []int{n - 1, n / 2, n / 3, 7} {
		if i < n {
			tie[i] = 100
		}
	}
	for i := range rows[3] {
		rows[3][i] = float32(math.Inf(-1))
	}
	rows[0][n/2] = float32(math.Inf(-1))
	return rows
}

// TestArgmaxTwin: the argmax twin is engine/sample's Greedy (the lowest
// index of the largest logit) on rows without NaN, at odd lengths.
func TestArgmaxTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	for _, n := range []int{1, 3, 255, 257, 1001, 32007} {
		for i, row := range argmaxRows(r, n) {
			if got, want := argmaxTwin(row, n)[0], sample.Greedy(row); got != want {
				t.Errorf("n=%d row %d: argmax %d, Greedy %d", n, i, got, want)
			}
		}
	}
}
