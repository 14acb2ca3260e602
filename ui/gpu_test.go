package ui_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"flowchat/app/store"
	"flowchat/ui"
)

// threeGPUs is two NVIDIA devices and one AMD device, as the app lists
// them (app/gui_gpu.go): 900 MiB of big-test fits each many times over.
func threeGPUs() ui.GPUStatus {
	return ui.GPUStatus{Usable: true, Default: []string{"cuda:0"}, Devices: []ui.GPUDevice{
		{ID: "cuda:0", Name: "NVIDIA H100", Label: "cuda:0 NVIDIA H100 (CUDA 12.4)", Free: 70 << 30, Total: 80 << 30},
		{ID: "cuda:1", Name: "NVIDIA L4", Label: "cuda:1 NVIDIA L4 (CUDA 12.4)", Free: 20 << 30, Total: 24 << 30},
		{ID: "hip:0", Name: "AMD Instinct MI210", Label: "hip:0 AMD Instinct MI210 (ROCm 6.0.0)", Free: 60 << 30, Total: 64 << 30},
	}}
}

// gpuForm opens big-test's load dialog over status with offload chosen.
func gpuForm(t *testing.T, status ui.GPUStatus) (*harness, *ui.LoadForm) {
	h := newHarness(t, scripted("ok"))
	h.lib.GPUStatus = status
	f := h.a.LoadForm(1)
	f.Placement().SetSelected("Offload layers to the GPU")
	return h, f
}

// TestLoadDialogListsDevicesOfBothVendors: every device of both vendors
// is listed with its free and total memory; offloading shows a check per
// device with the default chosen, and one device needs no shares or
// partition.
func TestLoadDialogListsDevicesOfBothVendors(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.lib.GPUStatus = threeGPUs()
	f := h.a.LoadForm(1)
	note := f.GPUNote()
	for _, want := range []string{"cuda:0 NVIDIA H100 (CUDA 12.4) · 70.00 GiB free of 80.00 GiB", "cuda:1 NVIDIA L4 (CUDA 12.4) · 20.00 GiB free of 24.00 GiB",
		"hip:0 AMD Instinct MI210 (ROCm 6.0.0) · 60.00 GiB free of 64.00 GiB"} {
		if !strings.Contains(note, want) {
			t.Errorf("GPU note %q lacks %q", note, want)
		}
	}
	if f.DevicesShown() {
		t.Error("the device list shows while CPU only is chosen")
	}
	f.Placement().SetSelected("Offload layers to the GPU")
	checks := f.DeviceChecks()
	if len(checks) != 3 || !f.DevicesShown() || checks[0].Text != "cuda:0 NVIDIA H100 (CUDA 12.4)" || checks[2].Text != "hip:0 AMD Instinct MI210 (ROCm 6.0.0)" {
		t.Fatalf("device checks %d, shown %v", len(checks), f.DevicesShown())
	}
	if !checks[0].Checked || checks[1].Checked || checks[2].Checked || f.SplitShown() || f.Shares()[0].Visible() {
		t.Errorf("default choice: %v %v %v, split shown %v", checks[0].Checked, checks[1].Checked, checks[2].Checked, f.SplitShown())
	}
	f.Layers().SetValue(14)
	o := f.Options()
	if !slices.Equal(o.Devices, []string{"cuda:0"}) || o.Split != nil || o.SplitMode != "" || o.GPULayers != 14 {
		t.Errorf("one device: %+v", o)
	}
	if lines, _ := f.DeviceEstimates(); len(lines) != 1 || !strings.HasPrefix(lines[0], "cuda:0: 14 layers") {
		t.Errorf("one device's estimate %q", lines)
	}
}

