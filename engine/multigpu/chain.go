package multigpu

import "math/rand/v2"

// Chain is a small stand-in network with a transformer layer's matrix
// shapes and split points, for running placements on the CPU. Per layer:
//
//	x += Wo · act(Wq · x)   attention-shaped: Wq [NHead·HeadDim × D], Wo [D × NHead·HeadDim]
//	x += W2 · act(W1 · x)   FFN-shaped:       W1 [F × D],             W2 [D × F]
//
// Matrices are row-major float32. act is x/(1+|x|), elementwise. The
// products that a tensor split divides along their inputs (Wo, W2) sum
// their columns in chunks (one head, or Granule FFN columns): each chunk
// is summed left to right from zero, then the chunk sums are added in
// order. That order is the reference the ordered all-reduce reproduces.
type Chain struct {
	D, NHead, NKVHead, HeadDim, F, Granule int
	Layers                                 []ChainLayer
}

// ChainLayer holds one layer's four matrices.
type ChainLayer struct{ Wq, Wo, W1, W2 []float32 }

// NewChain returns a chain with weights uniform in ±1/√fan-in.
func NewChain(rng *rand.Rand, layers, d, nHead, nKVHead, headDim, f, granule int) *Chain {
	c := &Chain{D: d, NHead: nHead, NKVHead: nKVHead, HeadDim: headDim, F: f, Granule: granule}
	q := nHead * headDim
	for range layers {
		c.Layers = append(c.Layers, ChainLayer{
			Wq: randMat(rng, q*d, d), Wo: randMat(rng, d*q, q), W1: randMat(rng, f*d, d), W2: randMat(rng, d*f, f),
		})
	}
	return c
}

func randMat(rng *rand.Rand, n, fanIn int) []float32 {
	m := make([]float32, n)
	s := 2 / float32(fanIn)
	for i := range m {
		m[i] = (rng.Float32() - 0.5) * s * 4
	}
	return m
}

// Shape is the chain's layer shape for Plan, at 4 bytes per weight.
func (c *Chain) Shape() Layer {
	return Layer{DModel: c.D, NHead: c.NHead, NKVHead: c.NKVHead, HeadDim: c.HeadDim, DFF: c.F,
		BytesPerWeight: 4, FFNGranule: c.Granule}
}

// Model is the chain as Plan sees it (no embedding or output head).
func (c *Chain) Model() Model {
	m := Model{}
	for range c.Layers {
		m.Layers = append(m.Layers, c.Shape())
	}
	return m
}

func act(v float32) float32 {
	a := v
	if a < 0 {
		a = -a
	}
	return v / (1 + a)
}

// dot sums a[i]·b[i] left to right from zero. The explicit conversions
// keep the compiler from fusing multiply and add, so every platform gives
// the same bits.
func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += float32(a[i] * b[i])
	}
	return s
}

// rowsProduct computes out[r-r0] = W[r] · x for rows [r0, r1) of the
// row-major W with len(x) columns: the row split, whose results need only
// a gather.
func rowsProduct(w, x []float32, r0, r1 int, out []float32) {
	n := len(x)
	for r := r0; r < r1; r++ {
		out[r-r0] = act(dot(w[r*n:(r+1)*n], x))
	}
}

// chunkPartials computes, for every row of W (rows × cols) and every chunk
// k of its columns within [c0, c1) (chunk boundaries every `chunk`
// columns), part[k][row] = Σ W[row][j]·h[j-c0] over the chunk. h holds
// columns [c0, c1) only.
func chunkPartials(w []float32, rows, cols, c0, c1, chunk int, h []float32, part [][]float32) {
	for k := range part {
		j0, j1 := c0+k*chunk, min(c0+(k+1)*chunk, c1)
		for r := range rows {
			part[k][r] = dot(w[r*cols+j0:r*cols+j1], h[j0-c0:j1-c0])
		}
	}
}

// Forward runs the chain unsplit on x (length D), in place: the reference.
func (c *Chain) Forward(x []float32) {
	q := c.NHead * c.HeadDim
	h := make([]float32, max(q, c.F))
	for _, l := range c.Layers {
		c.subLayer(l.Wq, l.Wo, q, c.HeadDim, x, h[:q])
		c.subLayer(l.W1, l.W2, c.F, c.Granule, x, h[:c.F])
	}
}

func (c *Chain) subLayer(win, wout []float32, n, chunk int, x, h []float32) {
	rowsProduct(win, x, 0, n, h)
	part := make([][]float32, (n+chunk-1)/chunk)
	for k := range part {
		part[k] = make([]float32, c.D)
	}
	chunkPartials(wout, c.D, n, 0, n, chunk, h, part)
	for r := range c.D {
		var s float32
		for k := range part {
			s += part[k][r]
		}
		x[r] += s
	}
}
