package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// LabRequest is one Quantization Lab run over a full-precision model.
type LabRequest struct {
	Model     string   // GGUF path
	Levels    []string // rows: "F32" (the base), Inferflow or GGML types
	Ctx       int      // tokens per perplexity chunk
	MaxChunks int      // 0 = the whole text
	GenTokens int      // > 0: time greedy generation of this many tokens
}

// LabProgress says where a run is. Index is -1 while the base is
// evaluated; Frac is of the current stage.
type LabProgress struct {
	Level         string
	Index, Levels int
	Stage         string // "base", "load", "eval", "generate", "done"
	Frac          float64
}

// LabChart is one rendered chart.
type LabChart struct {
	Title string
	Image image.Image
}

// LabReport is a Lab run as the screen shows it: a summary line, a table
// (one row per level; Right marks numeric columns) and charts.
type LabReport struct {
	Request LabRequest
	Summary string
	Header  []string
	Right   []bool
	Rows    [][]string
	Charts  []LabChart
	Created time.Time
	Cached  bool // read from the cache, not computed now
}

// SideRequest is one prompt continued by the base and by each level with
// the same sampler and seed.
type SideRequest struct {
	Model       string
	Levels      []string
	Prompt      string
	Tokens      int
	Temperature float32 // 0 = greedy
	Seed        uint64
}

// SideSpan is a run of a row's text; Changed runs diverge from the base.
type SideSpan struct {
	Text    string
	Changed bool
}

// SideRow is one level's continuation.
type SideRow struct {
	Level string
	Note  string // where it diverges, its speed
	Spans []SideSpan
}

// SideResult is a side-by-side generation, the base row first.
type SideResult struct {
	Rows   []SideRow
	Cached bool
}

// Lab runs the Quantization Lab.
type Lab interface {
	// Levels offers the levels to compare; the first is the base.
	Levels() []Choice
	// DefaultLevels are the values checked at first.
	DefaultLevels() []string
	// Run evaluates every level (slow; results are cached, so the same
	// request again returns at once). progress is called from the running
	// goroutine.
	Run(ctx context.Context, r LabRequest, progress func(LabProgress)) (LabReport, error)
	Side(ctx context.Context, r SideRequest, progress func(LabProgress)) (SideResult, error)
	// Last is the newest cached report, so the screen reopens with it.
	Last() (LabReport, bool)
}

// labView is the Quantization Lab screen. Every field is owned by the UI
// goroutine; runs report through post.
type labView struct {
	a   *App
	lab Lab

	colWidths []float32 // the table's column widths, as fitColumns set them

	models  []ModelInfo // full-precision models
	model   *widget.Select
	levels  *widget.CheckGroup
	ctxSel  *widget.Select
	chunks  *widget.Select
	timeGen *widget.Check
	run     *widget.Button
	cancel  *widget.Button
	bar     *widget.ProgressBar
	stage   *widget.Label
	errMsg  *widget.Label
	job     task
	running bool

	report  *LabReport
	summary *widget.Label
	charts  *fyne.Container
	table   *widget.Table
	side    *sideView
	results *container.AppTabs
	content fyne.CanvasObject
}

var (
	labContexts = []string{"64", "128", "256"}
	labChunks   = []string{"4", "8", "16", "all"}
)

func newLabView(a *App, lab Lab) *labView {
	l := &labView{a: a, lab: lab}
	l.model = widget.NewSelect(nil, nil)
	l.model.PlaceHolder = "(no full-precision model: add an F32/F16 GGUF)"
	var labels []string
	for _, c := range lab.Levels() {
		labels = append(labels, c.Label)
	}
	l.levels = widget.NewCheckGroup(labels, nil)
	l.setLevels(lab.DefaultLevels())
	l.ctxSel = widget.NewSelect(labContexts, nil)
	l.ctxSel.SetSelected("128")
	l.chunks = widget.NewSelect(labChunks, nil)
	l.chunks.SetSelected("8")
	l.timeGen = widget.NewCheck("Time generation (tokens/s)", nil)
	l.timeGen.SetChecked(true)
	l.run = widget.NewButtonWithIcon("Run the Lab", theme.MediaPlayIcon(), l.start)
	l.run.Importance = widget.HighImportance
	l.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), l.stop)
	l.cancel.Disable()
	l.bar = widget.NewProgressBar()
	l.stage = helpLabel("Pick a model and levels, then run. Results are kept, so running the same comparison again is instant.")
	l.errMsg = widget.NewLabel("")
	l.errMsg.Importance = widget.DangerImportance
	l.errMsg.Wrapping = fyne.TextWrapWord
	l.errMsg.Hide()
	l.buildResults()
	l.content = container.NewBorder(nil, nil, l.controls(), nil, container.NewBorder(l.summary, nil, nil, nil, l.results))
	return l
}