// TestLoadDialogSplitEstimates: with two devices chosen the shares and the
// partition appear; every partition gives a line per device whose parts
// add up to the one-device estimate, and the options carry the devices,
// shares, partition and group the engine needs.
func TestLoadDialogSplitEstimates(t *testing.T) {
	_, f := gpuForm(t, threeGPUs())
	f.Layers().SetValue(28)
	single := f.Estimated()
	if len(single.Devices) != 1 || single.Devices[0].VRAM != single.VRAM || single.VRAM == 0 {
		t.Fatalf("one device: %+v", single)
	}
	test.Tap(f.DeviceChecks()[2]) // hip:0 beside cuda:0
	if !f.SplitShown() || !f.Shares()[0].Visible() || !f.Shares()[2].Visible() || f.Shares()[1].Disabled() == false {
		t.Errorf("two devices: split shown %v, shares %v %v, unchosen share enabled %v", f.SplitShown(), f.Shares()[0].Visible(), f.Shares()[2].Visible(), !f.Shares()[1].Disabled())
	}
	f.Shares()[0].SetText("3")
	for _, c := range []struct {
		partition, mode string
		group           int
	}{{"Layer", "layer", 0}, {"Tensor (row)", "tensor", 0}, {"Hybrid", "hybrid", 2}} {
		f.Partition().SetSelected(c.partition)
		if c.mode == "hybrid" {
			if !f.GroupShown() || !slices.Equal(f.Group().Options, []string{"1", "2"}) || f.Group().Selected != "2" {
				t.Errorf("hybrid over 2 devices: group shown %v, options %v, chosen %q", f.GroupShown(), f.Group().Options, f.Group().Selected)
			}
		} else if f.GroupShown() {
			t.Errorf("%s: the group size shows", c.partition)
		}
		o := f.Options()
		if !slices.Equal(o.Devices, []string{"cuda:0", "hip:0"}) || !slices.Equal(o.Split, []float64{3, 1}) || o.SplitMode != c.mode || o.TensorGroup != c.group || f.Problem() != "" {
			t.Errorf("%s: options %+v, problem %q", c.partition, o, f.Problem())
		}
		e := f.Estimated()
		var sum uint64
		for _, d := range e.Devices {
			sum += d.VRAM
		}
		lines, warns := f.DeviceEstimates()
		if len(e.Devices) != 2 || sum != single.VRAM || e.VRAM != single.VRAM || len(lines) != 2 || slices.Contains(warns, true) {
			t.Errorf("%s: parts %+v add up to %d, one device %d; lines %q", c.partition, e.Devices, sum, single.VRAM, lines)
			continue
		}
		if !strings.HasPrefix(lines[0], "cuda:0: ") || !strings.HasPrefix(lines[1], "hip:0: ") || e.Devices[0].VRAM <= e.Devices[1].VRAM ||
			!strings.Contains(lines[1], "of 60.00 GiB free") {
			t.Errorf("%s: lines %q for %+v (3,1 should give cuda:0 the larger part)", c.partition, lines, e.Devices)
		}
		if !strings.Contains(f.Estimate(), "over 2 devices") {
			t.Errorf("%s: summary %q", c.partition, f.Estimate())
		}
	}
}

