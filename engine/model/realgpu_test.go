package model

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
)

// realGPU opens the machine's first GPU (CUDA, else ROCm) for the tests
// that only a GPU can run (`make test-gpu`), skipping with the reason
// where there is none.
func realGPU(t *testing.T) device.Device {
	t.Helper()
	d, err := device.Default()
	if errors.Is(err, device.ErrNoDevice) {
		t.Skipf("skipping: needs a GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err) // a GPU is there but does not start: that is a failure
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestRealGPUMatchesCPU is TestDeviceMatchesCPU on the real GPU: every
// device fixture fully offloaded (blocks and head) against the CPU engine
// within the same bounds and the same greedy tokens for float weights,
// then split between the CPU and the GPU at a quarter, half and all but
// one of the blocks (within the bound too), and the prompt in chunks of
// 5 against one batch (the GPU must be batching-invariant as the twins
// are: within the bound, since cuBLAS may sum differently).
func TestRealGPUMatchesCPU(t *testing.T) {
	d := realGPU(t)
	for _, file := range deviceFixtures {
		t.Run(file, func(t *testing.T) {
			m := loadFixture(t, file)
			p := prompt(m)
			want, toks := forcedLogits(t, m, p, len(p), 6, nil)
			bound, float := weightBound(m)
			check := func(what string, got [][]float32) {
				t.Helper()
				worst := 0.0
				for i := range want {
					e := fixtures.RelRMS(got[i], want[i])
					worst = max(worst, e)
					if e > bound || math.IsNaN(e) {
						t.Errorf("%s: step %d: rel RMS %.3g > %.g", what, i, e, bound)
					}
					if float && argmax(got[i]) != argmax(want[i]) {
						t.Errorf("%s: step %d: greedy token %d, CPU %d", what, i, argmax(got[i]), argmax(want[i]))
					}
				}
				t.Logf("%s on %s: worst rel RMS %.3g (bound %.g)", what, d.Name(), worst, bound)
			}
			place(t, m, LastLayers(m.NLayer, m.NLayer+1, d))
			got, _ := forcedLogits(t, m, p, len(p), 6, toks)
			check("all blocks and the head", got)
			chunked, _ := forcedLogits(t, m, p, 5, 6, toks)
			check("the prompt in chunks of 5", chunked)
			for _, k := range []int{max(m.NLayer/4, 1), m.NLayer / 2, m.NLayer - 1} {
				if k < 1 {
					continue
				}
				place(t, m, LastLayers(m.NLayer, k, d))
				got, _ := forcedLogits(t, m, p, len(p), 6, toks)
				check(fmt.Sprintf("the last %d of %d blocks", k, m.NLayer), got)
			}
			place(t, m, LastLayers(m.NLayer, 0, d))
		})
	}
}

// TestRealGPUMemory: a full offload takes from the GPU's free memory what
// the placement's bytes say (weights as the device holds them, within
// 10% and the driver's allocation granularity of 2 MiB an allocation at
// most), and gives it back when the blocks return to the host. The model
// is a written one of ~570 MB of F32 weights: the fixtures' 1–5 MB fit in
// memory the driver already holds, and cuMemGetInfo did not move for them
// (H200, driver 580, 2026-11-26).
func TestRealGPUMemory(t *testing.T) {
	d := realGPU(t)
	m := openBenchModel(t, writeBenchModel(t, benchShape{"gpumem", 1024, 8, 16, 8, 4096, 2048}), 2)
	free0, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	place(t, m, LastLayers(m.NLayer, m.NLayer+1, d))
	free1, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for l := range m.NLayer {
		L := &m.Layers[l]
		for _, w := range []*Weight{L.Attn.Q.W, L.Attn.K.W, L.Attn.V.W, L.Attn.O.W, L.FFN.Gate.W, L.FFN.Up.W, L.FFN.Down.W} {
			want += DeviceMatrixBytes(w.Type, w.Cols, w.Rows)
		}
	}
	want += DeviceMatrixBytes(m.Output.W.Type, m.Output.W.Cols, m.Output.W.Rows)
	used := int64(free0) - int64(free1)
	t.Logf("%s: %d bytes taken for %d bytes of weights", d.Name(), used, want)
	if used < want*9/10 || used > want*11/10+64<<20 {
		t.Errorf("the offload took %d bytes of GPU memory for %d bytes of weights", used, want)
	}
	place(t, m, LastLayers(m.NLayer, 0, d))
	free2, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if int64(free2) < int64(free0)-64<<20 {
		t.Errorf("%d bytes free after the blocks came back, %d before the offload", free2, free0)
	}
}
