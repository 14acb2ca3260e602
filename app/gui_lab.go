package main

import (
	"context"
	"fmt"
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"path/filepath"
	"strings"

	"flowchat/app/quantlab"
	"flowchat/engine/eval"
	"flowchat/engine/quant"
	"flowchat/ui"
)

// guiLab adapts app/quantlab (cached Lab runs, charts, side-by-side
// generation) to ui.Lab. The evaluation text is quantlab's bundled one.
type guiLab struct {
	cacheDir string // "" caches nothing
	threads  int    // 0 = all cores
	// chartW, chartH are the charts' size in pixels; the screen scales
	// them to fit.
	chartW, chartH int
}

var _ ui.Lab = (*guiLab)(nil)

func newGUILab(cacheDir string, threads int) *guiLab {
	return &guiLab{cacheDir: cacheDir, threads: threads, chartW: 720, chartH: 450}
}

// labLevels are the rows offered: the base, Inferflow's levels, GGML's
// classic types for comparison.
var labLevels = append(append([]string(nil), quantlab.DefaultLevels...), "Q4_K")

func (l *guiLab) Levels() []ui.Choice {
	var out []ui.Choice
	for _, v := range labLevels {
		out = append(out, ui.Choice{Value: v, Label: levelLabel(v)})
	}
	return out
}

// levelLabel: "Q3H · Inferflow, 4 bits/weight" (of the quantized
// matrices: the tensors kept in F32/F16 raise the file's average, which the
// results table shows).
func levelLabel(v string) string {
	if strings.EqualFold(v, "F32") {
		return "F32 · the model as stored (base)"
	}
	t, err := quant.ParseType(v)
	if err != nil {
		return v
	}
	family := "GGML"
	if quant.ForType(t) != nil {
		family = "Inferflow"
	}
	return fmt.Sprintf("%s · %s, %.3g bits/weight", v, family, typeBits(t))
}

func (l *guiLab) DefaultLevels() []string {
	return []string{"F32", "Q8", "Q4_B32", "Q3H", "Q3", "Q2", "Q4_0"}
}

func (l *guiLab) options(progress func(ui.LabProgress)) quantlab.Options {
	return quantlab.Options{CacheDir: l.cacheDir, Progress: func(p eval.LabProgress) {
		progress(ui.LabProgress{Level: quantlab.LevelLabel(p.Level), Index: p.Index, Levels: p.Levels, Stage: p.Stage, Frac: p.Frac})
	}}
}

func (l *guiLab) Run(ctx context.Context, r ui.LabRequest, progress func(ui.LabProgress)) (ui.LabReport, error) {
	req := quantlab.Request{Model: r.Model, Levels: r.Levels, Ctx: r.Ctx, MaxChunks: r.MaxChunks, GenTokens: r.GenTokens, Threads: l.threads}
	if err := quantlab.ValidateLevels(r.Levels); err != nil {
		return ui.LabReport{}, err
	}
	res, err := quantlab.Run(ctx, req, l.options(progress))
	if err != nil {
		return ui.LabReport{}, err
	}
	return l.report(res)
}

var chartTitles = map[quantlab.Chart]string{
	quantlab.SizeQuality: "Size vs quality", quantlab.PPLBars: "Perplexity", quantlab.KLDBars: "KL divergence from the base",
	quantlab.Top1Bars: "Top-1 agreement", quantlab.TPSBars: "Generation speed",
}

