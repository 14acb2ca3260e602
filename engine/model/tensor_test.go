package model

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/engine/multigpu"
)

// tensorFixtures are the tensor-split fixtures: F32, F16 and quantized
// weights, 4 KV heads (stories260K, TinyStories-656K) and GQA with 2
// (rand-llama-gqa: 8 query heads on 2 KV heads).
var tensorFixtures = []string{
	"models/stories260K/stories260K-F32.gguf",
	"models/stories260K/stories260K-F16.gguf",
	"models/stories260K/stories260K-Q8_0mix.gguf",
	"models/tinystories-656K/TinyStories-656K-F32.gguf",
	"models/tinystories-656K/TinyStories-656K-Q4_0.gguf",
	"arch/rand-llama-gqa-F32.gguf",
	"arch/rand-llama-gqa-Q8_0.gguf",
}

// planSplit plans every block and the head over n fresh stand-ins.
func planSplit(t *testing.T, m *Model, n int, o SplitOptions) (Placement, *multigpu.Placement) {
	t.Helper()
	o.Output, o.Ctx = true, 64
	p, mp, err := m.PlanSplit(standIns(n), o)
	if err != nil {
		t.Fatal(err)
	}
	return p, mp
}

// tensorBound is the bound on the relative RMS of a split's logits to one
// device's. Only the order of the sums of O's and down's rows changes
// (each shard sums its columns, the lead adds the shards' sums), so for
// weights sliced as stored the difference is float32 rounding, a few
// ulps per sum grown through the blocks: 1e-5 (measured ≤ 6.3e-7). A
// quantized O or down whose shard columns do not fall on its 32-wide
// blocks is converted to F16 for the shard (Q8_0·scale products need up
// to 19 bits), so such splits get the F16 conversion's 2e-3.
func tensorBound(m *Model, p Placement) float64 {
	o := m.off
	for l := range o.w {
		for _, sh := range o.w[l].shards {
			if (sh.o.n > 0 && sh.o.t != mustKernelType(m.Layers[l].Attn.O.W)) ||
				(sh.dn.n > 0 && sh.dn.t != mustKernelType(m.Layers[l].FFN.Down.W)) {
				return 2e-3
			}
		}
	}
	return 1e-5
}

func mustKernelType(w *Weight) device.WeightType {
	t, ok := device.KernelType(w.Type)
	if !ok {
		return device.F16
	}
	return t
}

// checkSplit runs the prompt and 6 decode steps under p and holds the
// logits against want (one device's, decoding toks) within the bound,
// with the same greedy tokens; a second run must repeat every bit.
func checkSplit(t *testing.T, m *Model, p Placement, what string, want [][]float32, toks []int32) {
	t.Helper()
	place(t, m, p)
	pr := prompt(m)
	got, _ := forcedLogits(t, m, pr, len(pr), len(toks), toks)
	bound, worst := tensorBound(m, p), 0.0
	for i := range want {
		e := fixtures.RelRMS(got[i], want[i])
		worst = max(worst, e)
		if e > bound || math.IsNaN(e) {
			t.Errorf("%s, step %d: rel RMS %.3g > %.g", what, i, e, bound)
		}
		if argmax(got[i]) != argmax(want[i]) {
			t.Errorf("%s, step %d: greedy token %d, one device %d", what, i, argmax(got[i]), argmax(want[i]))
		}
	}
	again, _ := forcedLogits(t, m, pr, 5, len(toks), toks)
	sameBits(t, what+", again in chunks of 5", again, got)
	t.Logf("%s: worst rel RMS %.3g (bound %.g)", what, worst, bound)
}

// oneDevice is the reference: every block and the head on one stand-in.
func oneDevice(t *testing.T, m *Model) ([][]float32, []int32) {
	t.Helper()
	place(t, m, LastLayers(m.NLayer, m.NLayer+1, standIns(1)[0]))
	pr := prompt(m)
	return forcedLogits(t, m, pr, len(pr), 6, nil)
}

