//go:build linux

package device

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"flowchat/native/cuda"
)

// TestCUDAFakeTiledMatMulMatchesStandIn: prefill-shaped matrix products
// (more columns than the matvec takes, odd rows and columns) on the CUDA
// device through the fake driver run matmul_tiled.cu's kernels, and give
// what the stand-in gives bit for bit: both took the tiled path
// (cuda.MatMulTiled), and the stand-in computes it with the tiled twin.
func TestCUDAFakeTiledMatMulMatchesStandIn(t *testing.T) {
	d := openFakeCUDA(t)
	defer d.Close()
	h := hooks(t)
	ref := NewStandIn("cpu:0", 0, 32)
	rng := rand.New(rand.NewPCG(3, 4))
	const rows, cols = 70, cuda.MatMulMatvecMaxCols + 17
	if !cuda.MatMulTiled(cols) {
		t.Fatalf("%d columns do not take the tiled path", cols)
	}
	for _, wt := range cuda.WeightTypes() {
		n := 96
		if wt.BlockSize() > 32 {
			n = 256
		}
		o := op{name: fmt.Sprintf("MatMul/tiled/%v", wt),
			bufs: [][]byte{randWeights(rng, wt, n, rows), f32b(randFloats(rng, n*cols)), make([]byte, 4*rows*cols)},
			run:  func(d Device, m []Mem) error { return d.MatMul(wt, m[0], m[1], m[2], n, rows, cols) }}
		before := h.launches()
		got, want := runOp(t, d, o), runOp(t, ref, o)
		if h.launches() == before {
			t.Errorf("%s: no kernel ran on the fake driver", o.name)
		}
		g, w := bf32(got[2]), bf32(want[2])
		for j := range w {
			if ulpDistance(g[j], w[j]) != 0 {
				t.Errorf("%s: y[%d] = %g, stand-in %g", o.name, j, g[j], w[j])
				break
			}
		}
	}
}
