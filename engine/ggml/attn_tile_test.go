package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotsTileF32: the kernel in use equals the Go twin (one dotsF32Go per
// row) bit for bit for odd row and key counts, head sizes with and without
// the fast path, and leaves the guard cells around each output row alone.
func TestDotsTileF32(t *testing.T) { checkDotsTile(t) }

func checkDotsTile(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{7, 8, 24, 32, 40, 48, 64, 72, 80, 96, 128, 136} {
		for _, rows := range []int{1, 2, 3, 5, 8} {
			for _, m := range []int{1, 3, 4, 5, 8, 13, 67} {
				qs, ks := n+r.IntN(3)*8+r.IntN(2), n+r.IntN(9)
				os := m + 3 + r.IntN(4)
				q, k := randFloats(r, (rows-1)*qs+n, 1), randFloats(r, (m-1)*ks+n, 1)
				base := randFloats(r, rows*os+2, 1)
				got, want := append([]float32(nil), base...), append([]float32(nil), base...)
				DotsTileF32(q, qs, rows, k, ks, m, n, got[1:], os)
				dotsTileGo(q, qs, rows, k, ks, m, n, want[1:], os)
				if i := sameBits(got, want); i >= 0 {
					t.Fatalf("n=%d rows=%d m=%d: cell %d kernel %v, twin %v", n, rows, m, i, got[i], want[i])
				}
				// And the twin is DotsF32 row by row.
				for i := 0; i < rows; i++ {
					row := make([]float32, m)
					DotsF32(q[i*qs:i*qs+n], k, ks, row)
					if j := sameBits(row, got[1+i*os:1+i*os+m]); j >= 0 {
						t.Fatalf("n=%d rows=%d m=%d: row %d key %d tile %v, DotsF32 %v", n, rows, m, i, j, got[1+i*os+j], row[j])
					}
				}
			}
		}
	}
}

// TestAccumulateTileF32: the kernel in use equals the Go twin (one
// accumulateRowsGo per row) bit for bit, guard cells untouched.
func TestAccumulateTileF32(t *testing.T) { checkAccumulateTile(t) }

func checkAccumulateTile(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, n := range []int{1, 5, 8, 13, 16, 24, 32, 40, 48, 56, 64, 72, 80, 100, 112, 128, 136, 200} {
		for _, rows := range []int{1, 2, 3, 4, 7} {
			for _, m := range []int{1, 3, 64, 77} {
				vs, ws := n+r.IntN(5), m+r.IntN(3)
				os := n + 2 + r.IntN(4)
				w, v := randFloats(r, (rows-1)*ws+m, 0.3), randFloats(r, (m-1)*vs+n, 1)
				base := randFloats(r, rows*os+2, 1)
				got, want := append([]float32(nil), base...), append([]float32(nil), base...)
				AccumulateTileF32(got[1:], os, w, ws, rows, v, vs, m, n)
				accTileGo(want[1:], os, w, ws, rows, v, vs, m, n)
				if i := sameBits(got, want); i >= 0 {
					t.Fatalf("n=%d rows=%d m=%d: cell %d kernel %v, twin %v", n, rows, m, i, got[i], want[i])
				}
			}
		}
	}
}

// softMaxGo is SoftMax through the plain-Go maximum and exponentials.
func softMaxGo(x []float32) {
	maxv := maxF32(x)
	n8 := len(x) &^ 7
	sum := expGroupsGo(x[:n8], maxv)
	for i := n8; i < len(x); i++ {
		e := float32(math.Exp(float64(x[i] - maxv)))
		x[i] = e
		sum += float64(e)
	}
	scaleGo(x, float32(1/sum))
}

// TestSoftMaxRow: SoftMax with the vector maximum and the widest exp
// kernel equals the plain-Go softmax bit for bit (lengths with and without
// tails, large spreads that reach exp's slow lanes, zeros of both signs as
// the maximum), and the vector maximum equals maxF32, NaNs skipped.
func TestSoftMaxRow(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	for _, n := range []int{1, 3, 8, 9, 31, 32, 33, 40, 100, 257, 1000} {
		for _, spread := range []float64{0.1, 3, 60} {
			x := randFloats(r, n, spread)
			if spread == 0.1 {
				for i := range x {
					x[i] = -float32(math.Abs(float64(x[i])))
				}
				x[r.IntN(n)] = float32(math.Copysign(0, -1))
				x[r.IntN(n)] = 0
			}
			if g, w := maxRow(x), maxF32(x); g != w {
				t.Fatalf("n=%d: max %v, maxF32 %v", n, g, w)
			}
			got, want := append([]float32(nil), x...), append([]float32(nil), x...)
			SoftMax(got)
			softMaxGo(want)
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("n=%d spread=%v: %d SoftMax %v, plain Go %v", n, spread, i, got[i], want[i])
			}
			nan := append([]float32(nil), x...)
			nan[r.IntN(n)] = float32(math.NaN())
			if n > 1 {
				if g, w := maxRow(nan), maxF32(nan); g != w && !(g == 0 && w == 0) {
					t.Fatalf("n=%d: max with a NaN %v, maxF32 %v", n, g, w)
				}
			}
		}
	}
}
