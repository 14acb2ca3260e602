package ui_test

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"flowchat/ui"
	"flowchat/ui/fake"
)

// known is a top-k step over four tokens: top-k 2 keeps A and B and
// renormalises 0.5 and 0.3 to 0.625 and 0.375.
var known = ui.Explanation{Decoding: "sample", Chosen: " A", Stages: []ui.StageReport{
	{Stage: "top_k", In: 4, Out: 2, Candidates: []ui.Candidate{
		{Text: " A", PBefore: 0.5, P: 0.625, Kept: true, Chosen: true},
		{Text: " B", PBefore: 0.3, P: 0.375, Kept: true},
		{Text: "\n", PBefore: 0.15},
		{Text: "C", PBefore: 0.05},
	}},
}}

func near(a, b float32) bool { return math.Abs(float64(a-b)) < 0.01 }

func TestChartReflectsKnownDistribution(t *testing.T) {
	e := scripted("ok")
	e.Explanation = func(ui.Request) ui.Explanation { return known }
	h := newHarness(t, e)
	if !strings.Contains(h.a.ChartSummary(), "«␣A»") {
		t.Errorf("summary %q does not name the chosen token", h.a.ChartSummary())
	}
	bars := h.a.Chart().Bars(600)
	if len(bars) != 4 {
		t.Fatalf("%d bars, want 4", len(bars))
	}
	track := bars[0].Track
	// The stage's largest probability, 0.625, spans the track.
	want := []struct {
		token, value  string
		before, after float32
	}{
		{"«␣A»", "50.0% ⟶ 62.5%", 0.5 / 0.625, 1},
		{"«␣B»", "30.0% ⟶ 37.5%", 0.3 / 0.625, 0.375 / 0.625},
		{"«⏎»", "15.0% ⟶ removed", 0.15 / 0.625, 0.15 / 0.625},
		{"«C»", "5.0% ⟶ removed", 0.05 / 0.625, 0.05 / 0.625},
	}
	for i, w := range want {
		b := bars[i]
		if b.Token != w.token || b.Value != w.value || !near(b.Before/track, w.before) || !near(b.After/track, w.after) || b.Track != track {
			t.Errorf("bar %d = %+v (before %.3f, after %.3f of the track), want %+v", i, b, b.Before/track, b.After/track, w)
		}
	}
	test.AssertObjectRendersToMarkup(t, "next_token_chart.xml", sized(h.a.Chart(), 480))
}

// sized gives o a fixed width and its minimum height, for golden files.
func sized(o fyne.CanvasObject, width float32) fyne.CanvasObject {
	o.Resize(fyne.NewSize(width, o.MinSize().Height))
	return o
}

func TestChartFollowsSliders(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.pumpIdle()
	if stages := chartStages(h); strings.Join(stages, ",") != "temperature,dist" {
		t.Fatalf("default chain drawn as %v", stages)
	}
	h.a.Slider("top_k").SetValue(2)
	h.a.Slider("temperature").SetValue(1)
	h.pumpIdle()
	if stages := chartStages(h); strings.Join(stages, ",") != "top_k,dist" {
		t.Fatalf("after top-k 2 and temperature 1 the chart shows %v", stages)
	}
	bars := h.a.Chart().Bars(600)
	kept := 0
	for _, b := range bars[:len(fake.Words)] {
		if !strings.HasSuffix(b.Value, "removed") {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("top-k 2 keeps %d bars: %+v", kept, bars)
	}
}

func chartStages(h *harness) []string {
	var out []string
	for _, b := range h.a.Chart().Bars(600) {
		if len(out) == 0 || out[len(out)-1] != b.Stage {
			out = append(out, b.Stage)
		}
	}
	return out
}

func TestChartSubjectFollowsDraftAndLastQuestion(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	if !strings.Contains(h.a.ChartSubject(), "example") {
		t.Errorf("empty chat: subject %q", h.a.ChartSubject())
	}
	test.Type(h.a.Composer(), "why is the sky blue")
	h.pumpIdle()
	if !strings.HasSuffix(h.a.ChartSubject(), "why is the sky blue") {
		t.Errorf("with a draft: subject %q", h.a.ChartSubject())
	}
	h.press(fyne.KeyReturn)
	h.pumpUntil("the reply", h.idle)
	h.pumpIdle()
	if !strings.HasSuffix(h.a.ChartSubject(), "why is the sky blue") {
		t.Errorf("after the reply: subject %q, want the last question", h.a.ChartSubject())
	}
}

func TestChartFollowsReplyOnlyWhenAsked(t *testing.T) {
	e := scripted("a b c")
	h := newHarness(t, e)
	h.say("first")
	if strings.HasPrefix(h.a.ChartSummary(), "Live:") || h.a.FollowCheck().Checked {
		t.Fatalf("live by default: %q", h.a.ChartSummary())
	}
	test.Tap(h.a.FollowCheck())
	h = h.restart()
	if !h.a.FollowCheck().Checked {
		t.Fatal("the follow setting was not remembered")
	}
	e.Gate = make(chan struct{})
	test.Type(h.a.Composer(), "go")
	h.press(fyne.KeyReturn)
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("a"))
	if !strings.HasPrefix(h.a.ChartSummary(), "Live:") {
		t.Errorf("summary while generating %q", h.a.ChartSummary())
	}
	close(e.Gate)
	h.pumpUntil("the end", h.idle)
	h.pumpIdle()
	if strings.HasPrefix(h.a.ChartSummary(), "Live:") {
		t.Errorf("summary after the reply %q", h.a.ChartSummary())
	}
}

// TestChartAlignedWithText: the chart's stage titles and tokens start where
// the texts above them do (they sat 8 px further left, at the pane's edge).
func TestChartAlignedWithText(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	d := fyne.CurrentApp().Driver()
	text := d.AbsolutePositionForObject(h.a.ChartSubjectLabel()).X + theme.InnerPadding()
	if x := d.AbsolutePositionForObject(h.a.Chart()).X; x < text-0.5 || x > text+0.5 {
		t.Errorf("the chart starts at x %.1f, the text above it at %.1f", x, text)
	}
}
