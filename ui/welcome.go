package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// welcomeContext is the context length the welcome screen's fit badges
// assume: a conversation of a few thousand tokens.
const welcomeContext = 4096

// welcomeView is the first-start screen: what the bundled demo is, and the
// catalog's chat models that fit this machine, each one click from a chat.
type welcomeView struct {
	a       *App
	content fyne.CanvasObject
	demoBtn *widget.Button
	state   *widget.Label // checking, offline, or how many fit
	list    *fyne.Container
	rows    []*welcomeRow // the catalog entries that fit, best first
	pending string        // the download job whose end opens a chat
	pendRow *welcomeRow   // its row
	dlg     dialog.Dialog
	cancel  context.CancelFunc
}

// welcomeRow is one catalog model offered for download.
type welcomeRow struct {
	entry    CatalogEntry
	file     RemoteFile
	fit      FitReport
	badge    *widget.Label
	get      *widget.Button
	progress *widget.ProgressBar
	note     *widget.Label
	content  fyne.CanvasObject
}

const welcomeDemoText = "The bundled demo model (stories260K) is a tiny story model: it continues the text you type, " +
	"it does not chat. It is here so that the app works at once, offline."

func newWelcomeView(a *App) *welcomeView {
	w := &welcomeView{a: a, state: widget.NewLabel(""), list: container.NewVBox()}
	w.state.Wrapping = fyne.TextWrapWord
	demo := widget.NewLabel(welcomeDemoText)
	demo.Wrapping = fyne.TextWrapWord
	w.demoBtn = widget.NewButtonWithIcon("Try the demo", theme.MediaPlayIcon(), w.tryDemo)
	title := widget.NewLabelWithStyle("Welcome to flowchat", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	intro := widget.NewLabel("flowchat runs language models on this computer: nothing you type leaves it.")
	intro.Wrapping = fyne.TextWrapWord
	chatHead := widget.NewLabelWithStyle("Chat models that fit this computer", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	top := container.NewVBox(title, intro, widget.NewSeparator(), demo, container.NewHBox(w.demoBtn), widget.NewSeparator(), chatHead, w.state)
	w.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(w.list))
	return w
}

// check asks the hub which catalog models fit, off the UI goroutine. The
// first failure ends the check: offline, every other request would fail
// the same way.
func (w *welcomeView) check() {
	hub := w.a.deps.Hub
	if hub == nil {
		w.state.SetText("Model downloads are not available in this build.")
		return
	}
	w.state.SetText("Checking which of the recommended models fit this computer…")
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	entries := hub.Catalog()
	go func() {
		for _, e := range entries {
			f, rep, err := fitEntry(ctx, hub, e)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.a.post(func() { w.failed(err) })
				return
			}
			w.a.post(func() { w.add(e, f, rep) })
		}
		w.a.post(w.checked)
	}()
}

// fitEntry finds e's file among its repository's and reads its fit.
func fitEntry(ctx context.Context, hub Hub, e CatalogEntry) (RemoteFile, FitReport, error) {
	files, err := hub.Files(ctx, e.Repo)
	if err != nil {
		return RemoteFile{}, FitReport{}, err
	}
	i := slices.IndexFunc(files, func(f RemoteFile) bool { return f.Selector == e.File })
	if i < 0 {
		return RemoteFile{}, FitReport{Verdict: FitUnknown}, nil
	}
	rep, err := hub.Fit(ctx, files[i], welcomeContext)
	return files[i], rep, err
}

func (w *welcomeView) failed(err error) {
	msg := err.Error()
	if !strings.Contains(msg, "demo model") { // the hub's offline sentence names it already
		msg += "\nThe demo model above works offline."
	}
	w.state.SetText(msg)
}

// add shows e when it fits, keeping the list best first: models that fit
// before tight ones, and among them the larger (more capable) first.
func (w *welcomeView) add(e CatalogEntry, f RemoteFile, rep FitReport) {
	if rep.Verdict != Fits && rep.Verdict != FitTight {
		return
	}
	r := w.newRow(e, f, rep)
	w.rows = append(w.rows, r)
	slices.SortStableFunc(w.rows, func(x, y *welcomeRow) int {
		if (x.fit.Verdict == Fits) != (y.fit.Verdict == Fits) {
			if x.fit.Verdict == Fits {
				return -1
			}
			return 1
		}
		return int(y.file.Size>>20) - int(x.file.Size>>20)
	})
	w.list.Objects = w.list.Objects[:0]
	for _, r := range w.rows {
		w.list.Add(r.content)
	}
	w.list.Refresh()
}