// TestLoadDialogRefusesBadShares: a share that is not a number ≥ 0, or
// shares that are all 0, are named, keep out of the options' load and
// disable the dialog's Load button until fixed; a saved group size that
// does not divide the devices chosen is replaced by one that does.
func TestLoadDialogRefusesBadShares(t *testing.T) {
	h, _ := gpuForm(t, threeGPUs())
	h.SelectModelByName("big-test")
	h.a.ShowLoadDialog()
	h.pumpIdle()
	f, load := h.a.ShownLoadForm()
	f.Placement().SetSelected("Offload layers to the GPU")
	test.Tap(f.DeviceChecks()[1])
	if load.Disabled() || f.Problem() != "" {
		t.Fatalf("two devices, equal shares: Load disabled %v, problem %q", load.Disabled(), f.Problem())
	}
	for _, bad := range []struct{ a, b, want string }{
		{"x", "1", `Share of cuda:0: "x" is not a share`},
		{"-2", "1", `Share of cuda:0: "-2" is not a share`},
		{"1", "", `Share of cuda:1: "" is not a share`},
		{"0", "0", "Every share is 0"},
	} {
		f.Shares()[0].SetText(bad.a)
		f.Shares()[1].SetText(bad.b)
		if !strings.Contains(f.Problem(), bad.want) || !load.Disabled() {
			t.Errorf("shares %q, %q: problem %q, Load disabled %v", bad.a, bad.b, f.Problem(), load.Disabled())
		}
		if f.Shares()[0].Validate() == nil && bad.a != "1" && bad.a != "0" {
			t.Errorf("share %q: the entry does not flag it", bad.a)
		}
	}
	f.Shares()[0].SetText("2.5")
	f.Shares()[1].SetText("1")
	if f.Problem() != "" || load.Disabled() || !slices.Equal(f.Options().Split, []float64{2.5, 1}) {
		t.Errorf("fixed: problem %q, Load disabled %v, split %v", f.Problem(), load.Disabled(), f.Options().Split)
	}
	test.Tap(f.DeviceChecks()[0])
	test.Tap(f.DeviceChecks()[1])
	if !strings.Contains(f.Problem(), "Choose at least one device") || !load.Disabled() {
		t.Errorf("no device: problem %q", f.Problem())
	}

	h2 := newHarness(t, scripted("ok"))
	h2.lib.GPUStatus = threeGPUs()
	saved := ui.LoadOptions{GPULayers: 10, Devices: []string{"cuda:0", "cuda:1"}, SplitMode: "hybrid", TensorGroup: 3}
	h2.a.LoadModel(bigModel.Path, saved)
	h2.pumpUntil("the load", func() bool { return !h2.a.Loading() })
	f = h2.a.LoadForm(1)
	if o := f.Options(); o.TensorGroup != 2 || f.Group().Selected != "2" || f.Problem() != "" {
		t.Errorf("saved group 3 over 2 devices: options %+v, group %q, problem %q", o, f.Group().Selected, f.Problem())
	}
}

// TestLoadDialogWarnsAndAutoFits: a device whose part exceeds its free
// memory is flagged; auto fits the layers to every chosen device's free
// memory less 10% under the shares.
func TestLoadDialogWarnsAndAutoFits(t *testing.T) {
	perLayer := float64(bigModel.FileSize) / float64(bigModel.Layers)
	s := threeGPUs()
	s.Devices[1].Free = uint64(3.5 * perLayer / 0.9) // room for 3 layers, not 4
	_, f := gpuForm(t, s)
	test.Tap(f.DeviceChecks()[1])
	f.Layers().SetValue(28)
	if _, warns := f.DeviceEstimates(); !slices.Equal(warns, []bool{false, true}) {
		lines, _ := f.DeviceEstimates()
		t.Errorf("14 layers on a device with room for 3: %q", lines)
	}
	test.Tap(f.Auto())
	// The fake shares layers by rounding: 1,1 over n layers puts n −
	// round(n/2) on cuda:1 (3 at n = 7, 4 at n = 8); 3,1 puts
	// n − round(3n/4) there (3 at n = 14, 4 at n = 15).
	if o := f.Options(); !o.GPUAuto || o.GPULayers != 7 || f.LayersText() != "auto 7/28" {
		t.Errorf("auto over cuda:0 and cuda:1, equal shares: %+v, %q", o, f.LayersText())
	}
	f.Shares()[0].SetText("3")
	if o := f.Options(); o.GPULayers != 14 {
		t.Errorf("auto, shares 3,1: %d layers", o.GPULayers)
	}
	if _, warns := f.DeviceEstimates(); slices.Contains(warns, true) {
		t.Error("auto's choice is flagged as too large")
	}
}

