package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"flowchat/app/hub"
	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/native/cuda"
	"flowchat/native/hip"
	"flowchat/ui"
)

// twoVendors is a machine with two NVIDIA devices and one AMD device, as
// probeGPUs would report it.
func twoVendors() gpuReport {
	return gpuReport{
		cuda: cuda.Info{DriverVersion: 12040, Devices: []cuda.Device{
			{Ordinal: 0, Name: "NVIDIA H100", TotalMem: 80 << 30}, {Ordinal: 1, Name: "NVIDIA L4", TotalMem: 24 << 30}}},
		cudaMem: []memReading{{free: 70 << 30, total: 80 << 30}, {free: 20 << 30, total: 24 << 30}},
		hip:     hip.Info{RuntimeVersion: 60000000, Devices: []hip.Device{{Ordinal: 0, Name: "AMD Instinct MI210", TotalMem: 64 << 30}}},
		hipMem:  []memReading{{free: 60 << 30, total: 64 << 30}},
	}
}

// TestGPUStatusBothVendors: the GUI lists every CUDA and ROCm device with
// its free and total memory, the stand-ins --devices names first (in its
// order, chosen by default), a vendor without its runtime compiler as
// listed but not choosable, and a --devices entry that names no usable
// device as unusable, with the reason.
func TestGPUStatusBothVendors(t *testing.T) {
	s := gpuStatus(twoVendors(), "")
	want := []ui.GPUDevice{
		{ID: "cuda:0", Name: "NVIDIA H100", Label: "cuda:0 NVIDIA H100 (CUDA 12.4)", Free: 70 << 30, Total: 80 << 30},
		{ID: "cuda:1", Name: "NVIDIA L4", Label: "cuda:1 NVIDIA L4 (CUDA 12.4)", Free: 20 << 30, Total: 24 << 30},
		{ID: "hip:0", Name: "AMD Instinct MI210", Label: "hip:0 AMD Instinct MI210 (ROCm 6.0.0)", Free: 60 << 30, Total: 64 << 30},
	}
	if !s.Usable || !slices.Equal(s.Devices, want) || !slices.Equal(s.Default, []string{"cuda:0"}) || s.Reason != "" {
		t.Errorf("two vendors:\n got %+v\nwant %+v", s, want)
	}

	s = gpuStatus(twoVendors(), "cpu:1,hip:0,cpu")
	var ids []string
	for _, d := range s.Devices {
		ids = append(ids, d.ID)
	}
	if !s.Usable || !slices.Equal(ids, []string{"cpu:1", "hip:0", "cpu:0", "cuda:0", "cuda:1"}) || !slices.Equal(s.Default, []string{"cpu:1", "hip:0", "cpu:0"}) ||
		s.Devices[0].Label != "cpu:1 (CPU stand-in)" || s.Devices[0].Total != 1<<40 {
		t.Errorf("--devices cpu:1,hip:0,cpu: %+v", s)
	}

	r := twoVendors()
	r.nvrtcErr = errors.New("libnvrtc.so not found")
	s = gpuStatus(r, "")
	if d, _ := s.Device("cuda:1"); !s.Usable || len(s.Devices) != 3 || !strings.Contains(d.Problem, "NVRTC") || !slices.Equal(s.Default, []string{"hip:0"}) {
		t.Errorf("without NVRTC: %+v", s)
	}
	if s := gpuStatus(r, "cuda:1"); s.Usable || !strings.Contains(s.Reason, "NVRTC") {
		t.Errorf("--devices cuda:1 without NVRTC: %+v", s)
	}
	if s := gpuStatus(twoVendors(), "hip:3"); s.Usable || !strings.Contains(s.Reason, "hip:3") {
		t.Errorf("--devices hip:3: %+v", s)
	}
	none := gpuReport{cudaErr: fmt.Errorf("%w: libcuda.so.1 not found", cuda.ErrNoGPU), hipErr: fmt.Errorf("%w: libamdhip64.so not found", hip.ErrNoGPU)}
	if s := gpuStatus(none, ""); s.Usable || !strings.Contains(s.Reason, "libcuda.so.1") || !strings.Contains(s.Reason, "libamdhip64") {
		t.Errorf("no GPU: %+v", s)
	}
}