// report lays a result out for the screen, rendering every chart.
func (l *guiLab) report(res *quantlab.Result) (ui.LabReport, error) {
	k := res.Key
	t := quantlab.NewTable(res.Report)
	out := ui.LabReport{
		Request: ui.LabRequest{Model: k.Model.Path, Levels: k.Levels, Ctx: k.Ctx, MaxChunks: k.MaxChunks, GenTokens: k.GenTokens},
		Summary: strings.Replace(quantlab.Summary(res.Report), res.Report.Model, filepath.Base(res.Report.Model), 1), Header: t.Header, Right: t.Right, Rows: t.Rows, Created: res.Created, Cached: res.Cached,
	}
	for _, c := range quantlab.Charts(res.Report) {
		img, err := quantlab.RenderStyled(res.Report, c, l.chartW, l.chartH, chartStyle())
		if err != nil {
			return out, fmt.Errorf("drawing the %s chart: %w", c, err)
		}
		out.Charts = append(out.Charts, ui.LabChart{Title: chartTitles[c], Image: img})
	}
	return out, nil
}

// Side continues the prompt with the base and every level of r.
func (l *guiLab) Side(ctx context.Context, r ui.SideRequest, progress func(ui.LabProgress)) (ui.SideResult, error) {
	req := quantlab.SideRequest{Model: r.Model, Levels: r.Levels, Prompt: r.Prompt, Tokens: r.Tokens,
		Temperature: r.Temperature, Seed: r.Seed, Threads: l.threads}
	res, err := quantlab.Generate(ctx, req, l.options(progress))
	if err != nil {
		return ui.SideResult{}, err
	}
	out := ui.SideResult{Cached: res.Cached}
	for i := range res.Side.Rows {
		c := &res.Side.Rows[i]
		out.Rows = append(out.Rows, ui.SideRow{Level: quantlab.LevelLabel(c.Level), Note: sideNote(c), Spans: sideSpans(c)})
	}
	return out, nil
}

func sideNote(c *quantlab.Continuation) string {
	s := fmt.Sprintf("%d tokens, %.0f tok/s", len(c.Tokens), c.TPS)
	switch {
	case c.Level == quantlab.BaseLevel:
		return "the model as stored · " + s
	case c.DivergeAt < 0:
		return "same tokens as the base · " + s
	}
	return fmt.Sprintf("diverges at token %d · %s", c.DivergeAt+1, s)
}

// spanMarks delimit changed runs in Marked's output; neither byte occurs
// in decoded text the engine produces for people.
var spanMarks = quantlab.Marks{Open: "\x01", Close: "\x02"}

// sideSpans splits the row's text into runs, the changed ones marked as
// quantlab.Marked marks them (whole words, leading space outside).
func sideSpans(c *quantlab.Continuation) []ui.SideSpan {
	var out []ui.SideSpan
	for i, part := range strings.Split(c.Marked(spanMarks), spanMarks.Open) {
		changed, plain := "", part
		if i > 0 {
			changed, plain, _ = strings.Cut(part, spanMarks.Close)
		}
		if changed != "" {
			out = append(out, ui.SideSpan{Text: changed, Changed: true})
		}
		if plain != "" {
			out = append(out, ui.SideSpan{Text: plain})
		}
	}
	return out
}

// Last is the newest Lab report in the cache.
func (l *guiLab) Last() (ui.LabReport, bool) {
	if l.cacheDir == "" {
		return ui.LabReport{}, false
	}
	saved, err := quantlab.List(l.cacheDir)
	if err != nil {
		return ui.LabReport{}, false
	}
	for _, s := range saved {
		if s.Key.Kind == "lab" && s.Result != nil {
			rep, err := l.report(s.Result)
			rep.Cached = true
			return rep, err == nil
		}
	}
	return ui.LabReport{}, false
}

// chartStyle is the app theme's colours, so that the Lab's charts follow
// the window (dark or light) instead of being white panels.
func chartStyle() quantlab.Style {
	a := fyne.CurrentApp()
	if a == nil {
		return quantlab.PrintStyle
	}
	th, v := a.Settings().Theme(), a.Settings().ThemeVariant()
	return quantlab.Style{Background: th.Color(theme.ColorNameBackground, v), Foreground: th.Color(theme.ColorNameForeground, v),
		Grid: th.Color(theme.ColorNameSeparator, v)}
}
