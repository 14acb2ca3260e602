package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// explainer fetches next-token explanations off the UI goroutine. At most
// one request runs; a newer one replaces any waiting, so dragging a slider
// never builds a queue. Its fields are owned by the UI goroutine, except
// the live-stream ones under mu.
type explainer struct {
	a       *App
	running bool
	queued  *Request
	cancel  context.CancelFunc

	mu          sync.Mutex
	latest      Explanation // newest step of the reply being generated
	latestGen   *generation // the reply it belongs to
	livePending bool        // a render of latest is posted
}

func newExplainer(a *App) *explainer { return &explainer{a: a} }

func (x *explainer) request(req Request) {
	if x.running {
		x.queued = &req
		x.cancel()
		return
	}
	x.start(req)
}

func (x *explainer) start(req Request) {
	e := x.a.engine
	if e == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.running, x.cancel = true, cancel
	x.a.next.SetWorking(true)
	go func() {
		exp, err := e.Explain(ctx, req)
		x.a.post(func() { x.done(e, exp, err) })
	}()
}

func (x *explainer) done(e Engine, exp Explanation, err error) {
	x.cancel()
	x.running = false
	if q := x.queued; q != nil {
		x.queued = nil
		x.start(*q)
		return
	}
	x.a.next.SetWorking(false)
	switch {
	case e != x.a.engine || errors.Is(err, ErrBusy) || errors.Is(err, context.Canceled):
	case x.a.busy(): // the reply's own steps are shown live
	case err != nil:
		x.a.next.SetError(err)
	default:
		x.a.next.Set(exp, false)
	}
}

// liveFor returns the OnExplain of generation g: each step of its reply,
// on the generating goroutine, shown (the newest at most once per UI
// frame) while g's conversation is the one on screen.
func (x *explainer) liveFor(g *generation) func(Explanation) {
	return func(exp Explanation) { x.live(g, exp) }
}

func (x *explainer) live(g *generation, exp Explanation) {
	x.mu.Lock()
	x.latest, x.latestGen = exp, g
	schedule := !x.livePending
	x.livePending = true
	x.mu.Unlock()
	if schedule {
		x.a.post(x.showLive)
	}
}

func (x *explainer) showLive() {
	x.mu.Lock()
	exp, g := x.latest, x.latestGen
	x.livePending = false
	x.mu.Unlock()
	if g != nil && x.a.cur() == g {
		x.a.next.Set(exp, true)
	}
}

// explainView is the "next token" panel: what the question is, the chosen
// token, and the chart.
type explainView struct {
	follow  *widget.Check
	subject *widget.Label
	summary *widget.Label
	working *widget.Activity
	chart   *tokenChart
	content fyne.CanvasObject
}

