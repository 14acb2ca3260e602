package model

import (
	"fmt"
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/native/cuda"
)

// tiledPrompt is a prompt of n tokens, more than the matvec's columns, so
// that a device prefill of it in one batch runs the tiled kernels.
func tiledPrompt(m *Model, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = (devPrompt[i%len(devPrompt)] + int32(7*i)) % int32(m.NVocab)
	}
	return p
}

// TestDeviceTiledPrefill: a 40-token prompt in one batch reaches the tiled
// matrix kernels (cuda.MatMulTiled) on a stand-in device, whose logits then
// stay within TestDeviceMatchesCPU's bounds of the CPU engine (same greedy
// token for float weights). Chunks of 20 columns (tiled too) give the same
// bits, since the tiled kernel computes each column alone; chunks of 8
// (the matvec) differ by summation order only, within 1e-4 relative RMS;
// two devices split at the middle layer give the same bits as one.
func TestDeviceTiledPrefill(t *testing.T) {
	const n, steps = 40, 4
	if !cuda.MatMulTiled(n) || !cuda.MatMulTiled(n/2) || cuda.MatMulTiled(8) {
		t.Fatalf("the shapes of this test no longer straddle the tiled rule")
	}
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "arch/rand-llama-gqa-Q4_K.gguf", "models/tinystories-656K/TinyStories-656K-Q4_0.gguf"} {
		t.Run(file, func(t *testing.T) {
			m := loadFixture(t, file)
			p := tiledPrompt(m, n)
			run := func(chunk int, forced []int32) ([][]float32, []int32) {
				return stateLogits(t, m.NewState(64, 64), p, chunk, steps, forced)
			}
			cpu, toks := run(n, nil)
			place(t, m, LastLayers(m.NLayer, m.NLayer+1, standIns(1)[0]))
			dev, _ := run(n, toks)
			bound, float := weightBound(m)
			for i := range cpu {
				if e := fixtures.RelRMS(dev[i], cpu[i]); e > bound || math.IsNaN(e) {
					t.Errorf("step %d: rel RMS to the CPU %.3g > %.g", i, e, bound)
				}
				if float && argmax(dev[i]) != argmax(cpu[i]) {
					t.Errorf("step %d: greedy token %d, CPU %d", i, argmax(dev[i]), argmax(cpu[i]))
				}
			}
			half, _ := run(n/2, toks)
			sameBits(t, "prompt in tiled chunks of 20", half, dev)
			small, _ := run(8, toks)
			worst := 0.0
			for i := range dev {
				e := fixtures.RelRMS(small[i], dev[i])
				worst = max(worst, e)
				if e > 1e-4 || math.IsNaN(e) {
					t.Errorf("step %d: matvec chunks vs tiled rel RMS %.3g > 1e-4", i, e)
				}
			}
			t.Logf("matvec chunks vs one tiled batch: worst rel RMS %.3g", worst)
			if worst == 0 {
				t.Error("chunks of 8 gave the one batch's bits: the batch did not run the tiled kernels")
			}
			if m.NLayer >= 2 {
				k := m.NLayer / 2
				place(t, m, ByRanges(standIns(2), []int{k, m.NLayer - k}))
				split, _ := run(n, toks)
				sameBits(t, fmt.Sprintf("2 devices split at %d", k), split, dev)
			}
		})
	}
}
