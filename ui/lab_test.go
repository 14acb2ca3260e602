package ui_test

import (
	"context"
	"errors"
	"fyne.io/fyne/v2"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"flowchat/app/store"
	"flowchat/ui"
	"flowchat/ui/fake"
)

var f32Model = ui.ModelInfo{Path: "/models/stories-F32.gguf", Name: "stories-f32", Arch: "llama", Params: 260e3, Quant: "F32", FileSize: 1 << 20, ContextTrain: 512, Layers: 5}

func newLabHarness(t *testing.T, lab *fake.Lab) *harness {
	t.Helper()
	dir := t.TempDir()
	loc := store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}
	h := startHarnessWith(t, scripted("ok"), loc, func(d *ui.Deps) {
		lib := d.Library.(*fake.Library)
		lib.Files = append(lib.Files, f32Model)
		d.Lab = lab
	})
	h.pumpUntil("the model list", func() bool { return h.a.LabModel().SelectedIndex() >= 0 })
	return h
}

func TestLabRunShowsProgressThenResultsAndCaches(t *testing.T) {
	lab := &fake.Lab{Gate: make(chan struct{})}
	h := newLabHarness(t, lab)
	if got := h.a.LabModel().Options; len(got) != 1 || !strings.HasPrefix(got[0], "stories-f32 (F32") {
		t.Fatalf("models offered %v; want only the full-precision one", got)
	}
	if got := h.a.LabLevels().Selected; !slices.Equal(got, []string{"F32 · base", "Q8 · 8.5 bits", "Q4_B32 · 5 bits"}) {
		t.Errorf("levels checked at first %v", got)
	}
	h.a.LabLevels().SetSelected([]string{"F32 · base", "Q8 · 8.5 bits", "Q3H · 4 bits"})
	test.Tap(h.a.LabRun())
	if !h.a.LabRunning() || !h.a.LabRun().Disabled() || h.a.LabCancel().Disabled() {
		t.Fatal("Run does not show a run under way")
	}
	lab.Gate <- struct{}{}
	h.pumpUntil("base progress", func() bool { return strings.HasPrefix(h.a.LabStage(), "Evaluating the base model… 50%") })
	if p := h.a.LabProgress(); math.Abs(p-0.5/4) > 1e-9 {
		t.Errorf("progress %v after half the base of 3 levels", p)
	}
	lab.Gate <- struct{}{}
	lab.Gate <- struct{}{}
	h.pumpUntil("Q8 progress", func() bool { return strings.HasPrefix(h.a.LabStage(), "Evaluating Q8 (2 of 3)") })
	lab.Gate <- struct{}{}
	h.pumpUntil("results", func() bool { return !h.a.LabRunning() })
	if fits := h.a.LabHeaderFits(); slices.Contains(fits, false) || len(fits) == 0 {
		t.Errorf("bold headers that do not fit their column: %v", fits)
	}
	if h.a.LabCharts() != 2 || !strings.Contains(h.a.LabSummary(), "computed now") {
		t.Errorf("charts %d, summary %q", h.a.LabCharts(), h.a.LabSummary())
	}
	want := [][]string{{"level", "bits/weight", "PPL"}, {"F32", "32.00", "4.100"}, {"Q8", "16.00", "4.300"}, {"Q3H", "10.67", "4.500"}}
	if got := h.a.LabTable(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("table %q", got)
	}
	if h.a.LabProgress() != 1 || h.a.LabRun().Disabled() {
		t.Errorf("after the run: progress %v, run disabled %v", h.a.LabProgress(), h.a.LabRun().Disabled())
	}

	// The same comparison again comes from the cache without a step.
	test.Tap(h.a.LabRun())
	h.pumpUntil("the cached report", func() bool { return strings.Contains(h.a.LabSummary(), "from the cache") })
	if lab.Runs() != 1 {
		t.Errorf("%d runs computed", lab.Runs())
	}
}

