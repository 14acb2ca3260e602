package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/ui"
)

// TestGUIGPUStandIn: with --devices cpu the GUI library offers a CPU
// stand-in device (name, free/total memory), a load with GPU layers (a
// count, or auto) runs those blocks on it, and the status bar text says
// so.
func TestGUIGPUStandIn(t *testing.T) {
	l := &guiLibrary{threads: 1, devices: "cpu"}
	s := l.GPU()
	if d, ok := s.Device("cpu:0"); !s.Usable || !ok || s.Devices[0] != d || d.Label != "cpu:0 (CPU stand-in)" || d.Total != 1<<40 || d.Free != d.Total ||
		!slices.Equal(s.Default, []string{"cpu:0"}) {
		t.Fatalf("GPU() = %+v", s)
	}
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	for _, o := range []ui.LoadOptions{{GPULayers: 3, Context: 128}, {GPUAuto: true, Context: 128}} {
		e, err := l.Load(context.Background(), path, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		blocks := e.Info().Layers
		want := "GPU 3/5 layers · CPU stand-in · cpu:0"
		if o.GPUAuto {
			want = "GPU 5/5 layers · CPU stand-in · cpu:0" // 1 TiB fits every block (the head is not counted as a layer)
		}
		if blocks != 5 || e.Device() != want {
			t.Errorf("%+v: %d blocks, Device() = %q, want %q", o, blocks, e.Device(), want)
		}
		e.Close()
	}
	e, err := l.Load(context.Background(), path, ui.LoadOptions{Context: 128})
	if err != nil || e.Device() != "CPU · 1 threads" {
		t.Errorf("CPU load: %v, Device() = %q", err, e.Device())
	}
	e.Close()
}

// TestGUIGPUStartupFails: asking for GPU layers where the device cannot
// start fails the load with the reason and the way to the CPU; the
// dialog's status greys offload out with the reason.
func TestGUIGPUStartupFails(t *testing.T) {
	if d, err := device.Open("cuda:0"); err == nil {
		d.Close()
		t.Skip("skipping: a CUDA device opens here, so its start-up cannot fail")
	}
	l := &guiLibrary{threads: 1, devices: "cuda:0"}
	if s := l.GPU(); s.Usable || s.Reason == "" {
		t.Errorf("GPU() = %+v, want unusable with a reason", s)
	}
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	_, err := l.Load(context.Background(), path, ui.LoadOptions{GPULayers: 2, Context: 128})
	if err == nil || !strings.HasPrefix(err.Error(), "GPU start-up failed, nothing was loaded: ") ||
		!strings.Contains(err.Error(), "CUDA") || !strings.HasSuffix(err.Error(), "Choose “CPU only” in the load dialog to run on the CPU") {
		t.Errorf("Load = %v", err)
	}
	// A device list with a name that is no device: refused, never skipped.
	l.devices = "cpu,bogus:1"
	if s := l.GPU(); s.Usable || !strings.Contains(s.Reason, `"bogus:1"`) {
		t.Errorf("GPU() with a bad device = %+v", s)
	}
	if _, err := l.Load(context.Background(), path, ui.LoadOptions{GPULayers: 2}); err == nil || !strings.Contains(err.Error(), "GPU start-up failed") {
		t.Errorf("Load with a bad device = %v", err)
	}
}