func (l *labView) controls() fyne.CanvasObject {
	form := container.NewVBox(
		widget.NewLabelWithStyle("Quantization Lab", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		helpLabel("What each quantization level costs: size against perplexity, KL divergence and top-1 agreement with the full-precision model, and speed."),
		widget.NewLabel("Full-precision model"), l.model,
		widget.NewLabel("Levels"), l.levels,
		helpLabel(keptNote),
		container.NewGridWithColumns(2, widget.NewLabel("Context"), l.ctxSel, widget.NewLabel("Chunks of text"), l.chunks),
		l.timeGen,
	)
	s := container.NewVScroll(form)
	s.SetMinSize(fyne.NewSize(300, 0))
	// Run stays in view below the settings, however long the level list.
	run := container.NewVBox(widget.NewSeparator(), container.NewHBox(l.run, l.cancel), l.bar, l.stage, l.errMsg)
	return container.NewBorder(nil, run, nil, nil, s)
}

// keptNote explains why the table's bits/weight exceed the levels'.
const keptNote = "A level's bits/weight are those of its quantized matrices. Norms and other small tensors are kept " +
	"in F32/F16, so the table's bits/weight (the whole file's average) are higher, most on small models."

func (l *labView) buildResults() {
	l.summary = widget.NewLabelWithStyle("No results yet.", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.summary.Wrapping = fyne.TextWrapWord
	l.charts = container.NewGridWrap(fyne.NewSize(440, 275))
	l.table = widget.NewTable(l.tableSize, func() fyne.CanvasObject { return widget.NewLabel("") }, l.tableCell)
	l.table.ShowHeaderRow = true
	l.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	l.table.UpdateHeader = l.headerCell
	l.side = newSideView(l)
	l.results = container.NewAppTabs(
		container.NewTabItem("Charts", container.NewVScroll(l.charts)),
		container.NewTabItem("Table", l.table),
		container.NewTabItem("Side by side", l.side.content),
	)
}

// setModels offers the models stored at full precision.
func (l *labView) setModels(all []ModelInfo) {
	l.models = nil
	var names []string
	for _, m := range all {
		if q := strings.ToUpper(m.Quant); q == "F32" || q == "F16" || q == "BF16" {
			l.models = append(l.models, m)
			names = append(names, labModelName(m))
		}
	}
	l.model.SetOptions(names)
	want := ""
	if l.report != nil {
		want = l.report.Request.Model
	}
	i := slices.IndexFunc(l.models, func(m ModelInfo) bool { return m.Path == want })
	switch {
	case i >= 0:
		l.model.SetSelectedIndex(i)
	case len(names) > 0 && l.model.SelectedIndex() < 0:
		l.model.SetSelectedIndex(0)
	}
}

func labModelName(m ModelInfo) string {
	return fmt.Sprintf("%s (%s, %s)", m.Name, m.Quant, humanBytes(uint64(m.FileSize)))
}

// setLevels checks the levels whose values are given.
func (l *labView) setLevels(values []string) {
	var sel []string
	for _, c := range l.lab.Levels() {
		if slices.Contains(values, c.Value) {
			sel = append(sel, c.Label)
		}
	}
	l.levels.SetSelected(sel)
}

// chosenLevels are the checked levels' values, in the offered order.
func (l *labView) chosenLevels() []string {
	var out []string
	for _, c := range l.lab.Levels() {
		if slices.Contains(l.levels.Selected, c.Label) {
			out = append(out, c.Value)
		}
	}
	return out
}

func (l *labView) request() (LabRequest, error) {
	i := l.model.SelectedIndex()
	if i < 0 || i >= len(l.models) {
		return LabRequest{}, errors.New("pick a full-precision model first")
	}
	r := LabRequest{Model: l.models[i].Path, Levels: l.chosenLevels()}
	if len(r.Levels) == 0 {
		return r, errors.New("pick at least one level")
	}
	r.Ctx, _ = strconv.Atoi(l.ctxSel.Selected)
	r.MaxChunks, _ = strconv.Atoi(l.chunks.Selected) // "all" = 0
	if l.timeGen.Checked {
		r.GenTokens = 32
	}
	return r, nil
}

// start runs the Lab in the background.
func (l *labView) start() {
	r, err := l.request()
	if err != nil {
		setOptional(l.errMsg, err.Error())
		return
	}
	ctx, seq := l.job.begin()
	l.setRunning(true)
	setOptional(l.errMsg, "")
	l.bar.SetValue(0)
	l.stage.SetText("Starting…")
	go func() {
		rep, err := l.lab.Run(ctx, r, func(p LabProgress) { l.a.post(func() { l.progress(seq, p) }) })
		l.a.post(func() { l.finished(seq, rep, err) })
	}()
}

func (l *labView) stop() {
	if l.job.cancel != nil {
		l.job.cancel()
	}
}

func (l *labView) setRunning(on bool) {
	l.running = on
	setEnabled(l.run, !on)
	setEnabled(l.cancel, on)
	l.side.updateButtons()
}

func (l *labView) progress(seq int, p LabProgress) {
	if !l.job.current(seq) || !l.running {
		return
	}
	l.bar.SetValue(labFraction(p))
	l.stage.SetText(labStage(p))
}

// labFraction is the whole run's progress: the base counts as one more
// level, each level's stages by their share.
func labFraction(p LabProgress) float64 {
	steps := float64(p.Levels + 1)
	done := float64(p.Index + 1)
	if p.Stage == "done" {
		return 1
	}
	return min(1, (done+min(max(p.Frac, 0), 1))/steps)
}

func labStage(p LabProgress) string {
	if p.Index < 0 {
		return fmt.Sprintf("Evaluating the base model… %.0f%%", p.Frac*100)
	}
	verb := map[string]string{"load": "Quantizing", "eval": "Evaluating", "generate": "Timing generation of"}[p.Stage]
	if verb == "" {
		verb = p.Stage
	}
	return fmt.Sprintf("%s %s (%d of %d)… %.0f%%", verb, p.Level, p.Index+1, p.Levels, p.Frac*100)
}

func (l *labView) finished(seq int, rep LabReport, err error) {
	if !l.job.current(seq) {
		return
	}
	l.setRunning(false)
	switch {
	case errors.Is(err, context.Canceled):
		l.stage.SetText("Cancelled.")
		l.bar.SetValue(0)
	case err != nil:
		l.stage.SetText("")
		setOptional(l.errMsg, "The Lab failed: "+err.Error())
		l.a.status.SetMessage("Quantization Lab: "+err.Error(), true)
	default:
		l.bar.SetValue(1)
		l.show(rep)
	}
}

// show displays a report: summary, charts, table.
func (l *labView) show(rep LabReport) {
	l.report = &rep
	when := "computed now"
	if rep.Cached {
		when = "from the cache, computed " + rep.Created.Local().Format("2006-01-02 15:04")
	}
	l.summary.SetText(rep.Summary + " · " + when)
	l.stage.SetText(fmt.Sprintf("%d levels compared (%s).", len(rep.Rows), when))
	l.charts.RemoveAll()
	for _, c := range rep.Charts {
		img := canvas.NewImageFromImage(c.Image)
		img.FillMode = canvas.ImageFillContain
		img.ScaleMode = canvas.ImageScaleSmooth
		l.charts.Add(img)
	}
	l.table.Refresh()
	l.fitColumns()
	if i := slices.IndexFunc(l.models, func(m ModelInfo) bool { return m.Path == rep.Request.Model }); i >= 0 {
		l.model.SetSelectedIndex(i)
	}
	l.setLevels(rep.Request.Levels)
	l.side.updateButtons()
}

func (l *labView) tableSize() (int, int) {
	if l.report == nil {
		return 0, 0
	}
	return len(l.report.Rows), len(l.report.Header)
}

func (l *labView) tableCell(id widget.TableCellID, o fyne.CanvasObject) {
	lbl := o.(*widget.Label)
	lbl.SetText(l.report.Rows[id.Row][id.Col])
	lbl.Alignment = fyne.TextAlignLeading
	if id.Col < len(l.report.Right) && l.report.Right[id.Col] {
		lbl.Alignment = fyne.TextAlignTrailing
	}
}

func (l *labView) headerCell(id widget.TableCellID, o fyne.CanvasObject) {
	lbl := o.(*widget.Label)
	lbl.SetText("")
	if l.report != nil && id.Row < 0 && id.Col >= 0 && id.Col < len(l.report.Header) {
		lbl.SetText(l.report.Header[id.Col])
	}
}

// fitColumns sizes each column to its widest cell, the bold header
// included (measured as drawn: bold is wider than regular text).
func (l *labView) fitColumns() {
	for c, h := range l.report.Header {
		w := widget.NewLabelWithStyle(h, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}).MinSize().Width
		for _, row := range l.report.Rows {
			w = max(w, widget.NewLabel(row[c]).MinSize().Width)
		}
		l.table.SetColumnWidth(c, w+theme.Padding())
		l.colWidths = append(l.colWidths[:c], w+theme.Padding())
	}
}

// reopen shows the newest cached report, read off the UI goroutine.
func (l *labView) reopen() {
	go func() {
		rep, ok := l.lab.Last()
		l.a.post(func() {
			if ok && l.report == nil && !l.running {
				l.show(rep)
			}
		})
	}()
}

// sideView generates one prompt with every level of the report shown.
type sideView struct {
	l       *labView
	prompt  *widget.Entry
	seed    *widget.Entry
	temp    *widget.Select
	gen     *widget.Button
	state   *widget.Label
	rows    *fyne.Container
	job     task
	busy    bool
	content fyne.CanvasObject
}

func newSideView(l *labView) *sideView {
	s := &sideView{l: l, prompt: widget.NewEntry(), seed: widget.NewEntry(), state: helpLabel(""), rows: container.NewVBox()}
	s.prompt.SetText("Once upon a time, there was a little")
	s.seed.SetText("42")
	s.temp = widget.NewSelect([]string{"greedy", "0.7", "1.0"}, nil)
	s.temp.SetSelected("greedy")
	s.gen = widget.NewButtonWithIcon("Generate", theme.MediaPlayIcon(), s.start)
	s.state.SetText("The same prompt, sampler and seed for every level; words that differ from the base are highlighted.")
	opts := container.NewHBox(widget.NewLabel("Temperature"), s.temp, widget.NewLabel("Seed"), container.NewGridWrap(fyne.NewSize(80, 36), s.seed), s.gen)
	top := container.NewVBox(container.NewBorder(nil, nil, widget.NewLabel("Prompt"), nil, s.prompt), opts, s.state)
	s.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(s.rows))
	s.updateButtons()
	return s
}

