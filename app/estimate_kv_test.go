package main

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"flowchat/app/hub"
	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/model"
	"flowchat/ui"
)

// devKVPerPosition measures, from each stand-in's counted allocations
// (device.Finite), the device KV cache one position takes on each device:
// two paged pools that differ only in their block count run a prompt, so
// their batches' buffers are equal and the difference in what each
// device allocated is the KV cache of the extra positions.
func devKVPerPosition(t *testing.T, m *engine.Model, devs []device.Device, kv ggml.Type, ctx int) []float64 {
	t.Helper()
	var keep []any // the pools, sequences and batches stay reachable: their cleanups would free device memory mid-count
	defer runtime.KeepAlive(&keep)
	alloc := func(blocks int) []int64 {
		before := make([]int64, len(devs))
		for i, d := range devs {
			before[i] = d.(device.Finite).Allocated()
		}
		pool, err := m.Net.NewKVPool(model.PoolOptions{Blocks: blocks, BlockTokens: 16, Ctx: ctx, KVType: kv})
		if err != nil {
			t.Fatal(err)
		}
		seq := pool.NewSeq()
		if err := seq.Reserve(3); err != nil {
			t.Fatal(err)
		}
		b := pool.NewBatch(4)
		keep = append(keep, pool, seq, b)
		if _, err := b.Forward([]model.Segment{{Seq: seq, Tokens: []int32{1, 2, 3}, Logits: model.LogitsLast}}); err != nil {
			t.Fatal(err)
		}
		for i, d := range devs {
			before[i] = d.(device.Finite).Allocated() - before[i]
		}
		return before
	}
	small, large := alloc(ctx/16), alloc(3*ctx/16)
	out := make([]float64, len(devs))
	for i := range devs {
		out[i] = float64(large[i]-small[i]) / float64(2*ctx)
	}
	return out
}

// TestEstimateKVTypes: the KV cache the estimates count (hub.EstimateMemory
// for the Discover screen and one device; deviceEstimates, which the load
// dialog shows and auto-fit, CLI and GUI, sizes by; both through
// device.KVCacheBytes) is within 10% of what stand-in devices allocate for
// an F16 or a Q8_0 cache (and F32), on one device and split by tensor
// over two. The device's cache type is checked too, so that the Q8_0 case
// is a Q8_0 cache (heads of whole 32-element blocks), not F32's fallback.
func TestEstimateKVTypes(t *testing.T) {
	const ctx = 128
	for _, fx := range []struct {
		file string
		kvs  []ggml.Type
	}{
		{"arch/rand-llama-gqa-Q8_0.gguf", []ggml.Type{ggml.F16, ggml.Q8_0, ggml.F32}},
		{"models/tinystories-656K/TinyStories-656K-Q4_0.gguf", []ggml.Type{ggml.F16, ggml.F32}}, // heads of 8: no Q8_0 cache
	} {
		file := fx.file
		path := fixtures.Path(t, file)
		h, err := readHeader(path)
		if err != nil {
			t.Fatal(err)
		}
		info := h.Info()
		blocks := int(info.BlockCount)
		for _, kv := range fx.kvs {
			want := map[ggml.Type]device.WeightType{ggml.F16: device.F16, ggml.Q8_0: device.Q8_0, ggml.F32: device.F32}[kv]
			if got := device.KVType(kv, int(info.KeyLength)); got != want {
				t.Fatalf("%s: a %v cache is %v on the device: the fixture does not exercise it", file, kv, got)
			}
			for _, split := range []struct {
				mode string
				devs int
			}{{"layer", 1}, {"tensor", 2}} {
				name := fmt.Sprintf("%s/%v/%s", file, kv, split.mode)
				devs := make([]device.Device, split.devs)
				mems := make([]devMem, split.devs)
				for i := range devs {
					devs[i] = device.NewStandIn(fmt.Sprintf("cpu:%d", i), 0, 32)
					mems[i] = devMem{id: devs[i].Name()}
				}
				mode, _ := (&gpuFlags{mode: split.mode}).partition()
				m, err := engine.Load(path, engine.LoadOptions{Threads: 1, KVType: kv,
					GPU: &engine.GPUOptions{Devices: devs, Layers: -1, Mode: mode, Ctx: ctx}})
				if err != nil {
					t.Fatal(err)
				}
				got := devKVPerPosition(t, m, devs, kv, ctx)
				per, err := deviceEstimates(h, ctx, ui.LoadOptions{GPULayers: blocks + 1, SplitMode: split.mode, KVType: kv.String()}, mems)
				if err != nil {
					t.Fatal(err)
				}
				var sum float64
				for i := range devs {
					est := float64(per[i].KV) / ctx
					sum += got[i]
					if rel := math.Abs(est-got[i]) / got[i]; rel > 0.10 {
						t.Errorf("%s: device %d: estimated KV %.1f B per position, allocated %.1f (%.1f%% off)", name, i, est, got[i], 100*rel)
					}
				}
				e := hub.EstimateMemory(h, hub.EstimateOptions{Context: ctx, GPULayers: blocks + 1, KVType: kv})
				if est := float64(e.KVVRAM) / ctx; math.Abs(est-sum)/sum > 0.10 {
					t.Errorf("%s: hub estimate %.1f B of KV per position, devices allocated %.1f", name, est, sum)
				}
				t.Logf("%s: KV per position allocated %v, estimated %.1f in all", name, got, float64(e.KVVRAM)/ctx)
				m.Close()
			}
		}
	}
}
