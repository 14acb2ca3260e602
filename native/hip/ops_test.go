package hip

import (
	"testing"

	"flowchat/native/cuda"
)

// TestLaunchesWholeWavefronts: every launch the launchers make (native/
// cuda's, whose constants TestKernelConstants holds to the sources'
// #defines) has blocks of whole wavefronts at 32 and 64, with at most one
// wavefront's worth of wavefronts (fc_block_sum's limit).
func TestLaunchesWholeWavefronts(t *testing.T) {
	for _, w := range []int{32, 64} {
		mm, _ := cuda.MatMulLaunch(w, cuda.WeightQ4_K, 0, 0, 0, 4096, 100, 3)
		attn, _ := cuda.AttnDecodeLaunch(cuda.WeightF16, 0, 0, 0, 0, 0, 10, 128, 32, 8, 1024, 1)
		store, _ := cuda.StoreKVLaunch(cuda.WeightQ8_0, 0, 0, 1024)
		split, _ := cuda.AttnSplitLaunches(cuda.WeightQ8_0, 0, 0, 0, 0, 0, 0, 4096, 128, 32, 8, 1024, 1)
		prefill, _ := cuda.AttnPrefillLaunch(cuda.WeightF16, 0, 0, 0, 0, 100, 5, 128, 32, 8, 1024, 1)
		for _, l := range []cuda.Launch{mm, attn, store, split[0], split[1], prefill, cuda.ArgmaxLaunch(0, 0, 32000, 2), cuda.RMSNormLaunch(0, 0, 0, 4096, 2, 1e-5),
			cuda.RoPELaunch(0, 0, 3, 4096, 32, 128, 128, 1e4, 1, false), cuda.SiLUMulLaunch(0, 0, 0, 1000),
			cuda.AddLaunch(0, 0, 1000), cuda.SoftmaxLaunch(0, 100, 2)} {
			threads := max(l.Block.X, 1) * max(l.Block.Y, 1)
			if threads%w != 0 || threads/w > w {
				t.Errorf("%s: block of %d threads at wavefront %d", l.Kernel, threads, w)
			}
		}
	}
}

// TestLoadKernelsRefusesUnknownArch: a device that does not name its
// target gets a clear error before anything compiles.
func TestLoadKernelsRefusesUnknownArch(t *testing.T) {
	c := &Context{Device: Device{WarpSize: 64}}
	if _, err := c.LoadKernels(nil, nil); err == nil {
		t.Error("LoadKernels without an arch succeeded")
	}
	c.Device.Arch, c.Device.WarpSize = "gfx1100", 64
	if _, err := c.LoadKernels(nil, nil); err == nil {
		t.Error("LoadKernels with a wave64 gfx1100 succeeded")
	}
}
