package ui_test

import (
	"fyne.io/fyne/v2"

	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/presets"
	"flowchat/ui"
)

func TestSliderChangeReachesRequest(t *testing.T) {
	h := newHarness(t, scripted("one two three"))
	h.a.Slider("temperature").SetValue(0.3)
	h.a.Slider("top_k").SetValue(7)
	if got := h.a.ValueEntry("top_k").Text; got != "7" {
		t.Errorf("top-k entry shows %q after the slider moved", got)
	}
	h.a.ValueEntry("min_p").SetText("0.2")
	if got := h.a.Slider("min_p").Value; got != 0.2 {
		t.Errorf("min-p slider at %v after typing 0.2", got)
	}
	h.a.Slider("max_tokens").SetValue(2)
	h.say("hi")
	s := h.eng.Calls()[0].Sampling
	if s.Temperature != 0.3 || s.TopK != 7 || s.MinP != 0.2 || s.MaxTokens != 2 {
		t.Errorf("request sampling %+v", s)
	}
	if f := h.a.Views()[1].Footer(); !strings.Contains(f, "2 generated") || !strings.Contains(f, "max tokens") {
		t.Errorf("a reply cut by max tokens says %q", f)
	}
	if h.a.PresetSelect().Selected != "" {
		t.Errorf("preset still shows %q after edits", h.a.PresetSelect().Selected)
	}
}

func TestDecodingChoiceGreysOutUnusedGroups(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	if note := h.a.GroupNote("Temperature & truncation"); note != "" {
		t.Errorf("sampling decoding: truncation note %q", note)
	}
	h.a.DecodingSelect().SetSelected("Greedy")
	if note := h.a.GroupNote("Temperature & truncation"); !strings.Contains(note, "greedy") {
		t.Errorf("greedy decoding: truncation note %q", note)
	}
	if h.a.Sampling().Decoding != presets.DecodingGreedy {
		t.Errorf("decoding %q", h.a.Sampling().Decoding)
	}
	if note := h.a.GroupNote("FSD (frustratingly simple decoding)"); note == "" {
		t.Error("FSD settings not marked unused under greedy decoding")
	}
}

func TestInvalidSettingIsShownAndNotSent(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.a.ValueEntry("temperature").SetText("-1")
	if !strings.Contains(h.a.SamplingError(), "temperature") {
		t.Errorf("error shown: %q", h.a.SamplingError())
	}
	h.say("hi")
	if got := h.eng.Calls()[0].Sampling.Temperature; got < 0 {
		t.Errorf("an invalid temperature %v reached the engine", got)
	}
	h.a.ValueEntry("temperature").SetText("0.5")
	if h.a.SamplingError() != "" {
		t.Errorf("error stays after a valid value: %q", h.a.SamplingError())
	}
}

// TestSettingsRememberedPerModel: each model keeps its own preset and
// settings across loads.
func TestSettingsRememberedPerModel(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.a.PresetSelect().SetSelected("Precise")
	precise, _ := presets.Find(presets.Builtin(), "Precise")
	if h.a.Sampling().Temperature != precise.Params.Temperature {
		t.Fatalf("Precise preset gave temperature %v", h.a.Sampling().Temperature)
	}
	h.a.LoadModel(bigModel.Path, ui.LoadOptions{Context: 8192})
	h.pumpUntil("the big model", func() bool { return !h.a.Loading() })
	if h.a.Sampling().Temperature != presets.Default().Temperature || h.a.PresetSelect().Selected != "Balanced" {
		t.Errorf("new model starts with %v / %q, want the defaults", h.a.Sampling().Temperature, h.a.PresetSelect().Selected)
	}
	h.a.Slider("temperature").SetValue(1.5)
	h.a.LoadModel(tinyModel.Path, ui.LoadOptions{})
	h.pumpUntil("the tiny model", func() bool { return !h.a.Loading() })
	if h.a.Sampling().Temperature != precise.Params.Temperature || h.a.PresetSelect().Selected != "Precise" {
		t.Errorf("tiny model came back with %v / %q, want Precise", h.a.Sampling().Temperature, h.a.PresetSelect().Selected)
	}
	h.a.LoadModel(bigModel.Path, ui.LoadOptions{})
	h.pumpUntil("the big model again", func() bool { return !h.a.Loading() })
	if h.a.Sampling().Temperature != 1.5 {
		t.Errorf("big model came back with temperature %v, want 1.5", h.a.Sampling().Temperature)
	}
	if loads := h.lib.Loads(); loads[1].Opts.Context != 8192 {
		t.Errorf("load options %+v", loads)
	}
}

