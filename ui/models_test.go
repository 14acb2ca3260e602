package ui_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"flowchat/ui"
	"flowchat/ui/fake"
)

func TestModelPanelListsAndShowsLoaded(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	if got := h.a.ListedModels(); len(got) != 2 || got[0].Name != "tiny-test" {
		t.Fatalf("listed %+v", got)
	}
	if !strings.Contains(h.a.ModelState(), "Loaded tiny-test") || h.a.StatusModel() != "tiny-test" {
		t.Errorf("state %q, status %q", h.a.ModelState(), h.a.StatusModel())
	}
	// the panel describes the loaded model, not "Select a model."
	if d := h.a.ModelDetails(); !strings.HasPrefix(d, "tiny-test\n") || h.a.LoadButton().Disabled() {
		t.Errorf("details %q, Load disabled %v", d, h.a.LoadButton().Disabled())
	}
	if !strings.Contains(h.a.ContextText(), "context 0 / 4\u202f096 tokens") {
		t.Errorf("context line %q; want the engine's 4 096 tokens, none used", h.a.ContextText())
	}
	h.a.UnloadModel()
	for deadline := time.Now().Add(2 * time.Second); !h.eng.Closed() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // Close runs off the UI goroutine
	}
	if h.a.Engine() != nil || h.a.StatusModel() != "no model" || !h.eng.Closed() {
		t.Errorf("after unload: engine %v, status %q, closed %v", h.a.Engine(), h.a.StatusModel(), h.eng.Closed())
	}
	h.say("anyone there?")
	if !strings.Contains(h.a.Banner(), "No model is loaded") || len(h.eng.Calls()) != 0 {
		t.Errorf("send without a model: banner %q, %d calls", h.a.Banner(), len(h.eng.Calls()))
	}
}

func TestModelLoadErrorIsShownInWindow(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.lib.LoadErr = map[string]error{bigModel.Path: errors.New("unsupported tensor type IQ1_M")}
	h.a.LoadModel(bigModel.Path, ui.LoadOptions{})
	h.pumpUntil("the load to fail", func() bool { return !h.a.Loading() })
	if !strings.Contains(h.a.ModelError(), "IQ1_M") || !strings.Contains(h.a.StatusMessage(), "IQ1_M") {
		t.Errorf("model panel error %q, status %q", h.a.ModelError(), h.a.StatusMessage())
	}
	if h.a.Engine() != nil {
		t.Error("the previous model is still reported loaded after it was replaced by a failed load")
	}
	h.a.AddModelFile("/nowhere/broken.gguf")
	h.pumpIdle()
	if !strings.Contains(h.a.ModelError(), "not a GGUF") {
		t.Errorf("opening a bad file: %q", h.a.ModelError())
	}
}

func TestLoadDialogGreysOutGPUWithReason(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.lib.GPUStatus = ui.GPUStatus{Reason: "libcuda.so.1 not found"}
	f := h.a.LoadForm(1)
	if !f.Placement().Disabled() || !f.Layers().Disabled() {
		t.Error("GPU placement enabled without a GPU")
	}
	if f.Context().Value != 4096 || f.Options().GPULayers != 0 {
		t.Errorf("defaults: context %v, options %+v", f.Context().Value, f.Options())
	}
	if !strings.Contains(f.Estimate(), "RAM") || strings.Contains(f.Estimate(), "GPU memory") {
		t.Errorf("estimate %q", f.Estimate())
	}
	ram := f.Estimate()
	f.Context().SetValue(16384)
	if f.Estimate() == ram {
		t.Error("estimate does not follow the context length")
	}

	f.Quant().SetSelected("Q4")
	f.KVType().SetSelected("F16")
	test.Tap(f.HugePages())
	if o := f.Options(); o.Quant != "Q4" || o.KVType != "F16" || !o.Mmap || f.Estimate() == ram {
		t.Errorf("after choosing Q4, F16, no huge pages: %+v, estimate %q", o, f.Estimate())
	}

	h.lib.GPUStatus = ui.GPUStatus{Usable: true, Devices: []ui.GPUDevice{{ID: "cuda:0", Label: "Test GPU", Total: 24 << 30, Free: 24 << 30}}, Default: []string{"cuda:0"}}
	f = h.a.LoadForm(1)
	f.Placement().SetSelected("Offload layers to the GPU")
	f.Layers().SetValue(14)
	if f.Options().GPULayers != 14 || !strings.Contains(f.Estimate(), "GPU memory") {
		t.Errorf("with a GPU: options %+v, estimate %q", f.Options(), f.Estimate())
	}
}

// TestLoadDialogSpeculation: the load dialog's speculative decoding
// section writes the drafter, its length and the acceptance rule into the
// load options, shows only the rows that apply, and warns that flexible
// acceptance changes the output.
func TestLoadDialogSpeculation(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	f := h.a.LoadForm(1)
	if o := f.Options(); o.Draft != "" || !f.DraftN().Disabled() || f.DraftQuantShown() || f.DraftModelShown() {
		t.Fatalf("default: %+v, length disabled %v, rows %v %v", o, f.DraftN().Disabled(), f.DraftQuantShown(), f.DraftModelShown())
	}
	f.Drafter().SetSelected("N-gram: text already in the conversation")
	f.DraftN().SetValue(8)
	if o := f.Options(); o.Draft != "ngram" || o.DraftN != 8 || o.SpecAccept != "strict" || f.DraftN().Disabled() || !strings.Contains(f.SpecNote(), "exactly") {
		t.Errorf("n-gram: %+v, note %q", o, f.SpecNote())
	}
	f.Drafter().SetSelected("Lower-bit copy of this model")
	f.DraftQuant().SetSelected("Q2_K")
	if o := f.Options(); o.Draft != "self" || o.DraftQuant != "Q2_K" || !f.DraftQuantShown() || f.DraftModelShown() {
		t.Errorf("self-draft: %+v", o)
	}
	f.Drafter().SetSelected("Draft model")
	if !strings.Contains(f.SpecNote(), "Choose a draft model") || f.Options().DraftModel != "" {
		t.Errorf("no draft model chosen: %+v, note %q", f.Options(), f.SpecNote())
	}
	if len(f.DraftModel().Options) != 1 { // the other listed model, not the one being loaded
		t.Fatalf("draft model choices %v", f.DraftModel().Options)
	}
	f.DraftModel().SetSelected(f.DraftModel().Options[0])
	f.SpecAccept().SetSelected("Top-k: keep drafts among the 5 most probable")
	if o := f.Options(); o.Draft != "model" || o.DraftModel == "" || o.DraftModel == h.a.ListedModels()[1].Path || o.SpecAccept != "top-k" || !strings.Contains(f.SpecNote(), "no longer") {
		t.Errorf("draft model, top-k: %+v, note %q", o, f.SpecNote())
	}
}

