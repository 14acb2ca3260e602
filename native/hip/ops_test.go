package hip

import (
	"regexp"
	"strconv"
	"testing"
)

// TestLaunchConstants: the launchers' constants equal the sources'
// #defines, and every block size is whole wavefronts at 32 and 64 with at
// most one wavefront's worth of wavefronts (fc_block_sum's limit).
func TestLaunchConstants(t *testing.T) {
	want := map[string]int{"MM_WARPS": mmWarps, "MM_MAX_COLS": mmMaxCols, "NORM_THREADS": normThreads,
		"ROPE_THREADS": ropeThreads, "ACT_THREADS": actThreads, "ATTN_THREADS": attnThreads}
	re := regexp.MustCompile(`(?m)^#define (\w+) (\d+)$`)
	seen := map[string]bool{}
	for _, src := range KernelSources() {
		for _, m := range re.FindAllStringSubmatch(src.Code, -1) {
			v, _ := strconv.Atoi(m[2])
			if w, ok := want[m[1]]; ok {
				seen[m[1]] = true
				if v != w {
					t.Errorf("%s: %s is %d, launcher uses %d", src.Name, m[1], v, w)
				}
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s not found in the kernel sources", name)
		}
	}
	for _, threads := range []int{normThreads, ropeThreads, actThreads, attnThreads} {
		for _, w := range []int{32, 64} {
			if threads%w != 0 || threads/w > w {
				t.Errorf("block of %d threads at wavefront %d", threads, w)
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