// splitCases are the partitions the load dialog offers, over stand-ins.
var splitCases = []struct {
	name string
	o    ui.LoadOptions
}{
	{"one device", ui.LoadOptions{Devices: []string{"cpu:0"}}},
	{"layer 1,1", ui.LoadOptions{Devices: []string{"cpu:0", "cpu:1"}, SplitMode: "layer"}},
	{"layer 3,1", ui.LoadOptions{Devices: []string{"cpu:0", "cpu:1"}, SplitMode: "layer", Split: []float64{3, 1}}},
	{"tensor 1,1", ui.LoadOptions{Devices: []string{"cpu:0", "cpu:1"}, SplitMode: "tensor"}},
	{"tensor 3,1", ui.LoadOptions{Devices: []string{"cpu:0", "cpu:1"}, SplitMode: "tensor", Split: []float64{3, 1}}},
	{"hybrid 2x2", ui.LoadOptions{Devices: []string{"cpu:0", "cpu:1", "cpu:2", "cpu:3"}, SplitMode: "hybrid", TensorGroup: 2}},
}

func standInMems(n int) []devMem {
	out := make([]devMem, n)
	for i := range out {
		out[i] = devMem{id: fmt.Sprintf("cpu:%d", i), free: 1 << 40}
	}
	return out
}

// TestDeviceEstimatesAddUp: under every partition, the devices' weights
// and KV cache add up to exactly one device's (the Discover screen's
// hub.EstimateMemory), each device holding a block adds the estimate's
// compute buffers and runtime overhead, and one device is the estimate
// itself; every block and the head are somewhere.
func TestDeviceEstimatesAddUp(t *testing.T) {
	const ctx = 256
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "models/tinystories-656K/TinyStories-656K-Q4_0.gguf", "arch/rand-llama-gqa-Q8_0.gguf"} {
		h, err := readHeader(fixtures.Path(t, file))
		if err != nil {
			t.Fatal(err)
		}
		blocks := int(h.Info().BlockCount)
		for _, n := range []int{1, blocks - 1, blocks, blocks + 1} {
			e := hub.EstimateMemory(h, hub.EstimateOptions{Context: ctx, GPULayers: n})
			for _, c := range splitCases {
				o := c.o
				o.GPULayers = n
				per, err := deviceEstimates(h, ctx, o, standInMems(len(o.Devices)))
				if err != nil {
					t.Errorf("%s, %d layers, %s: %v", file, n, c.name, err)
					continue
				}
				var weights, kv uint64
				for _, d := range per {
					weights, kv = weights+d.Weights, kv+d.KV
					if d.Where != "nothing" && (d.Buffers != e.VRAM-e.WeightsVRAM-e.KVVRAM || d.VRAM != d.Weights+d.KV+d.Buffers) {
						t.Errorf("%s, %d layers, %s: %s holds %q with %+v; estimate %+v", file, n, c.name, d.ID, d.Where, d, e)
					}
				}
				if weights != e.WeightsVRAM || kv != e.KVVRAM {
					t.Errorf("%s, %d layers, %s: devices hold %d weight and %d KV bytes, one device %d and %d\n%+v",
						file, n, c.name, weights, kv, e.WeightsVRAM, e.KVVRAM, per)
				}
				if len(per) == 1 && per[0].VRAM != e.VRAM {
					t.Errorf("%s, %d layers: one device's estimate %d, hub's %d", file, n, per[0].VRAM, e.VRAM)
				}
			}
		}
	}
}