func TestUserPresetSavedAndPersisted(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.a.Slider("top_k").SetValue(12)
	h.a.SaveUserPreset("Balanced")
	if !strings.Contains(h.a.SamplingError(), "built-in") {
		t.Errorf("saving over a built-in: %q", h.a.SamplingError())
	}
	h.a.SaveUserPreset("mine")
	if h.a.PresetSelect().Selected != "mine" || !contains(h.a.PresetSelect().Options, "mine") {
		t.Fatalf("preset select %q of %q", h.a.PresetSelect().Selected, h.a.PresetSelect().Options)
	}
	h.a.PresetSelect().SetSelected("Creative")
	h = h.restart()
	h.a.PresetSelect().SetSelected("mine")
	if h.a.Sampling().TopK != 12 {
		t.Errorf("user preset after restart gives top-k %d", h.a.Sampling().TopK)
	}
	test.Tap(h.a.DeletePresetButton())
	if contains(h.a.PresetSelect().Options, "mine") {
		t.Error("deleted preset still listed")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestAdvancedSettingsReachRequest(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	if got := h.a.TextEntry("dry_sequence_breakers").Text; got != `["\n",":","\"","*"]` {
		t.Errorf("breakers shown as %s", got)
	}
	h.a.TextEntry("samplers").SetText("min_p, temperature")
	h.a.TextEntry("logit_bias").SetText("15=+1.5, 7=-inf")
	h.a.TextEntry("dry_sequence_breakers").SetText(`["\n"]`)
	h.a.TextEntry("logit_bias").SetText("15=+1.5, 7=-inf, x")
	if !strings.Contains(h.a.SamplingError(), "TOKEN=BIAS") {
		t.Errorf("bad bias error %q", h.a.SamplingError())
	}
	h.a.TextEntry("logit_bias").SetText("15=+1.5, 7=-inf")
	h.say("hi")
	s := h.eng.Calls()[0].Sampling
	if strings.Join(s.Order, ",") != "min_p,temperature" || s.LogitBias[15] != 1.5 || !math.IsInf(float64(s.LogitBias[7]), -1) || len(s.DRYSequenceBreakers) != 1 {
		t.Errorf("request sampling order %v bias %v breakers %q", s.Order, s.LogitBias, s.DRYSequenceBreakers)
	}
}

// TestSamplingGrid: the common settings (temperature to min-p, and max
// tokens) are visible at once above the chart, every slider starts at the
// same x (in the Reply and truncation groups alike), and the stages the decoding does not run are hidden.
func TestSamplingGrid(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	d := fyne.CurrentApp().Driver()
	var x []float32
	for _, key := range []string{"temperature", "top_k", "top_p", "min_p", "max_tokens"} {
		s := h.a.Slider(key)
		pos := d.AbsolutePositionForObject(s)
		if !s.Visible() || pos.Y+s.Size().Height > h.a.ChartTop() || s.Size().Width < 50 {
			t.Errorf("%s slider at %v size %v: not visible above the chart (at y %v)", key, pos, s.Size(), h.a.ChartTop())
		}
		x = append(x, pos.X)
	}
	for i := range x {
		if x[i] != x[0] {
			t.Errorf("sliders start at different x: %v", x)
			break
		}
	}
	if h.a.GroupShown("FSD (frustratingly simple decoding)") || !h.a.GroupShown("Temperature & truncation") {
		t.Error("sampling: FSD settings shown or truncation hidden")
	}
	h.a.DecodingSelect().SetSelected("FSD")
	if h.a.GroupShown("Temperature & truncation") || h.a.GroupShown("XTC (exclude top choices)") || !h.a.GroupShown("FSD (frustratingly simple decoding)") {
		t.Error("FSD: top-k/top-p still shown, or FSD settings hidden")
	}
	if note := h.a.GroupNote("Temperature & truncation"); note == "" {
		t.Error("FSD: hidden stage without its reason")
	}
	if !h.a.GroupShown("Repetition penalties") || !h.a.GroupShown("Reply") {
		t.Error("FSD: penalties or reply length hidden")
	}
}

// TestChartHasRoom: in a 1280×800 window (its content 30 px shorter under
// the menu bar) the common settings are whole in view and the next-token
// pane under them shows its title row with the decision, the question
// and a stage with at least six of its candidates (it had 135 px: the
// title and two lines of text). The settings share one help line, which
// follows the setting pointed at, tapped or moved.
func TestChartHasRoom(t *testing.T) {
	h, _ := fullHarness(t, nil, false) // the screens' tabs above, as in the app
	h.w.Resize(fyne.NewSize(1280, 800-menuBar))
	h.pumpIdle()
	d := fyne.CurrentApp().Driver()
	for _, key := range []string{"max_tokens", "temperature", "top_k", "top_p", "min_p"} {
		e := h.a.ValueEntry(key)
		if bottom := d.AbsolutePositionForObject(e).Y + e.Size().Height; bottom > h.a.SettingsBottom()+0.5 {
			t.Errorf("%s: its value box ends at y %.0f, below the settings' view (%.0f)", key, bottom, h.a.SettingsBottom())
		}
	}
	ts := theme.TextSize()
	label := widget.NewLabel("x").MinSize().Height
	// the title row (a label), the question (a caption), a stage's
	// heading and help (2.6 text sizes), rows of 1.5 text sizes
	rows := (h.a.Panes()["next token"].Size().Height - label - theme.CaptionTextSize()*1.6 - 2.6*ts) / (1.5 * ts)
	if rows < 6 {
		t.Errorf("the next-token pane shows %.1f candidate rows, want at least 6", rows)
	}
	if got := h.a.SettingHelp(); !strings.Contains(got, "Point at a setting") {
		t.Errorf("help line at start: %q", got)
	}
	test.Tap(h.a.FieldName("top_k"))
	if got := h.a.SettingHelp(); !strings.HasPrefix(got, "Top-k: ") || !strings.Contains(got, "most probable") {
		t.Errorf("after tapping Top-k the help line says %q", got)
	}
	h.a.Slider("temperature").SetValue(1.3)
	if got := h.a.SettingHelp(); !strings.HasPrefix(got, "Temperature: ") {
		t.Errorf("after moving the temperature the help line says %q", got)
	}
}

// menuBar is the height of the main menu the desktop driver draws above
// the content (the test driver draws none).
const menuBar = 30
