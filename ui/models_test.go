package ui_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"flowchat/ui"
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

	h.lib.GPUStatus = ui.GPUStatus{Usable: true, Devices: []string{"Test GPU (24 GiB)"}}
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