// TestLoadDialogRemembersSplit: a load's devices, shares, partition and
// group are saved with the model and come back in its next dialog (and
// in the settings file).
func TestLoadDialogRemembersSplit(t *testing.T) {
	h, f := gpuForm(t, threeGPUs())
	test.Tap(f.DeviceChecks()[2])
	f.Shares()[2].SetText("0.5")
	f.Partition().SetSelected("Hybrid")
	f.Layers().SetValue(20)
	o := f.Options()
	h.a.LoadModel(bigModel.Path, o)
	h.pumpUntil("the load", func() bool { return !h.a.Loading() })
	g := h.a.LoadForm(1)
	checks := g.DeviceChecks()
	if got := g.Options(); !slices.Equal(got.Devices, []string{"cuda:0", "hip:0"}) || !slices.Equal(got.Split, []float64{1, 0.5}) ||
		got.SplitMode != "hybrid" || got.TensorGroup != 2 || got.GPULayers != 20 || !checks[0].Checked || checks[1].Checked || !checks[2].Checked ||
		g.Shares()[2].Text != "0.5" || g.Partition().Selected != "Hybrid" {
		t.Errorf("reopened: %+v", got)
	}
	h.files.Flush()
	saved, err := store.SettingsFile{Path: h.loc.Settings}.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := saved.Model(bigModel.Path)
	if want := (store.LoadSettings{Context: o.Context, Threads: o.Threads, GPULayers: 20, Devices: []string{"cuda:0", "hip:0"}, Split: []float64{1, 0.5}, SplitMode: "hybrid", TensorGroup: 2}); !slices.Equal(m.Load.Devices, want.Devices) ||
		!slices.Equal(m.Load.Split, want.Split) || m.Load.SplitMode != want.SplitMode || m.Load.TensorGroup != want.TensorGroup {
		t.Errorf("settings file: %+v, want %+v", m.Load, want)
	}
}

// TestAuditLoadDialogGPU renders the load dialog's GPU section (three
// devices, two chosen, hybrid, one over its free memory) at 900×600 and
// 1200×800, for a look by eye:
//
//	FLOWCHAT_AUDIT_DIR=/tmp/audit go test -tags x11 ./ui -run TestAuditLoadDialogGPU
func TestAuditLoadDialogGPU(t *testing.T) {
	dir := os.Getenv("FLOWCHAT_AUDIT_DIR")
	if dir == "" {
		t.Skip("FLOWCHAT_AUDIT_DIR not set")
	}
	for name, size := range map[string]fyne.Size{"900": fyne.NewSize(900, 600), "1200": fyne.NewSize(1200, 800)} {
		h, _ := fullHarness(t, nil, false)
		s := threeGPUs()
		s.Devices[1].Free = 150 << 20
		h.lib.GPUStatus = s
		h.a.SideTabs().SelectIndex(1)
		h.SelectModelByName("big-test")
		h.w.Resize(size)
		h.a.ShowLoadDialog()
		h.pumpIdle()
		f, _ := h.a.ShownLoadForm()
		f.Placement().SetSelected("Offload layers to the GPU")
		test.Tap(f.DeviceChecks()[1])
		f.Shares()[0].SetText("3")
		f.Partition().SetSelected("Hybrid")
		f.Layers().SetValue(24)
		capture(t, h, darkTheme{ui.Theme()}, size, dir, "load-dialog-gpu-top-"+name)
		f.ScrollToGPU()
		capture(t, h, darkTheme{ui.Theme()}, size, dir, "load-dialog-gpu-"+name)
		f.ScrollToEstimate()
		capture(t, h, darkTheme{ui.Theme()}, size, dir, "load-dialog-gpu-estimate-"+name)
		if name == "900" {
			f.Shares()[1].SetText("x")
			f.ScrollToGPU()
			capture(t, h, darkTheme{ui.Theme()}, size, dir, "load-dialog-gpu-bad-share-"+name)
		}
		h.cleanup()
	}
	t.Log("wrote", filepath.Join(dir, "load-dialog-gpu-*.png"))
}
