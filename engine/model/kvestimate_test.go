package model

import (
	"math"
	"runtime"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// TestPlannerKVBytes: the KV cache the planner counts for a block
// (splitModel's KVBytesPerHead × KV heads, through device.KVCacheBytes)
// is within 10% of what a stand-in allocates per position for the block's
// F16 and Q8_0 caches (and F32), measured from its counted allocations:
// two pools that differ only in their block count.
func TestPlannerKVBytes(t *testing.T) {
	const ctx = 64
	m := loadFixture(t, "arch/rand-llama-gqa-F32.gguf")
	d := device.NewStandIn("standin", 0, 32)
	place(t, m, LastLayers(m.NLayer, m.NLayer, d))
	var keep []any // reachable to the end: a collected pool's cleanup would free device memory mid-count
	defer runtime.KeepAlive(&keep)
	for _, kv := range []ggml.Type{ggml.F16, ggml.Q8_0, ggml.F32} {
		if device.KVType(kv, m.HeadDim) == device.F32 && kv != ggml.F32 {
			t.Fatalf("heads of %d: no %v device cache to measure", m.HeadDim, kv)
		}
		alloc := func(blocks int) int64 {
			before := d.Allocated()
			p, err := m.NewKVPool(PoolOptions{Blocks: blocks, BlockTokens: 16, Ctx: ctx, KVType: kv})
			if err != nil {
				t.Fatal(err)
			}
			s, b := p.NewSeq(), p.NewBatch(4)
			keep = append(keep, p, s, b)
			if err := s.Reserve(2); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Forward([]Segment{{Seq: s, Tokens: []int32{1, 2}, Logits: LogitsLast}}); err != nil {
				t.Fatal(err)
			}
			return d.Allocated() - before
		}
		got := float64(alloc(3*ctx/16)-alloc(ctx/16)) / (2 * ctx)
		mm, err := m.splitModel(SplitOptions{Ctx: ctx, KVType: kv})
		if err != nil {
			t.Fatal(err)
		}
		var est float64
		for _, l := range mm.Layers {
			est += float64(l.KVBytesPerHead) * float64(l.NKVHead) / ctx
		}
		if math.Abs(est-got)/got > 0.10 {
			t.Errorf("%v cache: the planner counts %.1f B per position, the device allocated %.1f", kv, est, got)
		}
		t.Logf("%v cache: planner %.1f B per position, device %.1f", kv, est, got)
	}
}
