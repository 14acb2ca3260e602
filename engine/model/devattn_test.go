package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
)

// countingDevice is a stand-in that counts its Attention launches.
type countingDevice struct {
	*device.StandIn
	split, prefill int
}

func (d *countingDevice) AttnSplit(kv device.WeightType, q, k, v, phi, scratch, out device.Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	d.split++
	return d.StandIn.AttnSplit(kv, q, k, v, phi, scratch, out, nKV, headDim, nHead, nKVHead, kvStride, scale)
}

func (d *countingDevice) AttnPrefill(kv device.WeightType, q, k, v, out device.Mem, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	d.prefill++
	return d.StandIn.AttnPrefill(kv, q, k, v, out, nTok, nPast, headDim, nHead, nKVHead, kvStride, scale)
}

// perTokenDevice is a stand-in without device.Attention: one decode
// launch per row, the meaning of the fast paths.
type perTokenDevice struct{ device.Device }

// longPrompt is n pseudo-random token ids of m's vocabulary.
func longPrompt(m *Model, n int) []int32 {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(r.IntN(m.NVocab))
	}
	return p
}

// TestDeviceAttnFastPaths: a prompt (in chunks of 37, then one token) and
// decode steps past devSplitMinKeys (lowered to 257, so decode rows over
// 2 chunks of keys take the split path: the first cold, recomputed
// exactly, then warm) through a stand-in with the tiled prefill and split
// decode, for F32, F16 and Q8_0 caches: every step's logits within
// TestDeviceMatchesCPU's bound of the CPU engine's (same cache type) with
// the same greedy tokens, and within 1e-4 relative RMS of the same
// stand-in's per-row decode launches; both kernels did run.
func TestDeviceAttnFastPaths(t *testing.T) {
	defer func(v int) { devSplitMinKeys = v }(devSplitMinKeys)
	devSplitMinKeys = 257
	for _, kv := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0} {
		for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "arch/rand-llama-gqa-F32.gguf"} {
			t.Run(kv.String()+"/"+file, func(t *testing.T) {
				m := loadFixture(t, file)
				if m.kvDim()%kv.BlockSize() != 0 {
					t.Skipf("K rows of %d are not whole %v blocks", m.kvDim(), kv)
				}
				p := longPrompt(m, 253)
				run := func(kv ggml.Type, forced []int32) ([][]float32, []int32) {
					s := m.NewState(288, 37)
					if err := s.SetKVType(kv); err != nil {
						t.Fatal(err)
					}
					return stateLogits(t, s, p, 37, 8, forced)
				}
				host := kv // the CPU run's cache: the device's type
				if device.KVType(kv, m.HeadDim) == device.F32 {
					host = ggml.F32
				}
				want, toks := run(host, nil)
				d := &countingDevice{StandIn: device.NewStandIn("standin", 0, 32)}
				place(t, m, LastLayers(m.NLayer, m.NLayer+1, d))
				got, _ := run(kv, toks)
				if d.prefill == 0 || d.split == 0 {
					t.Fatalf("%d prefill and %d split launches, want both", d.prefill, d.split)
				}
				place(t, m, LastLayers(m.NLayer, m.NLayer+1, perTokenDevice{device.NewStandIn("per-token", 0, 32)}))
				ref, _ := run(kv, toks)
				bound, _ := weightBound(m)
				for i := range want {
					if e := fixtures.RelRMS(got[i], want[i]); e > bound || math.IsNaN(e) {
						t.Errorf("step %d: rel RMS %.3g to the CPU > %.g", i, e, bound)
					}
					if argmax(got[i]) != argmax(want[i]) {
						t.Errorf("step %d: greedy token %d, CPU %d", i, argmax(got[i]), argmax(want[i]))
					}
					if e := fixtures.RelRMS(got[i], ref[i]); e > 1e-4 || math.IsNaN(e) {
						t.Errorf("step %d: rel RMS %.3g to per-row launches > 1e-4", i, e)
					}
				}
				t.Logf("%d prefill, %d split launches", d.prefill, d.split)
			})
		}
	}
}

// TestDevicePrefillChunking: the tiled prefill is batching-invariant: a
// prompt in chunks of 2, 5 or 16 gives the logits of the prompt in one
// batch bit for bit, on two warp sizes.
func TestDevicePrefillChunking(t *testing.T) {
	m := loadFixture(t, "arch/rand-llama-gqa-F32.gguf")
	p := longPrompt(m, 41)
	for _, warp := range []int{32, 64} {
		place(t, m, LastLayers(m.NLayer, m.NLayer+1, device.NewStandIn("standin", 0, warp)))
		lg := func(chunk int) [][]float32 {
			lg, _ := stateLogits(t, m.NewState(64, 41), p, chunk, 2, nil)
			return lg
		}
		want := lg(len(p))
		for _, c := range []int{2, 5, 16} {
			sameBits(t, fmt.Sprintf("warp %d, chunks of %d", warp, c), lg(c), want)
		}
	}
}