func newExplainView(a *App) *explainView {
	v := &explainView{subject: widget.NewLabel(""), summary: widget.NewLabel(""), working: widget.NewActivity(), chart: newTokenChart()}
	// Following a reply costs an explanation per token: a few
	// milliseconds with a 100k-token vocabulary, so it is opt-in.
	v.follow = widget.NewCheck("Live", func(on bool) {
		a.settings.ExplainLive = on
		a.saveSettings()
	})
	v.follow.Checked = a.settings.ExplainLive
	v.subject.Truncation = fyne.TextTruncateEllipsis
	v.subject.Importance = widget.LowImportance
	v.subject.SizeName = theme.SizeNameCaptionText
	v.summary.Wrapping = fyne.TextWrapWord
	v.summary.SetText("Load a model to see how each sampling stage shapes the next token.")
	v.working.Hide()
	title := widget.NewLabelWithStyle("Next token", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	legend := widget.NewLabel("grey: probability entering a stage · colour: leaving it · red: removed · Live: follow replies as they stream (slower decoding)")
	legend.SizeName = theme.SizeNameCaptionText
	legend.Importance = widget.LowImportance
	legend.Wrapping = fyne.TextWrapWord
	// Only the title row, with the decision in it, is fixed: the question
	// scrolls with the chart, and the legend comes after it, so that an
	// 800 px window shows most of a stage under the settings.
	// (in a VBox: a long decision or error wraps, and a check stretched
	// to the row's height takes taps only in its middle)
	head := container.NewBorder(nil, nil, container.NewVBox(title), container.NewVBox(container.NewHBox(v.working, v.follow)), v.summary)
	v.content = container.NewBorder(head, nil, nil, nil, container.NewVScroll(container.NewVBox(v.subject, inset(v.chart), legend)))
	return v
}

// inset lines the chart's text up with the labels' (a label draws its
// text an inner padding inside its edge; the chart's canvas texts sat at
// the edge of the pane).
func inset(o fyne.CanvasObject) fyne.CanvasObject {
	p := theme.InnerPadding()
	return container.New(layout.NewCustomPaddedLayout(0, 0, p, p), o)
}

// SetSubject names the question whose reply the chart is about.
func (v *explainView) SetSubject(s string) {
	s = strings.Join(strings.Fields(s), " ")
	v.subject.SetText("Reply to: " + s)
}

func (v *explainView) SetWorking(on bool) {
	if on {
		v.working.Show()
		v.working.Start()
	} else {
		v.working.Stop()
		v.working.Hide()
	}
}

func (v *explainView) SetError(err error) {
	v.summary.SetText("⚠ " + err.Error())
	v.summary.Importance = widget.DangerImportance
	v.summary.Refresh()
}

// Set shows exp; live marks a step of the reply being generated.
func (v *explainView) Set(exp Explanation, live bool) {
	s := fmt.Sprintf("%s decoding picks %s", exp.Decoding, tokenLabel(exp.Chosen))
	if live {
		s = "Live: " + s
	}
	v.summary.Importance = widget.MediumImportance
	v.summary.SetText(s)
	v.chart.Set(exp)
}

// tokenLabel shows a token's text with its spaces and line breaks visible.
func tokenLabel(s string) string {
	r := strings.NewReplacer(" ", "␣", "\n", "⏎", "\t", "⇥", "\r", "")
	return "«" + r.Replace(s) + "»"
}

// chartRows is how many candidates the chart draws per stage.
const chartRows = 8

// stageHelp says what each stage does, under its name in the chart.
var stageHelp = map[string]string{
	"logit_bias":  "your per-token biases",
	"penalties":   "repetition penalties lower tokens already used",
	"dry":         "DRY lowers tokens that would extend a repeat",
	"top_k":       "keeps the k most probable",
	"tfs_z":       "tail-free: cuts where the curve flattens",
	"typical_p":   "keeps tokens of typical surprise",
	"top_p":       "keeps the smallest set with this much probability",
	"min_p":       "drops tokens far less probable than the top one",
	"xtc":         "sometimes removes the most probable choices",
	"temperature": "sharpens (<1) or flattens (>1)",
	"dist":        "the draw",
	"greedy":      "takes the most probable",
	"fsd":         "scores by model minus an n-gram model of the text so far",
	"mirostat_v1": "targets a surprise of tau bits",
	"mirostat_v2": "targets a surprise of tau bits",
}

// tokenChart draws, per stage, the top candidates' probability entering
// (grey) and leaving (colour) the stage as horizontal bars, with canvas
// rectangles and text. Bars of one stage share a scale: the largest
// probability shown in that stage spans the track.
type tokenChart struct {
	widget.BaseWidget
	exp Explanation
}

func newTokenChart() *tokenChart {
	c := &tokenChart{}
	c.ExtendBaseWidget(c)
	return c
}

// Set replaces the explanation drawn.
func (c *tokenChart) Set(exp Explanation) {
	c.exp = exp
	c.Refresh()
}

func (c *tokenChart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c}
	r.rebuild()
	return r
}

// chartRow is one candidate's drawing.
type chartRow struct {
	label, value           *canvas.Text
	track, before, after   *canvas.Rectangle
	pBefore, pAfter, scale float32
}

// chartStage is one stage's heading and rows.
type chartStage struct {
	title, help *canvas.Text
	rows        []*chartRow
}

type chartRenderer struct {
	c       *tokenChart
	stages  []*chartStage
	objects []fyne.CanvasObject
}

// Metrics of the chart, in units of the theme's text size.
const (
	chartRowH   = 1.5 // a candidate's row
	chartTitleH = 1.4
	chartHelpH  = 1.2
	chartGapH   = 0.6 // between stages
	chartLabelW = 7   // token column
	chartValueW = 8   // "12.3% → 45.6%" column
)

func (r *chartRenderer) textSize() float32 { return r.c.Theme().Size(theme.SizeNameText) }

func (r *chartRenderer) rebuild() {
	r.stages, r.objects = nil, nil
	for i, st := range r.c.exp.Stages {
		r.stages = append(r.stages, r.buildStage(i, st))
	}
}