// TestLoadDialogGPUAuto: with a usable GPU the dialog names the device
// and its free/total memory, offers offload, and "auto" moves the layer
// slider to the most layers whose estimate fits the free memory less
// 10% (and greys it out); the choice reaches the load options.
func TestLoadDialogGPUAuto(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	// The fake's estimate puts FileSize·n/Layers in VRAM: 900 MiB over 28
	// layers. 10 layers need 321.4 MiB; leave room for 10 and not 11.
	perLayer := float64(bigModel.FileSize) / float64(bigModel.Layers)
	h.lib.GPUStatus = ui.GPUStatus{Usable: true, Default: []string{"cuda:0"}, Devices: []ui.GPUDevice{{ID: "cuda:0", Label: "cuda:0 NVIDIA H100",
		Free: uint64(10.5 * perLayer / 0.9), Total: 80 << 30}}}
	f := h.a.LoadForm(1)
	if f.Placement().Disabled() || !f.Auto().Disabled() {
		t.Errorf("with a GPU and CPU chosen: placement disabled %v, auto enabled %v", f.Placement().Disabled(), !f.Auto().Disabled())
	}
	if note := f.GPUNote(); !strings.Contains(note, "cuda:0 NVIDIA H100") || !strings.Contains(note, "free of 80") {
		t.Errorf("GPU note %q, want the device and free/total memory", note)
	}
	f.Placement().SetSelected("Offload layers to the GPU")
	if f.Auto().Disabled() || f.Layers().Disabled() {
		t.Error("offload chosen: auto or the slider stays greyed out")
	}
	test.Tap(f.Auto())
	o := f.Options()
	if !o.GPUAuto || o.GPULayers != 10 || f.Layers().Value != 10 || !f.Layers().Disabled() || f.LayersText() != "auto 10/28" {
		t.Errorf("auto: options %+v, slider %v (disabled %v), text %q; want 10 layers", o, f.Layers().Value, f.Layers().Disabled(), f.LayersText())
	}
	test.Tap(f.Auto())
	f.Layers().SetValue(20)
	if o := f.Options(); o.GPUAuto || o.GPULayers != 20 || f.LayersText() != "20/28" {
		t.Errorf("manual 20: options %+v, text %q", o, f.LayersText())
	}
	f.Placement().SetSelected("CPU only")
	if o := f.Options(); o.GPUAuto || o.GPULayers != 0 || !f.Auto().Disabled() {
		t.Errorf("back to CPU: options %+v", o)
	}
}

// TestGPULoadShowsDeviceOrWhyNot: a GPU load passes the layer count to the
// library and the status bar shows the engine's placement; when GPU
// start-up fails the load fails with the reason on the model panel and in
// the status bar, and no model counts as loaded (no silent CPU run).
func TestGPULoadShowsDeviceOrWhyNot(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.lib.Engine = func(info ui.ModelInfo, o ui.LoadOptions) *fake.Engine {
		return &fake.Engine{Model: info.Name, DeviceText: fmt.Sprintf("GPU %d/%d layers · CUDA 12.4 · NVIDIA H100", o.GPULayers, info.Layers)}
	}
	h.a.LoadModel(bigModel.Path, ui.LoadOptions{GPULayers: 28})
	h.pumpUntil("the load", func() bool { return !h.a.Loading() })
	if got := h.a.StatusDevice(); got != "GPU 28/28 layers · CUDA 12.4 · NVIDIA H100" {
		t.Errorf("status bar device %q", got)
	}
	loads := h.lib.Loads()
	if last := loads[len(loads)-1]; last.Opts.GPULayers != 28 {
		t.Errorf("load options %+v", last.Opts)
	}

	h.lib.LoadErr = map[string]error{bigModel.Path: errors.New("GPU start-up failed, nothing was loaded: CUDA device 0: CUDA_ERROR_OUT_OF_MEMORY. Choose “CPU only” in the load dialog to run on the CPU")}
	h.a.LoadModel(bigModel.Path, ui.LoadOptions{GPULayers: 28})
	h.pumpUntil("the load to fail", func() bool { return !h.a.Loading() })
	if !strings.Contains(h.a.ModelError(), "GPU start-up failed") || !strings.Contains(h.a.ModelError(), "CPU only") ||
		!strings.Contains(h.a.StatusMessage(), "CUDA_ERROR_OUT_OF_MEMORY") || h.a.Engine() != nil {
		t.Errorf("model panel error %q, status %q, engine %v", h.a.ModelError(), h.a.StatusMessage(), h.a.Engine())
	}
	if strings.Contains(h.a.StatusDevice(), "CPU") {
		t.Errorf("status bar shows %q after a failed GPU load", h.a.StatusDevice())
	}
}