// TestDeviceEstimatesFollowEngine: each device's weight estimate is what
// the engine puts on it when it loads with the same choice (stand-ins
// count their allocations): within 10%, and every device the engine
// leaves empty is estimated empty. F32 weights are uploaded as stored, so
// the difference is only where the engine keeps a small vector.
func TestDeviceEstimatesFollowEngine(t *testing.T) {
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	h, err := readHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := int(h.Info().BlockCount)
	for _, c := range splitCases {
		for _, n := range []int{blocks - 2, blocks + 1} {
			o := c.o
			o.GPULayers = n
			per, err := deviceEstimates(h, 128, o, standInMems(len(o.Devices)))
			if err != nil {
				t.Fatal(err)
			}
			devs := make([]device.Device, len(o.Devices))
			stand := make([]*device.StandIn, len(o.Devices))
			for i := range devs {
				stand[i] = device.NewStandIn(o.Devices[i], 0, 32)
				devs[i] = stand[i]
			}
			mode, _ := splitChoice(o, len(devs))
			m, err := engine.Load(path, engine.LoadOptions{Threads: 1, GPU: &engine.GPUOptions{Devices: devs, Layers: n, Split: o.Split, Mode: mode, TensorGroup: o.TensorGroup, Ctx: 128}})
			if err != nil {
				t.Fatalf("%s, %d layers: %v", c.name, n, err)
			}
			for i, d := range stand {
				got, est := float64(d.Allocated()), float64(per[i].Weights)
				if got == 0 && est == 0 {
					continue
				}
				if rel := math.Abs(got-est) / max(got, est); rel > 0.10 {
					t.Errorf("%s, %d layers: %s holds %.0f weight bytes, estimated %.0f (%s)", c.name, n, o.Devices[i], got, est, per[i].Where)
				}
			}
			m.Close()
		}
	}
}