func (r *chartRenderer) buildStage(i int, st StageReport) *chartStage {
	th, v := r.c.Theme(), fyne.CurrentApp().Settings().ThemeVariant()
	fg, muted := th.Color(theme.ColorNameForeground, v), th.Color(theme.ColorNamePlaceHolder, v)
	s := &chartStage{
		title: canvas.NewText(fmt.Sprintf("%d. %s  %d ⟶ %d candidates", i+1, st.Stage, st.In, st.Out), fg),
		help:  canvas.NewText(stageHelp[st.Stage], muted),
	}
	s.title.TextStyle.Bold = true
	s.help.TextSize = th.Size(theme.SizeNameCaptionText)
	r.objects = append(r.objects, s.title, s.help)
	cands := st.Candidates[:min(len(st.Candidates), chartRows)]
	var scale float32
	for _, c := range cands {
		scale = max(scale, c.PBefore, c.P)
	}
	for _, c := range cands {
		row := r.buildRow(c, scale)
		s.rows = append(s.rows, row)
		r.objects = append(r.objects, row.track, row.before, row.after, row.label, row.value)
	}
	return s
}

func (r *chartRenderer) buildRow(c Candidate, scale float32) *chartRow {
	th, v := r.c.Theme(), fyne.CurrentApp().Settings().ThemeVariant()
	fg := th.Color(theme.ColorNameForeground, v)
	after := th.Color(theme.ColorNamePrimary, v)
	value := fmt.Sprintf("%s ⟶ %s", percent(c.PBefore), percent(c.P))
	if !c.Kept {
		after = th.Color(theme.ColorNameError, v)
		value = percent(c.PBefore) + " ⟶ removed"
	}
	row := &chartRow{
		label:   canvas.NewText(tokenLabel(c.Text), fg),
		value:   canvas.NewText(value, fg),
		track:   canvas.NewRectangle(th.Color(theme.ColorNameInputBackground, v)),
		before:  canvas.NewRectangle(th.Color(theme.ColorNameDisabled, v)),
		after:   canvas.NewRectangle(after),
		pBefore: c.PBefore, pAfter: c.P, scale: scale,
	}
	if !c.Kept {
		row.pAfter = c.PBefore // a red bar the length of what was lost
		row.value.Color = after
	}
	row.label.TextStyle.Monospace = true
	row.label.TextStyle.Bold = c.Chosen
	row.value.TextSize = th.Size(theme.SizeNameCaptionText)
	return row
}

func percent(p float32) string {
	if p > 0 && p < 0.001 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", p*100)
}

func (r *chartRenderer) Layout(size fyne.Size) {
	ts := r.textSize()
	y := float32(0)
	for _, s := range r.stages {
		s.title.Move(fyne.NewPos(0, y))
		s.title.Resize(fyne.NewSize(size.Width, chartTitleH*ts))
		y += chartTitleH * ts
		s.help.Move(fyne.NewPos(0, y))
		s.help.Resize(fyne.NewSize(size.Width, chartHelpH*ts))
		y += chartHelpH * ts
		for _, row := range s.rows {
			r.layoutRow(row, y, size.Width)
			y += chartRowH * ts
		}
		y += chartGapH * ts
	}
}

// layoutRow: token label, then the track with the grey "before" bar on
// its upper half and the coloured "after" bar on its lower half, then the
// values.
func (r *chartRenderer) layoutRow(row *chartRow, y, width float32) {
	ts := r.textSize()
	h := chartRowH * ts
	labelW, valueW := chartLabelW*ts, chartValueW*ts
	trackW := max(width-labelW-valueW, ts)
	row.label.Move(fyne.NewPos(0, y))
	row.label.Resize(fyne.NewSize(labelW, h))
	barH := h * 0.35
	top := y + h*0.15
	row.track.Move(fyne.NewPos(labelW, top))
	row.track.Resize(fyne.NewSize(trackW, 2*barH))
	row.before.Move(fyne.NewPos(labelW, top))
	row.before.Resize(fyne.NewSize(barWidth(row.pBefore, row.scale, trackW), barH))
	row.after.Move(fyne.NewPos(labelW, top+barH))
	row.after.Resize(fyne.NewSize(barWidth(row.pAfter, row.scale, trackW), barH))
	row.value.Move(fyne.NewPos(labelW+trackW+ts/2, y))
	row.value.Resize(fyne.NewSize(valueW-ts/2, h))
}

// barWidth is p's share of the track, the stage's largest probability
// spanning all of it.
func barWidth(p, scale, track float32) float32 {
	if scale <= 0 {
		return 0
	}
	return p / scale * track
}

func (r *chartRenderer) MinSize() fyne.Size {
	ts := r.textSize()
	h := float32(0)
	for _, s := range r.stages {
		h += (chartTitleH+chartHelpH+chartGapH)*ts + float32(len(s.rows))*chartRowH*ts
	}
	return fyne.NewSize((chartLabelW+chartValueW+6)*ts, h)
}

func (r *chartRenderer) Refresh() {
	r.rebuild()
	r.Layout(r.c.Size())
	canvas.Refresh(r.c)
}

func (r *chartRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *chartRenderer) Destroy()                     {}