// TestTensorSplit: every block split by tensor over 2 and 3 stand-ins
// (equal shares, and 3,1) against one stand-in: the bound of tensorBound,
// the same greedy tokens, and the same bits when run again (the
// all-reduce's order is fixed) and with the prompt in chunks.
func TestTensorSplit(t *testing.T) {
	for _, file := range tensorFixtures {
		t.Run(file, func(t *testing.T) {
			m := loadFixture(t, file)
			want, toks := oneDevice(t, m)
			for _, c := range []struct {
				n      int
				shares []float64
			}{{2, nil}, {2, []float64{3, 1}}, {3, nil}} {
				if c.n > m.NHeadKV {
					continue // TestSplitShapeErrors
				}
				p, _ := planSplit(t, m, c.n, SplitOptions{Mode: multigpu.Tensor, Shares: c.shares})
				for l := range m.NLayer {
					if len(p.Tensor[l]) != c.n {
						t.Fatalf("block %d: %d shards, want %d", l, len(p.Tensor[l]), c.n)
					}
				}
				checkSplit(t, m, p, fmt.Sprintf("%d devices, shares %v", c.n, c.shares), want, toks)
			}
		})
	}
}

// TestHybridSplit: 4 stand-ins as 2 layer groups × 2 tensor shards
// (Inferflow's Table 4), planned by engine/multigpu, against one device.
func TestHybridSplit(t *testing.T) {
	// (TinyStories-656K is left out: its head outweighs a block, so the
	// planner rightly gives the head's group no blocks.)
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "models/stories260K/stories260K-Q8_0mix.gguf", "arch/rand-llama-gqa-F32.gguf"} {
		t.Run(file, func(t *testing.T) {
			m := loadFixture(t, file)
			want, toks := oneDevice(t, m)
			p, mp := planSplit(t, m, 4, SplitOptions{Mode: multigpu.Hybrid, TensorGroup: 2})
			if len(mp.Groups) != 2 || mp.Groups[0].End == 0 || mp.Groups[1].First == m.NLayer {
				t.Fatalf("groups %+v, want 2 with blocks each", mp.Groups)
			}
			for l := range m.NLayer {
				g := 0
				if l >= mp.Groups[0].End {
					g = 2
				}
				if sh := p.Tensor[l]; len(sh) != 2 || sh[0].Device != g || sh[1].Device != g+1 || p.Layer[l] != g {
					t.Fatalf("block %d: on %d, shards %+v", l, p.Layer[l], sh)
				}
			}
			if p.Output != 2 {
				t.Errorf("head on device %d, want 2 (the last group's lead)", p.Output)
			}
			checkSplit(t, m, p, "2 groups × 2 devices", want, toks)
		})
	}
}

// TestTensorPartialOffload: the first blocks on the host, the rest split
// by tensor over 2 devices with the head: within the host/device bound of
// TestHostDeviceSplit of the CPU engine.
func TestTensorPartialOffload(t *testing.T) {
	m := loadFixture(t, "models/stories260K/stories260K-F32.gguf")
	pr := prompt(m)
	cpu := genLogits(t, m, pr, len(pr), 4)
	p, _, err := m.PlanSplit(standIns(2), SplitOptions{Mode: multigpu.Tensor, First: 2, Output: true, Ctx: 64})
	if err != nil {
		t.Fatal(err)
	}
	if p.Layer[0] != -1 || p.Layer[1] != -1 || len(p.Tensor[2]) != 2 {
		t.Fatalf("placement %+v", p)
	}
	place(t, m, p)
	got := genLogits(t, m, pr, len(pr), 4)
	for i := range got {
		if e := fixtures.RelRMS(got[i], cpu[i]); e > 1e-4 {
			t.Errorf("step %d: rel RMS %.3g to the CPU", i, e)
		}
	}
}