// TestSplitChoiceRefuses: shares that are not one number ≥ 0 per device
// (or are all 0), a hybrid group that does not divide the devices and
// an unknown partition are refused, by the estimate and by the load,
// before any device opens; too few KV heads for a tensor group is the
// estimate's problem, in the engine's words.
func TestSplitChoiceRefuses(t *testing.T) {
	two := []string{"cpu:0", "cpu:1"}
	for _, c := range []struct {
		o    ui.LoadOptions
		want string
	}{
		{ui.LoadOptions{Devices: two, SplitMode: "tensor", Split: []float64{1, 1, 1}}, "3 shares for 2 devices"},
		{ui.LoadOptions{Devices: two, SplitMode: "layer", Split: []float64{1, -1}}, "a share is a number ≥ 0"},
		{ui.LoadOptions{Devices: two, SplitMode: "layer", Split: []float64{math.NaN(), 1}}, "a share is a number ≥ 0"},
		{ui.LoadOptions{Devices: two, SplitMode: "tensor", Split: []float64{0, 0}}, "every share is 0"},
		{ui.LoadOptions{Devices: []string{"cpu:0", "cpu:1", "cpu:2"}, SplitMode: "hybrid", TensorGroup: 2}, "2 devices per group do not divide the 3 devices"},
		{ui.LoadOptions{Devices: two, SplitMode: "hybrid"}, "0 devices per group"},
		{ui.LoadOptions{Devices: two, SplitMode: "column"}, `partition "column"`},
	} {
		if _, err := splitChoice(c.o, len(c.o.Devices)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
		l := &guiLibrary{threads: 1, devices: "cpu,cpu:1,cpu:2"}
		o := c.o
		o.GPULayers = 2
		_, _, err := l.gpuOptions("", o)
		if err == nil || !strings.HasPrefix(err.Error(), "the GPU split cannot be used, nothing was loaded: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("load %+v: %v", o, err)
		}
	}
	// A stand-in saved under --devices cpu,cpu:1 is refused without it.
	if _, _, err := (&guiLibrary{threads: 1, devices: "cpu"}).gpuOptions("", ui.LoadOptions{GPULayers: 2, Devices: []string{"cpu:0", "cpu:1"}}); err == nil ||
		!strings.Contains(err.Error(), "cpu:1 is a CPU stand-in, used only when --devices names it") {
		t.Errorf("a stand-in --devices does not name: %v", err)
	}
	gqa := fixtures.Path(t, "arch/rand-llama-gqa-F32.gguf") // 2 KV heads
	l := &guiLibrary{threads: 1, devices: "cpu,cpu:1,cpu:2"}
	l.GPU()
	info, err := l.Describe(gqa)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Estimate(info, ui.LoadOptions{Context: 64, GPULayers: 2, Devices: []string{"cpu:0", "cpu:1", "cpu:2"}, SplitMode: "tensor"})
	if !strings.Contains(e.Problem, "2 KV heads cannot be shared by 3 devices") || e.Devices != nil || e.VRAM == 0 {
		t.Errorf("tensor over 3 devices with 2 KV heads: %+v", e)
	}
}

// sharedHeads finds cpu:1 holding KV heads after another device's.
var sharedHeads = regexp.MustCompile(`cpu:1 kv heads [1-9]`)

// TestGUISplitLoadsGreedy: the GUI's load path (guiLibrary.GPU, Estimate
// and Load with the dialog's options) over --devices cpu,cpu:1 stand-ins,
// by layer, by tensor and hybrid, gives the CPU-only greedy text; the
// estimate names both devices and the status bar both stand-ins.
func TestGUISplitLoadsGreedy(t *testing.T) {
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	l := &guiLibrary{threads: 1, devices: "cpu,cpu:1"}
	s := l.GPU()
	if !s.Usable || !slices.Equal(s.Default, []string{"cpu:0", "cpu:1"}) {
		t.Fatalf("GPU() = %+v", s)
	}
	gen := func(o ui.LoadOptions) (string, string) {
		t.Helper()
		e, err := l.Load(context.Background(), path, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		defer e.Close()
		// The engine keeps the planner's reason for a tensor or hybrid
		// split only; a device sharing a group's heads is named with its
		// KV heads.
		plan := e.(*guiEngine).m.GPUPlan
		shared := o.SplitMode == "tensor" || o.SplitMode == "hybrid" && o.TensorGroup > 1
		if (o.SplitMode == "tensor" || o.SplitMode == "hybrid") != (plan != "") || shared != sharedHeads.MatchString(plan) {
			t.Errorf("%+v: the engine's plan %q", o, plan)
		}
		var sb strings.Builder
		if _, err := e.Generate(context.Background(), ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: "Once upon a time"}},
			Sampling: greedyParams(24)}, func(p string) { sb.WriteString(p) }); err != nil {
			t.Fatal(err)
		}
		return sb.String(), e.Device()
	}
	want, dev := gen(ui.LoadOptions{Context: 128})
	if want == "" || !strings.HasPrefix(dev, "CPU") {
		t.Fatalf("CPU run: %q on %q", want, dev)
	}
	info, _ := l.Describe(path)
	for _, o := range []ui.LoadOptions{
		{SplitMode: "layer", Split: []float64{3, 1}},
		{SplitMode: "tensor"},
		{SplitMode: "tensor", Split: []float64{3, 1}},
		{SplitMode: "hybrid", TensorGroup: 1},
		{SplitMode: "layer", GPUAuto: true},
	} {
		o.Context, o.GPULayers, o.Devices = 128, 6, []string{"cpu:0", "cpu:1"}
		if e := l.Estimate(info, o); e.Problem != "" || len(e.Devices) != 2 || e.Devices[0].ID != "cpu:0" || e.Devices[1].ID != "cpu:1" {
			t.Errorf("%+v: estimate %+v", o, e)
		}
		got, dev := gen(o)
		if got != want || !strings.Contains(dev, "cpu:0, cpu:1") {
			t.Errorf("%+v: %q on %q, want %q", o, got, dev, want)
		}
	}
	// Inferflow's 2 × 2 over four stand-ins.
	l = &guiLibrary{threads: 1, devices: "cpu,cpu:1,cpu:2,cpu:3"}
	l.GPU()
	o := ui.LoadOptions{Context: 128, GPULayers: 6, Devices: []string{"cpu:0", "cpu:1", "cpu:2", "cpu:3"}, SplitMode: "hybrid", TensorGroup: 2}
	if e := l.Estimate(info, o); e.Problem != "" || len(e.Devices) != 4 || !strings.Contains(e.Devices[3].Where, "2 of 4 KV heads") {
		t.Errorf("hybrid 2 × 2: estimate %+v", e)
	}
	if got, dev := gen(o); got != want || !strings.Contains(dev, "cpu:0, cpu:1, cpu:2, cpu:3") {
		t.Errorf("hybrid 2 × 2: %q on %q, want %q", got, dev, want)
	}
}