func (s *sideView) updateButtons() {
	setEnabled(s.gen, !s.busy && !s.l.running && s.l.report != nil)
}

func (s *sideView) request() (SideRequest, error) {
	rep := s.l.report
	r := SideRequest{Model: rep.Request.Model, Levels: rep.Request.Levels, Prompt: strings.TrimSpace(s.prompt.Text), Tokens: 40}
	if r.Prompt == "" {
		return r, errors.New("type a prompt first")
	}
	seed, err := strconv.ParseUint(strings.TrimSpace(s.seed.Text), 10, 64)
	if err != nil {
		return r, errors.New("the seed is a whole number")
	}
	r.Seed = seed
	if t, err := strconv.ParseFloat(s.temp.Selected, 32); err == nil {
		r.Temperature = float32(t)
	}
	return r, nil
}

func (s *sideView) start() {
	if s.l.report == nil {
		return
	}
	r, err := s.request()
	if err != nil {
		s.state.SetText(err.Error())
		return
	}
	ctx, seq := s.job.begin()
	s.busy = true
	s.updateButtons()
	s.state.SetText("Generating with the base model…")
	go func() {
		res, err := s.l.lab.Side(ctx, r, func(p LabProgress) {
			s.l.a.post(func() {
				if s.job.current(seq) && p.Index >= 0 {
					s.state.SetText(fmt.Sprintf("Generating with %s (%d of %d)…", p.Level, p.Index+1, p.Levels))
				}
			})
		})
		s.l.a.post(func() { s.finished(seq, res, err) })
	}()
}

