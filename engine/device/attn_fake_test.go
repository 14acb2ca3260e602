//go:build linux

package device

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// attnOps are the Attention kernels' calls: a split decode over 2 chunks
// run twice (cold: every head recomputed; warm: combined under φ) and a
// tiled prefill of 11 rows after 6 cached ones, with GQA, for every cache
// type; and the greedy argmax over rows with a tie.
func attnOps(rng *rand.Rand) []attnOp {
	const hd, nHead, nKVHead, nKV = 32, 4, 2, 300
	const nTok, nPast = 11, 6
	kvStride := nKVHead * hd
	scale := 1 / float32(math.Sqrt(hd))
	nan := make([]float32, nHead)
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	var ops []attnOp
	for _, kv := range []WeightType{F32, F16, Q8_0} {
		ops = append(ops, attnOp{op: op{name: fmt.Sprintf("AttnSplit/%v", kv), scratch: 4,
			bufs: [][]byte{f32b(randFloats(rng, nHead*hd)), randWeights(rng, kv, kvStride, nKV), randWeights(rng, kv, kvStride, nKV),
				f32b(nan), make([]byte, 4*SplitScratch(nHead, nKV, hd)), make([]byte, 4*nHead*hd)},
			run: func(d Device, m []Mem) error {
				a := d.(Attention)
				for range 2 {
					if err := a.AttnSplit(kv, m[0], m[1], m[2], m[3], m[4], m[5], nKV, hd, nHead, nKVHead, kvStride, scale); err != nil {
						return err
					}
				}
				return nil
			}}, skip: 4 * nHead * nKV})
		ops = append(ops, attnOp{op: op{name: fmt.Sprintf("AttnPrefill/%v", kv),
			bufs: [][]byte{f32b(randFloats(rng, nTok*nHead*hd)), randWeights(rng, kv, kvStride, nPast+nTok), randWeights(rng, kv, kvStride, nPast+nTok),
				make([]byte, 4*nTok*nHead*hd)},
			run: func(d Device, m []Mem) error {
				return d.(Attention).AttnPrefill(kv, m[0], m[1], m[2], m[3], nTok, nPast, hd, nHead, nKVHead, kvStride, scale)
			}}})
	}
	const n, rows = 1003, 3
	x := randFloats(rng, n*rows)
	x[n+700], x[n+5] = 9, 9 // a tie: the lower index wins
	ops = append(ops, attnOp{op: op{name: "Argmax", bufs: [][]byte{f32b(x), make([]byte, 4*rows)},
		run: func(d Device, m []Mem) error { return d.(Argmaxer).Argmax(m[0], m[1], n, rows) }}})
	return ops
}

// attnOp is an op whose scratch buffer is compared from byte skip on.
type attnOp struct {
	op
	skip int
}

// TestCUDAFakeAttentionMatchesStandIn: the split decode, the tiled
// prefill and the argmax through NVRTC, the launchers' grids and argument lists and the
// fake's cuLaunchKernel give the stand-in's (the twins') bytes exactly:
// outputs, φ and the split's partials, sums and maxima.
func TestCUDAFakeAttentionMatchesStandIn(t *testing.T) {
	d := openFakeCUDA(t)
	defer d.Close()
	h := hooks(t)
	ref := NewStandIn("cpu:0", 0, 32)
	for _, o := range attnOps(rand.New(rand.NewPCG(3, 4))) {
		before := h.launches()
		got, want := runOp(t, d, o.op), runOp(t, ref, o.op)
		if h.launches() == before {
			t.Errorf("%s: no kernel ran on the fake driver", o.name)
		}
		for i := range got {
			if o.scratch == i { // the fallback's scores: the twin keeps its own
				got[i], want[i] = got[i][o.skip:], want[i][o.skip:]
			}
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%s: buffer %d differs from the stand-in's", o.name, i)
			}
		}
	}
}
