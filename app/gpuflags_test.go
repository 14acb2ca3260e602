package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"flowchat/app/hub"
	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/engine/fixtures"
)

// TestEstimateMatchesDevice: the VRAM estimate auto fits with (the one
// the Discover screen shows) against what a stand-in device allocates for
// the same placement. Weights and KV cache, the parts that grow with the
// layer count, are within 10% (for kernel-native types they are equal:
// the file's bytes and 4 bytes per K/V element); the estimate's compute
// buffers (llama.cpp's full score matrix per batch) bound the device's,
// which hold one row's scores at a time. The estimate's fixed runtime
// overhead (a CUDA context) has no stand-in counterpart.
func TestEstimateMatchesDevice(t *testing.T) {
	const ctx, batch = 128, 64
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "models/tinystories-656K/TinyStories-656K-Q4_0.gguf", "arch/rand-llama-gqa-Q8_0.gguf", "arch/rand-llama-gqa-Q4_K.gguf", "arch/rand-llama-gqa-Q6_K.gguf"} {
		path := fixtures.Path(t, file)
		h, err := readHeader(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks := int(h.Info().BlockCount)
		for _, n := range []int{1, blocks, blocks + 1} {
			d := device.NewStandIn("standin", 0, 32)
			m, err := engine.Load(path, engine.LoadOptions{Threads: 1, GPU: &engine.GPUOptions{Devices: []device.Device{d}, Layers: n}})
			if err != nil {
				t.Fatal(err)
			}
			weights := d.Allocated()
			st := m.Net.NewState(ctx, batch)
			if _, err := st.Forward([]int32{1, 2, 3}, false); err != nil {
				t.Fatal(err)
			}
			kvAndBuffers := d.Allocated() - weights
			e := hub.EstimateMemory(h, hub.EstimateOptions{Context: ctx, GPULayers: n, Batch: batch})
			est := float64(e.WeightsVRAM + e.KVVRAM)
			// The KV cache is exactly ctx rows of K and V per device block.
			var kv int64
			for range min(n, blocks) {
				kv += int64(ctx) * int64(4*2*m.Net.NHeadKV*m.Net.HeadDim)
			}
			got := float64(weights + kv)
			if rel := math.Abs(got-est) / est; rel > 0.10 {
				t.Errorf("%s, %d GPU layers: weights+KV estimate %.0f, device %.0f (%.1f%% off)", file, n, est, got, 100*rel)
			}
			if buf := kvAndBuffers - kv; buf < 0 || uint64(buf) > e.ComputeVRAM {
				t.Errorf("%s, %d GPU layers: device buffers %d bytes, estimate's compute %d", file, n, buf, e.ComputeVRAM)
			}
			t.Logf("%s ngl=%d: weights+KV est %.0f dev %.0f; buffers %d ≤ %d", file, n, est, got, kvAndBuffers-kv, e.ComputeVRAM)
			m.Close()
		}
	}
}

// TestAutoLayersPerDevice: --gpu-layers auto fits every device's own free
// memory (the load dialog's fit), not their sum: with one small device,
// an equal layer split gets fewer layers than the same memory on one
// device would hold, and growing the small device's memory (or giving it
// a smaller share) gets more; devices too small for one layer are an
// error.
func TestAutoLayersPerDevice(t *testing.T) {
	path := fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-Q4_0.gguf")
	h, err := readHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	const ctx = 256
	blocks := int(h.Info().BlockCount)
	est := func(n int) int64 {
		return int64(hub.EstimateMemory(h, hub.EstimateOptions{Context: ctx, GPULayers: n}).VRAM)
	}
	auto := func(split string, caps ...int64) (int, error) {
		var devs []device.Device
		for i, c := range caps {
			devs = append(devs, device.NewStandIn(fmt.Sprintf("cpu:%d", i), c, 32))
		}
		g := gpuFlags{layers: "auto", mode: "layer", group: 2}
		shares, err := parseShares(split)
		if err != nil {
			t.Fatal(err)
		}
		return g.autoLayers(path, ctx, devs, shares)
	}
	// one device: the largest count whose estimate fits 90% of it
	for n := 1; n <= blocks+1; n++ {
		got, err := auto("", int64(float64(est(n))/(1-autoMargin))+1)
		if err != nil || got != n {
			t.Errorf("one device sized for %d layers: %d, %v", n, got, err)
		}
	}
	big := int64(float64(est(blocks+1)) / (1 - autoMargin) * 2)
	small := big / 8
	equal, err := auto("1,1", big, small)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := auto("1,1", big, big)
	lopsided, _ := auto("7,1", big, small)
	if all != blocks+1 || equal >= all || lopsided <= equal {
		t.Errorf("layers: equal shares on a big and a small device %d, two big devices %d, 7:1 shares %d (of %d)", equal, all, lopsided, blocks+1)
	}
	if _, err := auto("1,1", 1<<10, 1<<10); err == nil || !strings.Contains(err.Error(), "auto") {
		t.Errorf("two 1 KiB devices: %v", err)
	}
}

