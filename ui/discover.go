package ui

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// discoverView is the Discover screen: the curated catalog first, a hub
// search with sort and library filter and more pages on demand, and a
// repository's downloadable models with their sizes and, from each GGUF
// header read over range requests, a fits / tight / does not fit badge.
// Every field is owned by the UI goroutine.
type discoverView struct {
	a   *App
	hub Hub

	query   *widget.Entry
	sortSel *widget.Select
	libSel  *widget.Select
	heading *widget.Label
	results *resultList
	more    *widget.Button
	next    string
	search  task // the search or page being fetched

	repo    *repoView
	content fyne.CanvasObject
}

// task is background work whose answer only counts while it is the
// newest: starting another cancels it and makes its answer stale.
type task struct {
	seq    int
	cancel context.CancelFunc
}

// begin cancels the work under way and returns the new work's context
// and number.
func (t *task) begin() (context.Context, int) {
	if t.cancel != nil {
		t.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.seq++
	t.cancel = cancel
	return ctx, t.seq
}

// current reports whether seq is still the newest work.
func (t *task) current(seq int) bool { return seq == t.seq }

var (
	sortLabels = []string{"Most downloads", "Most likes", "Recently updated", "Trending"}
	sortValues = []string{SortDownloads, SortLikes, SortUpdated, SortTrending}
	libLabels  = []string{"GGUF", "safetensors", "Any format"}
	libValues  = []string{"gguf", "safetensors", ""}
)

func newDiscoverView(a *App, h Hub) *discoverView {
	d := &discoverView{a: a, hub: h}
	d.query = widget.NewEntry()
	d.query.SetPlaceHolder("Search the Hugging Face hub: llama, qwen 0.5b, smollm…")
	d.query.OnSubmitted = func(string) { d.runSearch() }
	d.sortSel = widget.NewSelect(sortLabels, nil)
	d.sortSel.SetSelectedIndex(0)
	d.sortSel.OnChanged = func(string) { d.researchIfShown() }
	d.libSel = widget.NewSelect(libLabels, nil)
	d.libSel.SetSelectedIndex(0)
	d.libSel.OnChanged = func(string) { d.researchIfShown() }
	searchBtn := widget.NewButtonWithIcon("Search", theme.SearchIcon(), d.runSearch)
	searchBtn.Importance = widget.HighImportance
	d.heading = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	d.heading.Wrapping = fyne.TextWrapWord
	d.results = newResultList(d.open)
	d.more = widget.NewButtonWithIcon("More results", theme.MoreVerticalIcon(), d.loadMore)
	d.more.Hide()
	d.repo = newRepoView(a, h)
	sh := d.sortSel.MinSize().Height
	selects := container.NewHBox(container.NewGridWrap(fyne.NewSize(190, sh), d.sortSel), container.NewGridWrap(fyne.NewSize(150, sh), d.libSel))
	bar := container.NewBorder(nil, nil, nil, container.NewHBox(selects, searchBtn), d.query)
	left := container.NewBorder(d.heading, d.more, nil, nil, d.results.list)
	split := container.NewHSplit(left, d.repo.content)
	split.Offset = 0.42
	d.content = container.NewBorder(container.NewPadded(bar), nil, nil, nil, split)
	d.showCatalog()
	return d
}

// showCatalog lists the curated models: what a new user sees first.
func (d *discoverView) showCatalog() {
	d.search.begin()
	d.heading.SetText("Recommended first models: small chat models that run on a laptop. Pick one, or search the hub above.")
	d.results.setCatalog(d.hub.Catalog())
	d.next = ""
	d.more.Hide()
}

func (d *discoverView) researchIfShown() {
	if !d.results.catalogShown() {
		d.runSearch()
	}
}

func (d *discoverView) currentQuery() HubQuery {
	q := HubQuery{Text: strings.TrimSpace(d.query.Text), Sort: SortDownloads, Library: "gguf"}
	if i := d.sortSel.SelectedIndex(); i >= 0 {
		q.Sort = sortValues[i]
	}
	if i := d.libSel.SelectedIndex(); i >= 0 {
		q.Library = libValues[i]
	}
	return q
}

// runSearch fetches the first page of results off the UI goroutine; an
// empty query shows the catalog again.
func (d *discoverView) runSearch() {
	q := d.currentQuery()
	if q.Text == "" {
		d.showCatalog()
		return
	}
	ctx, seq := d.search.begin()
	d.heading.SetText(fmt.Sprintf("Searching for “%s”…", q.Text))
	d.more.Hide()
	go func() {
		page, err := d.hub.Search(ctx, q)
		d.a.post(func() { d.showPage(seq, q.Text, page, err, false) })
	}()
}

// loadMore appends the next page.
func (d *discoverView) loadMore() {
	if d.next == "" {
		return
	}
	next, text := d.next, strings.TrimSpace(d.query.Text)
	ctx, seq := d.search.begin()
	d.more.Disable()
	go func() {
		page, err := d.hub.More(ctx, next)
		d.a.post(func() { d.showPage(seq, text, page, err, true) })
	}()
}

func (d *discoverView) showPage(seq int, text string, page HubPage, err error, appended bool) {
	if !d.search.current(seq) {
		return
	}
	d.more.Enable()
	if err != nil {
		d.heading.SetText("Search failed: " + err.Error())
		return
	}
	models := page.Models
	if appended {
		models = append(slices.Clone(d.results.models), models...)
	}
	d.results.setModels(models)
	d.next = page.Next
	setVisible(d.more, d.next != "")
	switch {
	case len(models) == 0:
		d.heading.SetText(fmt.Sprintf("No models match “%s”. Try fewer words, or another format.", text))
	case d.next != "":
		d.heading.SetText(fmt.Sprintf("%d models for “%s” (more below)", len(models), text))
	default:
		d.heading.SetText(fmt.Sprintf("%d models for “%s”", len(models), text))
	}
}

// open shows row i's repository: a search result, or a catalog entry with
// its recommended file selected.
func (d *discoverView) open(i int) {
	if d.results.catalogShown() {
		e := d.results.catalog[i]
		d.repo.open(e.Repo, e.File, false)
		return
	}
	m := d.results.models[i]
	d.repo.open(m.ID, "", m.Gated)
}

func setVisible(o fyne.CanvasObject, on bool) {
	if on {
		o.Show()
	} else {
		o.Hide()
	}
}

// resultList shows either the catalog or search results.
type resultList struct {
	catalog   []CatalogEntry
	models    []HubModel
	isCatalog bool
	list      *widget.List
}

func newResultList(open func(int)) *resultList {
	r := &resultList{}
	r.list = widget.NewList(r.length, twoLineRow, r.update)
	r.list.OnSelected = func(i widget.ListItemID) { open(i) }
	return r
}

func (r *resultList) catalogShown() bool { return r.isCatalog }

func (r *resultList) setCatalog(c []CatalogEntry) {
	r.catalog, r.models, r.isCatalog = c, nil, true
	r.list.UnselectAll()
	r.list.Refresh()
}

func (r *resultList) setModels(m []HubModel) {
	r.models, r.isCatalog = m, false
	r.list.UnselectAll()
	r.list.Refresh()
}

func (r *resultList) length() int {
	if r.isCatalog {
		return len(r.catalog)
	}
	return len(r.models)
}

// twoLineRow is a bold title over a caption.
func twoLineRow() fyne.CanvasObject {
	name := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	name.Truncation = fyne.TextTruncateEllipsis
	sub := widget.NewLabel("")
	sub.SizeName = theme.SizeNameCaptionText
	sub.Truncation = fyne.TextTruncateEllipsis
	return container.NewVBox(name, sub)
}

func setTwoLine(o fyne.CanvasObject, title, caption string) {
	box := o.(*fyne.Container)
	box.Objects[0].(*widget.Label).SetText(title)
	box.Objects[1].(*widget.Label).SetText(caption)
}

func (r *resultList) update(i widget.ListItemID, o fyne.CanvasObject) {
	if r.isCatalog {
		e := r.catalog[i]
		setTwoLine(o, e.Name, catalogCaption(e))
		return
	}
	setTwoLine(o, r.models[i].ID, modelCaption(r.models[i]))
}

// catalogCaption: parameters · quant · size · licence — description.
func catalogCaption(e CatalogEntry) string {
	parts := []string{e.Params + " params", e.Quant, "≈" + humanBytes(uint64(e.Size)), e.License}
	return strings.Join(parts, " · ") + " — " + e.Description
}

// modelCaption: downloads · likes · last update · gated.
func modelCaption(m HubModel) string {
	parts := []string{humanCount(m.Downloads) + " downloads", humanCount(m.Likes) + " likes"}
	if !m.Updated.IsZero() {
		parts = append(parts, "updated "+m.Updated.Format("2006-01-02"))
	}
	if m.Gated {
		parts = append(parts, "gated: needs a token")
	}
	return strings.Join(parts, " · ")
}

// repoView is a repository's downloadable models, the selected one's fit
// and the download button.
type repoView struct {
	a   *App
	hub Hub

	repo     string
	files    []RemoteFile
	fits     map[fitKey]FitReport
	selected int
	listing  task
	fitting  task

	title    *widget.Label
	link     *widget.Hyperlink
	state    *widget.Label // listing…, or why the list is empty
	list     *widget.List
	gated    *gatedNote
	badge    *widget.Label
	numbers  *widget.Label
	ctxSel   *widget.Select
	download *widget.Button
	started  *widget.Label
	content  fyne.CanvasObject
}

// fitKey is a fit report's cache key: the verdict depends on the context.
type fitKey struct {
	selector string
	ctx      int
}

var fitContexts = []string{"2048", "4096", "8192", "16384", "32768"}

func newRepoView(a *App, h Hub) *repoView {
	r := &repoView{a: a, hub: h, selected: -1, fits: map[fitKey]FitReport{}}
	r.title = widget.NewLabelWithStyle("Select a model to see its files.", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.title.Wrapping = fyne.TextWrapWord
	r.link = widget.NewHyperlink("", nil)
	r.link.Hide()
	r.state = helpLabel("")
	r.list = widget.NewList(func() int { return len(r.files) }, fileRow, r.updateRow)
	r.list.OnSelected = r.choose
	r.gated = newGatedNote()
	r.badge = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.numbers = widget.NewLabel("")
	r.numbers.Wrapping = fyne.TextWrapWord
	r.ctxSel = widget.NewSelect(fitContexts, nil)
	r.ctxSel.SetSelected("4096")
	r.ctxSel.OnChanged = func(string) { r.checkFit() }
	r.download = widget.NewButtonWithIcon("Download", theme.DownloadIcon(), r.startDownload)
	r.download.Importance = widget.HighImportance
	r.download.Disable()
	r.started = helpLabel("")
	top := container.NewVBox(r.title, r.link, r.state, r.gated.content)
	fit := container.NewVBox(widget.NewSeparator(), r.badge, r.numbers,
		container.NewBorder(nil, nil, widget.NewLabel("Context for the estimate"), nil, r.ctxSel),
		container.NewHBox(r.download), r.started)
	r.content = container.NewBorder(top, fit, nil, nil, r.list)
	return r
}

// fileRow: quant and name on the left; size and fit badge on the right.
func fileRow() fyne.CanvasObject {
	name := widget.NewLabel("")
	name.Truncation = fyne.TextTruncateEllipsis
	size := widget.NewLabel("")
	badge := widget.NewLabelWithStyle("", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
	return container.NewBorder(nil, nil, nil, container.NewHBox(size, container.NewGridWrap(fyne.NewSize(110, 36), badge)), name)
}

func (r *repoView) updateRow(i widget.ListItemID, o fyne.CanvasObject) {
	f := r.files[i]
	box := o.(*fyne.Container)
	box.Objects[0].(*widget.Label).SetText(fileTitle(f))
	right := box.Objects[1].(*fyne.Container)
	right.Objects[0].(*widget.Label).SetText(humanBytes(uint64(f.Size)))
	badge := right.Objects[1].(*fyne.Container).Objects[0].(*widget.Label)
	rep, ok := r.fits[fitKey{f.Selector, r.contextLen()}]
	badge.SetText("")
	if ok {
		badge.Importance = fitImportance(rep.Verdict)
		badge.SetText(rep.Verdict)
	}
}

// fileTitle: "Q4_K_M · name (3 files) ★ recommended".
func fileTitle(f RemoteFile) string {
	s := f.Name
	if f.Quant != "" {
		s = f.Quant + " · " + s
	}
	if f.Kind != "gguf" {
		s += " [" + f.Kind + "]"
	}
	if f.Files > 1 {
		s += fmt.Sprintf(" (%d files)", f.Files)
	}
	if !f.Complete {
		s += " (incomplete)"
	}
	if f.Recommended {
		s += " ★ recommended"
	}
	return s
}

func fitImportance(v string) widget.Importance {
	switch v {
	case Fits:
		return widget.SuccessImportance
	case FitTight:
		return widget.WarningImportance
	case FitNo:
		return widget.DangerImportance
	}
	return widget.LowImportance
}

func (r *repoView) contextLen() int {
	n := 4096
	fmt.Sscan(r.ctxSel.Selected, &n)
	return n
}

// open lists repo's files off the UI goroutine and selects want (a
// Selector), else the recommended one.
func (r *repoView) open(repo, want string, gated bool) {
	ctx, seq := r.listing.begin()
	r.fitting.begin()
	r.repo, r.files, r.selected = repo, nil, -1
	r.list.UnselectAll()
	r.list.Refresh()
	r.title.SetText(repo)
	r.setLink(r.hub.ModelPage(repo))
	r.gated.hide()
	setOptional(r.state, "Listing files…")
	if gated {
		setOptional(r.state, "Listing files… (this model is gated: the hub may ask for a token)")
	}
	r.showFit(nil, "")
	r.started.SetText("")
	go func() {
		files, err := r.hub.Files(ctx, repo)
		r.a.post(func() { r.setFiles(seq, files, err, want) })
	}()
}

func (r *repoView) setLink(page string) {
	u, err := url.Parse(page)
	if page == "" || err != nil {
		r.link.Hide()
		return
	}
	r.link.SetText("Open " + r.repo + " on the hub")
	r.link.SetURL(u)
	r.link.Show()
}

func (r *repoView) setFiles(seq int, files []RemoteFile, err error, want string) {
	if !r.listing.current(seq) {
		return
	}
	if err != nil {
		r.showError("Listing "+r.repo, err)
		return
	}
	r.files = files
	r.list.Refresh()
	if len(files) == 0 {
		setOptional(r.state, "This repository has no model files flowchat can download.")
		return
	}
	setOptional(r.state, fmt.Sprintf("%d downloadable models. The badge says whether one fits in free memory (from its header, read without downloading it).", len(files)))
	pick := slices.IndexFunc(files, func(f RemoteFile) bool { return f.Selector == want || f.Name == want })
	if pick < 0 {
		pick = slices.IndexFunc(files, func(f RemoteFile) bool { return f.Recommended })
	}
	if pick >= 0 {
		r.list.Select(pick)
	}
}

// showError explains a gated model in the window; other errors go to the
// state line and the status bar.
func (r *repoView) showError(what string, err error) {
	var g *GatedError
	if errors.As(err, &g) {
		setOptional(r.state, "")
		r.gated.show(g)
		r.a.status.SetMessage(what+": the model is gated", true)
		return
	}
	setOptional(r.state, "⚠ "+what+": "+err.Error())
	r.a.status.SetMessage(what+": "+err.Error(), true)
}

func (r *repoView) choose(i widget.ListItemID) {
	r.selected = i
	r.started.SetText("")
	r.checkFit()
}

// checkFit shows the selected model's fit, reading its header in the
// background the first time.
func (r *repoView) checkFit() {
	if r.selected < 0 || r.selected >= len(r.files) {
		r.download.Disable()
		return
	}
	f := r.files[r.selected]
	setEnabled(r.download, f.Complete)
	if f.Kind != "gguf" {
		r.fitting.begin()
		r.showFit(nil, "No fit estimate: it is read from GGUF headers, and this is a "+f.Kind+" model.")
		return
	}
	key := fitKey{f.Selector, r.contextLen()}
	if rep, ok := r.fits[key]; ok {
		r.fitting.begin() // another row's answer is stale now
		r.showFit(&rep, "")
		return
	}
	ctx, seq := r.fitting.begin()
	r.showFit(nil, "Reading the header of "+f.Name+"…")
	go func() {
		rep, err := r.hub.Fit(ctx, f, key.ctx)
		r.a.post(func() { r.setFit(seq, key, rep, err) })
	}()
}

func (r *repoView) setFit(seq int, key fitKey, rep FitReport, err error) {
	if !r.fitting.current(seq) {
		return
	}
	if err != nil {
		var g *GatedError
		if errors.As(err, &g) {
			r.gated.show(g)
		}
		r.showFit(nil, "Could not read the header: "+err.Error())
		return
	}
	r.fits[key] = rep
	r.list.Refresh()
	r.showFit(&rep, "")
}

// showFit shows a verdict with its numbers, or a note when there is none.
func (r *repoView) showFit(rep *FitReport, note string) {
	if rep == nil {
		r.badge.SetText("")
		r.numbers.SetText(note)
		return
	}
	r.badge.Importance = fitImportance(rep.Verdict)
	r.badge.SetText(strings.ToUpper(rep.Verdict[:1]) + rep.Verdict[1:])
	r.numbers.SetText(fmt.Sprintf("%s\n%s · %s parameters · %d layers · trained context %s tokens",
		rep.Numbers, rep.Arch, humanCount(int64(rep.Params)), rep.Layers, groupDigits(int(rep.ContextTrain))))
}

func (r *repoView) startDownload() {
	if r.selected < 0 || r.a.downloads == nil {
		return
	}
	f := r.files[r.selected]
	if _, err := r.a.downloads.start(f); err != nil {
		r.showError("Downloading "+f.Name, err)
		return
	}
	r.started.SetText("Downloading " + f.Name + ": follow it in the Downloads tab.")
}

// gatedNote explains what to do about a gated model, with its page.
type gatedNote struct {
	title   *widget.Label
	message *widget.Label
	link    *widget.Hyperlink
	content *fyne.Container
}

func newGatedNote() *gatedNote {
	g := &gatedNote{
		title:   widget.NewLabelWithStyle("This model is gated", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		message: widget.NewLabel(""),
		link:    widget.NewHyperlink("Open the model page to accept its licence", nil),
	}
	g.title.Importance = widget.WarningImportance
	g.message.Wrapping = fyne.TextWrapWord
	steps := helpLabel("Its authors ask you to accept a licence before downloading. 1. Open the model page, log in and accept it (access can take a while to be granted). 2. Make a read token in your Hugging Face settings. 3. Set HF_TOKEN to it, or save it in the token file, and restart flowchat.")
	g.content = container.NewVBox(container.NewHBox(widget.NewIcon(theme.WarningIcon()), g.title), g.message, steps, g.link)
	g.content.Hide()
	return g
}

func (g *gatedNote) show(e *GatedError) {
	g.message.SetText(e.Message)
	if u, err := url.Parse(e.Page); e.Page != "" && err == nil {
		g.link.SetURL(u)
		g.link.Show()
	} else {
		g.link.Hide()
	}
	g.content.Show()
}

func (g *gatedNote) hide() { g.content.Hide() }