func (s *sideView) finished(seq int, res SideResult, err error) {
	if !s.job.current(seq) {
		return
	}
	s.busy = false
	s.updateButtons()
	if err != nil {
		s.state.SetText("⚠ " + err.Error())
		return
	}
	s.state.SetText(fmt.Sprintf("%d rows; red words differ from the base.", len(res.Rows)))
	if res.Cached {
		s.state.SetText(s.state.Text + " (from the cache)")
	}
	s.rows.RemoveAll()
	for _, r := range res.Rows {
		s.rows.Add(sideRow(r))
	}
}

// sideRow is a level's header and its text with the diverging words in
// the error colour, bold.
func sideRow(r SideRow) fyne.CanvasObject {
	head := widget.NewLabelWithStyle(r.Level+" · "+r.Note, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	text := widget.NewRichText(sideSegments(r.Spans)...)
	text.Wrapping = fyne.TextWrapWord
	return container.NewVBox(head, text, widget.NewSeparator())
}

func sideSegments(spans []SideSpan) []widget.RichTextSegment {
	var segs []widget.RichTextSegment
	for _, sp := range spans {
		style := widget.RichTextStyleInline
		if sp.Changed {
			style.ColorName = theme.ColorNameError
			style.TextStyle = fyne.TextStyle{Bold: true}
		}
		segs = append(segs, &widget.TextSegment{Text: sp.Text, Style: style})
	}
	return segs
}