// TestTensorPagedBatch: TestDevicePagedBatch's batch (interleaved paged
// blocks, gathers, a fork's device row copies) under a 2-device tensor
// split of every block: each device's cache holds its KV head, and the
// batch equals each sequence run alone bit for bit.
func TestTensorPagedBatch(t *testing.T) {
	m := loadFixture(t, "arch/rand-llama-gqa-F32.gguf")
	p, _ := planSplit(t, m, 2, SplitOptions{Mode: multigpu.Tensor})
	place(t, m, p)
	pool := pagedBatchCheck(t, m)
	kv, err := pool.devCache()
	if err != nil {
		t.Fatal(err)
	}
	rows := pool.blocks * pool.blockTokens
	for l := range m.NLayer {
		for si, sh := range p.Tensor[l] {
			nkv := sh.KVHeads[1] - sh.KVHeads[0]
			if got, want := kv.k[l][si].Bytes(), 4*rows*nkv*m.HeadDim; nkv != 1 || got != want {
				t.Errorf("block %d shard %d: %d KV heads, K cache %d bytes, want 1 head and %d bytes", l, si, nkv, got, want)
			}
		}
	}
}

// TestTensorSplitMemory: each device holds its share of the weights and
// of the KV cache. Weights: a device's bytes (as the stand-in counts its
// allocations) are its share of one device's, within the granularity of
// the split (a KV head's matrices, a 32-row FFN granule, the norms on the
// lead): |bytes − share·total| ≤ 10% of total for 4 KV heads. KV: the
// device's K and V rows hold its KV heads only, exactly.
func TestTensorSplitMemory(t *testing.T) {
	m := loadFixture(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")
	one := standIns(1)
	place(t, m, LastLayers(m.NLayer, m.NLayer, one[0]))
	total := one[0].(*device.StandIn).Allocated()
	for _, shares := range [][]float64{{1, 1}, {3, 1}} {
		devs := standIns(2)
		p, _, err := m.PlanSplit(devs, SplitOptions{Mode: multigpu.Tensor, Shares: shares, Ctx: 64})
		if err != nil {
			t.Fatal(err)
		}
		place(t, m, p)
		s := m.NewState(64, 4)
		if _, err := s.Forward(prompt(m)[:4], false); err != nil {
			t.Fatal(err)
		}
		for i, d := range devs {
			got := d.(*device.StandIn).Allocated()
			w := m.DeviceWeightBytes(i)
			share := shares[i] / (shares[0] + shares[1])
			if math.Abs(float64(w)-share*float64(total)) > 0.1*float64(total) || w > got {
				t.Errorf("shares %v: device %d holds %d weight bytes (%d allocated), share %.2f of %d", shares, i, w, got, share, total)
			}
			var kvb, heads int
			for l := range m.NLayer {
				sh := p.Tensor[l][i]
				heads += sh.KVHeads[1] - sh.KVHeads[0]
				kvb += s.dkv.k[l][i].Bytes() + s.dkv.v[l][i].Bytes()
			}
			if want := 2 * 4 * 64 * heads * m.HeadDim; kvb != want {
				t.Errorf("shares %v: device %d: KV cache %d bytes, want %d (%d KV heads over the blocks)", shares, i, kvb, want, heads)
			}
			t.Logf("shares %v: device %d: %d weight bytes of %d (%.3f), %d KV heads", shares, i, w, total, float64(w)/float64(total), heads)
		}
	}
}

// TestSplitShapeErrors: splits the shapes do not allow are errors that
// say why, before anything is uploaded.
func TestSplitShapeErrors(t *testing.T) {
	m := loadFixture(t, "arch/rand-llama-gqa-F32.gguf") // 2 KV heads
	devs := standIns(3)
	_, _, err := m.PlanSplit(devs, SplitOptions{Mode: multigpu.Tensor, Output: true})
	if !errors.Is(err, ErrSplitShape) {
		t.Errorf("3 devices for 2 KV heads: %v, want ErrSplitShape", err)
	}
	t.Log(err)
	if _, _, err = m.PlanSplit(standIns(4), SplitOptions{Mode: multigpu.Hybrid, TensorGroup: 3}); err == nil {
		t.Error("a tensor group of 3 for 4 devices: no error")
	}
	g := loadFixture(t, "arch/rand-gpt2-F32.gguf")
	if _, _, err = g.PlanSplit(standIns(2), SplitOptions{Mode: multigpu.Tensor}); !errors.Is(err, errDeviceUnsupported) {
		t.Errorf("gpt2 blocks: %v, want errDeviceUnsupported", err)
	}
	for _, d := range devs {
		if a := d.(*device.StandIn).Allocated(); a != 0 {
			t.Errorf("%s: %d bytes allocated", d.Name(), a)
		}
	}
}

// TestAutoPartition: the planner's Auto over 4 stand-ins with given
// measurements picks the layer partition when activations cross a slow
// link (an all-reduce per sub-layer would cost more than it saves) and
// splits by tensor over a fast one; both run the one-device text, and
// the reason names the alternatives it compared. Unequal speeds set the
// shares (the faster device gets more heads); speeds within 15% are
// equal shares.
func TestAutoPartition(t *testing.T) {
	m := loadFixture(t, "models/stories260K/stories260K-F32.gguf")
	want, toks := oneDevice(t, m)
	probes := func(read, link, lat float64) []device.Probe {
		ps := make([]device.Probe, 4)
		for i := range ps {
			ps[i] = device.Probe{ReadBytesPerSec: read, LinkBytesPerSec: link, LinkLatency: lat}
		}
		return ps
	}
	// A block of this model reads ~0.1 MB: at 1 GB/s, ~0.1 ms a block.
	slow := probes(1e9, 1e6, 1e-3)  // 1 MB/s, 1 ms a message
	fast := probes(1e9, 1e12, 1e-9) // free links
	p, mp := planSplit(t, m, 4, SplitOptions{Mode: multigpu.Auto, Probes: slow})
	if mp.Mode != multigpu.Layers || !strings.Contains(mp.Reason, "among") {
		t.Errorf("slow link: chose %v; %s", mp.Mode, mp.Reason)
	}
	checkSplit(t, m, p, "auto over a slow link", want, toks)
	p, mp = planSplit(t, m, 4, SplitOptions{Mode: multigpu.Auto, Probes: fast})
	if mp.Mode == multigpu.Layers || mp.TensorGroup < 2 {
		t.Errorf("free link: chose %v with groups of %d; %s", mp.Mode, mp.TensorGroup, mp.Reason)
	}
	checkSplit(t, m, p, "auto over a free link", want, toks)
	// Shares: device 0 twice as fast as the others under a tensor split
	// gets more FFN columns;
	// a 10% difference is noise.
	uneven := probes(1e9, 1e12, 1e-9)
	uneven[0].ReadBytesPerSec = 2e9
	_, mp = planSplit(t, m, 4, SplitOptions{Mode: multigpu.Tensor, Probes: uneven})
	heads := func(mp *multigpu.Placement, i int) int { // this model has 4 KV heads: the FFN columns show the shares
		sh := mp.Groups[0].Shards[i]
		return sh.FFNCols[1] - sh.FFNCols[0]
	}
	if heads(mp, 0) <= heads(mp, 1) {
		t.Errorf("device 0 twice as fast: shards %+v", mp.Groups[0].Shards)
	}
	noisy := probes(1e9, 1e12, 1e-9)
	noisy[0].ReadBytesPerSec = 1.1e9
	_, mp = planSplit(t, m, 4, SplitOptions{Mode: multigpu.Tensor, Probes: noisy})
	if heads(mp, 0) != heads(mp, 1) {
		t.Errorf("device 0 10%% faster (noise): shards %+v", mp.Groups[0].Shards)
	}
}