func (w *welcomeView) checked() {
	if len(w.rows) == 0 {
		w.state.SetText("None of the recommended chat models fits this computer's free memory; the Discover tab searches for smaller ones.")
		return
	}
	w.state.SetText("One click downloads a model (resumable, verified) and opens it in a new chat.")
}

func (w *welcomeView) newRow(e CatalogEntry, f RemoteFile, rep FitReport) *welcomeRow {
	r := &welcomeRow{entry: e, file: f, fit: rep, badge: widget.NewLabel(rep.Verdict), progress: widget.NewProgressBar(), note: widget.NewLabel("")}
	r.badge.Importance = widget.SuccessImportance
	if rep.Verdict == FitTight {
		r.badge.Importance = widget.WarningImportance
	}
	r.get = widget.NewButtonWithIcon("Download and chat", theme.DownloadIcon(), func() { w.download(r) })
	r.progress.Hide()
	r.note.Hide()
	r.note.Wrapping = fyne.TextWrapWord
	name := widget.NewLabelWithStyle(e.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	info := widget.NewLabel(fmt.Sprintf("%s params · %s · %s", e.Params, f.Quant, humanBytes(uint64(f.Size))))
	desc := widget.NewLabel(e.Description)
	desc.Wrapping = fyne.TextWrapWord
	r.content = container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewHBox(r.badge, r.get), container.NewHBox(name, info)),
		desc, r.progress, r.note, widget.NewSeparator())
	return r
}

// download starts r's model; its end opens it in a new chat (jobChanged).
func (w *welcomeView) download(r *welcomeRow) {
	if w.a.downloads == nil {
		return
	}
	j, err := w.a.downloads.start(r.file)
	if err != nil {
		setOptional(r.note, "⚠ "+err.Error())
		return
	}
	w.pending, w.pendRow = j.ID, r
	for _, x := range w.rows {
		x.get.Disable()
	}
	r.progress.Show()
	w.jobChanged(j)
}

// jobChanged follows the pending download: progress, then a new chat on
// the model once it is complete.
func (w *welcomeView) jobChanged(j DownloadJob) {
	if j.ID != w.pending {
		return
	}
	r := w.pendRow
	if j.Total > 0 {
		r.progress.SetValue(float64(j.Done) / float64(j.Total))
	}
	switch j.State {
	case JobDone:
		w.pending = ""
		w.close()
		w.a.newConversation()
		w.a.loadModel(j.Path, LoadOptions{})
	case JobFailed, JobCanceled, JobPaused, JobRetrying:
		setOptional(r.note, fmt.Sprintf("Download %s. %s", j.State, j.Err))
		if j.State != JobRetrying {
			w.pending = ""
			for _, x := range w.rows {
				x.get.Enable()
			}
		}
	}
}

// tryDemo loads the bundled demo (if another model is loaded) in a new chat.
func (w *welcomeView) tryDemo() {
	w.close()
	w.a.newConversation()
	if d := w.a.deps.DefaultModel; d != "" && (w.a.modelPath != d || w.a.engine == nil) && !w.a.loading {
		w.a.loadModel(d, LoadOptions{})
	}
	w.a.chat.input.SetPlaceHolder("Type the start of a story, e.g. \"Once upon a time\" (the demo continues text)")
}

func (w *welcomeView) close() {
	if w.dlg != nil {
		w.dlg.Hide()
	}
}

// showWelcome opens the welcome screen (Help ▸ Welcome, and once at the
// first start when Deps.Welcome is set).
func (a *App) showWelcome() {
	if a.welcome != nil && a.welcome.cancel != nil {
		a.welcome.cancel()
	}
	a.welcome = newWelcomeView(a)
	a.welcome.check()
	if a.win == nil {
		return
	}
	d := dialog.NewCustom("Welcome", "Close", a.welcome.content, a.win)
	d.Resize(fyne.NewSize(760, 600))
	a.welcome.dlg = d
	d.Show()
}

// welcomeOnce shows the welcome screen at the first start.
func (a *App) welcomeOnce() {
	if !a.deps.Welcome || a.settings.WelcomeShown {
		return
	}
	a.settings.WelcomeShown = true
	a.saveSettings()
	a.showWelcome()
}