func TestLabCancelAndErrors(t *testing.T) {
	lab := &fake.Lab{Gate: make(chan struct{})}
	h := newLabHarness(t, lab)
	test.Tap(h.a.LabRun())
	test.Tap(h.a.LabCancel())
	h.pumpUntil("the cancel", func() bool { return !h.a.LabRunning() })
	if h.a.LabStage() != "Cancelled." || h.a.LabRun().Disabled() || h.a.LabError() != "" {
		t.Errorf("after cancel: stage %q, error %q", h.a.LabStage(), h.a.LabError())
	}

	lab.Gate, lab.Err = nil, errors.New("unknown level Q7")
	test.Tap(h.a.LabRun())
	h.pumpUntil("the failure", func() bool { return !h.a.LabRunning() })
	if !strings.Contains(h.a.LabError(), "unknown level Q7") || !strings.Contains(h.a.StatusMessage(), "Q7") {
		t.Errorf("error %q, status %q", h.a.LabError(), h.a.StatusMessage())
	}

	h.a.LabLevels().SetSelected(nil)
	test.Tap(h.a.LabRun())
	if h.a.LabRunning() || h.a.LabError() != "pick at least one level" {
		t.Errorf("a run with no levels: running %v, error %q", h.a.LabRunning(), h.a.LabError())
	}
}

func TestLabReopensLastReport(t *testing.T) {
	lab := &fake.Lab{}
	req := ui.LabRequest{Model: f32Model.Path, Levels: []string{"F32", "Q2"}, Ctx: 64, MaxChunks: 4}
	if _, err := lab.Run(context.Background(), req, func(ui.LabProgress) {}); err != nil {
		t.Fatal(err)
	}
	h := newLabHarness(t, lab)
	h.pumpUntil("the last report", func() bool { return strings.Contains(h.a.LabSummary(), "from the cache") })
	if got := h.a.LabLevels().Selected; !slices.Equal(got, []string{"F32 · base", "Q2 · 3 bits"}) {
		t.Errorf("levels %v; want the report's", got)
	}
	if rows := h.a.LabTable(); len(rows) != 3 || h.a.LabCharts() != 2 {
		t.Errorf("reopened table %v, %d charts", rows, h.a.LabCharts())
	}
	if lab.Runs() != 1 {
		t.Errorf("reopening computed again (%d runs)", lab.Runs())
	}
}

func TestLabSideBySideHighlightsDivergence(t *testing.T) {
	lab := &fake.Lab{}
	h := newLabHarness(t, lab)
	if !h.a.SideGenerate().Disabled() {
		t.Error("side by side offered before any report")
	}
	test.Tap(h.a.LabRun())
	h.pumpUntil("results", func() bool { return !h.a.LabRunning() })
	h.a.SidePrompt().SetText("Once there was")
	test.Tap(h.a.SideGenerate())
	h.pumpUntil("rows", func() bool { return len(h.a.SideRows()) > 0 })
	rows := h.a.SideRows()
	if len(rows) != 3 || rows[0].Head != "base · 10 tok/s" || len(rows[0].Changed) != 0 {
		t.Fatalf("rows %+v", rows)
	}
	if rows[1].Text != " a cat ran" || !slices.Equal(rows[1].Changed, []string{"ran"}) || !strings.HasPrefix(rows[1].Head, "Q8 · diverges") {
		t.Errorf("Q8 row %+v", rows[1])
	}
	s := lab.Sides()
	if len(s) != 1 || s[0].Prompt != "Once there was" || s[0].Seed != 42 || s[0].Temperature != 0 || !slices.Equal(s[0].Levels, []string{"F32", "Q8", "Q4_B32"}) {
		t.Errorf("side request %+v", s)
	}
}

// TestLabRunInView: the Run button is in view without scrolling, below a
// long list of levels, and the note on kept tensors explains why the
// table's bits/weight exceed the levels'.
func TestLabRunInView(t *testing.T) {
	h := newLabHarness(t, &fake.Lab{})
	h.a.ShowScreen("Quantization Lab")
	h.w.Resize(fyne.NewSize(1200, 600))
	h.pumpIdle()
	d := fyne.CurrentApp().Driver()
	run := h.a.LabRun()
	if y := d.AbsolutePositionForObject(run).Y + run.Size().Height; y > h.w.Canvas().Size().Height || run.Size().Height == 0 || !run.Visible() {
		t.Errorf("Run ends at y %v in a window %v high", y, h.w.Canvas().Size().Height)
	}
	if !strings.Contains(ui.Texts(h.a.LabControls()), "kept in F32/F16") {
		t.Error("no note on the tensors kept in F32/F16")
	}
}