// TestGPULayersWithoutGPU: asking for GPU layers where no GPU exists is an
// error saying so, never a CPU run.
func TestGPULayersWithoutGPU(t *testing.T) {
	if _, err := device.Default(); err == nil {
		t.Skip("a GPU is present: the no-GPU error cannot be shown here")
	}
	g := gpuFlags{layers: "4", mode: "layer"}
	_, err := g.options(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"), 0)
	if !errors.Is(err, errNoGPUAsked) || !errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
	g = gpuFlags{layers: "all", devices: "cpu,cpu", split: "3,1", mode: "layer"}
	o, err := g.options(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"), 0)
	if err != nil || len(o.Devices) != 2 || o.Layers != -1 || o.Split[0] != 3 {
		t.Fatalf("stand-in devices: %+v, %v", o, err)
	}
	device.CloseAll(o.Devices)
	if _, err := (&gpuFlags{layers: "2", mode: "column"}).options("", 0); !errors.Is(err, errUsage) {
		t.Errorf("--split-mode column: %v", err)
	}
}

// TestGPUSplitModes: greedy text from the CLI with every block and the
// head split by tensor (row, tensor), by layer and in Inferflow's hybrid
// (2 groups × 2) over CPU stand-ins is the one-device text; shapes and
// flags that cannot be split are errors that say why.
func TestGPUSplitModes(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	gen := func(extra ...string) (string, string, int) {
		args := append([]string{"run", "--model", model, "--prompt", "Once upon a time", "--greedy", "-n", "24", "-t", "1", "--gpu-layers", "all"}, extra...)
		return run(t, args...)
	}
	want, stderr, code := gen("--devices", "cpu")
	if code != 0 || want == "" {
		t.Fatalf("one device: exit %d, %q, %s", code, want, stderr)
	}
	for _, args := range [][]string{
		{"--devices", "cpu,cpu", "--split-mode", "row"},
		{"--devices", "cpu,cpu,cpu", "--split-mode", "tensor", "--split", "2,1,1"},
		{"--devices", "cpu,cpu,cpu,cpu", "--split-mode", "hybrid", "--tensor-group", "2"},
		{"--devices", "cpu,cpu", "--split-mode", "layer"},
		{"--devices", "cpu,cpu,cpu,cpu", "--partition", "auto"},
	} {
		got, stderr, code := gen(args...)
		if code != 0 || got != want {
			t.Errorf("%v: exit %d, %q, want %q; %s", args, code, got, want, stderr)
		}
		if args[3] == "auto" && !strings.Contains(stderr, "partition (--split-mode auto): chose") {
			t.Errorf("%v: the planner's choice is not on stderr: %s", args, stderr)
		}
	}
	gqa := fixtures.Path(t, "arch/rand-llama-gqa-F32.gguf") // 2 KV heads
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", gqa, "--devices", "cpu,cpu,cpu", "--split-mode", "tensor"}, "2 KV heads cannot be shared by 3 devices"},
		{[]string{"--model", model, "--devices", "cpu,cpu,cpu", "--split-mode", "hybrid", "--tensor-group", "2"}, "--tensor-group 2 does not divide the 3 devices"},
		{[]string{"--model", model, "--devices", "cpu,cpu", "--split-mode", "column"}, `--split-mode "column"`},
		{[]string{"--model", model, "--devices", "cpu,cpu", "--split-mode", "row", "--split", "1,1,1"}, "3 shares for 2 devices"},
	} {
		args := append([]string{"run", "--prompt", "a", "-n", "2", "-t", "1", "--gpu-layers", "all"}, c.args...)
		_, stderr, code := run(t, args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}
