package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/store"
)

// modelPanel lists the local models with what their headers say, and
// loads, unloads and opens them. Errors show in the panel and in a dialog.
type modelPanel struct {
	a        *App
	models   []ModelInfo
	selected int

	list     *widget.List
	details  *widget.Label
	loadBtn  *widget.Button
	unload   *widget.Button
	progress *widget.ProgressBarInfinite
	state    *widget.Label // what is loaded, or loading
	errLabel *widget.Label
	gpu      *widget.Label
	bottom   *fyne.Container
	// shown and shownLoad are the load dialog on screen and its Load
	// button (for tests).
	shown     *loadDialog
	shownLoad *widget.Button
	content   fyne.CanvasObject
}

func newModelPanel(a *App) *modelPanel {
	m := &modelPanel{a: a, selected: -1, details: widget.NewLabel("Select a model."), state: widget.NewLabel("No model loaded."),
		errLabel: widget.NewLabel(""), progress: widget.NewProgressBarInfinite(), gpu: helpLabel("")}
	m.details.Wrapping = fyne.TextWrapWord
	m.state.Wrapping = fyne.TextWrapWord
	m.errLabel.Importance = widget.DangerImportance
	m.errLabel.Wrapping = fyne.TextWrapWord
	m.errLabel.Hide()
	m.progress.Hide()
	m.list = widget.NewList(func() int { return len(m.models) }, m.newRow, m.updateRow)
	m.list.OnSelected = m.choose
	m.loadBtn = widget.NewButtonWithIcon("Load…", theme.UploadIcon(), func() { m.showLoadDialog() })
	m.loadBtn.Importance = widget.HighImportance
	m.loadBtn.Disable()
	m.unload = widget.NewButtonWithIcon("Unload", theme.CancelIcon(), a.unloadModel)
	m.unload.Disable()
	open := widget.NewButtonWithIcon("Open file…", theme.FolderOpenIcon(), m.openFile)
	rescan := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), m.refresh)
	top := container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewHBox(rescan, open), widget.NewLabelWithStyle("Local models", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})),
	)
	m.bottom = container.NewVBox(widget.NewSeparator(), m.details, container.NewHBox(m.loadBtn, m.unload),
		m.progress, m.state, m.errLabel, m.gpu)
	// The list and the lower part share the height (the lower part
	// scrolls), so the list keeps rows when the server switch and its URL
	// sit below.
	split := container.NewVSplit(container.NewBorder(top, nil, nil, nil, m.list), container.NewVScroll(m.bottom))
	split.Offset = 0.62
	m.content = split
	return m
}

// addServer puts the local server's switch under the model's state.
func (m *modelPanel) addServer(o fyne.CanvasObject) { m.bottom.Add(o) }

func (m *modelPanel) newRow() fyne.CanvasObject {
	name := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	name.Truncation = fyne.TextTruncateEllipsis
	sub := widget.NewLabel("")
	sub.SizeName = theme.SizeNameCaptionText
	sub.Truncation = fyne.TextTruncateEllipsis
	return container.NewVBox(name, sub)
}

func (m *modelPanel) updateRow(i widget.ListItemID, o fyne.CanvasObject) {
	info := m.models[i]
	box := o.(*fyne.Container)
	name := info.Name
	if info.Path == m.a.modelPath && m.a.engine != nil {
		name = "● " + name
	}
	box.Objects[0].(*widget.Label).SetText(name)
	box.Objects[1].(*widget.Label).SetText(modelSummary(info))
}

// modelSummary is one line: architecture · parameters · quantization · size.
func modelSummary(i ModelInfo) string {
	parts := []string{i.Arch, humanCount(i.Params) + " params", i.Quant, humanBytes(uint64(i.FileSize))}
	if i.Bundled {
		parts = append(parts, "bundled")
	}
	return strings.Join(parts, " · ")
}

func modelDetails(i ModelInfo) string {
	return fmt.Sprintf("%s\nArchitecture %s · %s parameters · %d layers\nQuantization %s · file %s\nTrained context %s tokens\n%s",
		i.Name, i.Arch, humanCount(i.Params), i.Layers, i.Quant, humanBytes(uint64(i.FileSize)), groupDigits(i.ContextTrain), i.Path)
}

// refresh lists the local models again, off the UI goroutine.
func (m *modelPanel) refresh() {
	extra := slices.Clone(m.a.settings.ModelFiles)
	gpu := m.a.lib.GPU()
	go func() {
		models, err := m.a.lib.Models()
		for _, p := range extra {
			if slices.ContainsFunc(models, func(x ModelInfo) bool { return x.Path == p }) {
				continue
			}
			if info, err := m.a.lib.Describe(p); err == nil {
				models = append(models, info)
			}
		}
		m.a.post(func() { m.setModels(models, err, gpu) })
	}()
}

func (m *modelPanel) setModels(models []ModelInfo, err error, gpu GPUStatus) {
	m.models = models
	if m.a.lab != nil {
		m.a.lab.setModels(models)
	}
	m.list.UnselectAll()
	m.selected = -1
	m.list.Refresh()
	if err != nil {
		m.setError(fmt.Errorf("listing models: %w", err))
	}
	if gpu.Usable {
		m.gpu.SetText("GPU: " + deviceNames(gpu))
	} else {
		m.gpu.SetText("GPU offload unavailable: " + gpu.Reason)
	}
	if i := slices.IndexFunc(models, func(x ModelInfo) bool { return x.Path == m.a.modelPath }); i >= 0 {
		m.list.Select(i)
	}
}

func (m *modelPanel) choose(i widget.ListItemID) {
	m.selected = i
	m.details.SetText(modelDetails(m.models[i]))
	m.updateButtons()
}

// showLoaded selects the loaded model in the list, so that the panel
// describes it (and Load can reload it with other options); a model loaded
// from outside the list is described without a selection.
func (m *modelPanel) showLoaded(info ModelInfo) {
	m.list.Refresh() // the ● marker
	if i := slices.IndexFunc(m.models, func(x ModelInfo) bool { return x.Path == m.a.modelPath }); i >= 0 {
		m.list.Select(i)
		return
	}
	if m.selected < 0 {
		m.details.SetText(modelDetails(info))
	}
}

func (m *modelPanel) updateButtons() {
	setEnabled(m.loadBtn, m.selected >= 0 && !m.a.loading)
	setEnabled(m.unload, m.a.engine != nil && !m.a.loading)
}

func (m *modelPanel) setError(err error) {
	if err == nil {
		setOptional(m.errLabel, "")
		return
	}
	setOptional(m.errLabel, "⚠ "+err.Error())
}

// openFile asks for a model file and adds it to the list.
func (m *modelPanel) openFile() {
	if m.a.win == nil {
		return
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		m.AddFile(r.URI().Path())
	}, m.a.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gguf"}))
	d.Show()
}

// AddFile describes the model file at path and lists it, remembering it
// for later sessions.
func (m *modelPanel) AddFile(path string) {
	go func() {
		info, err := m.a.lib.Describe(path)
		m.a.post(func() {
			if err != nil {
				m.setError(err)
				m.a.showError("Opening "+filepath.Base(path), err)
				return
			}
			m.setError(nil)
			if !slices.Contains(m.a.settings.ModelFiles, path) {
				m.a.settings.ModelFiles = append(m.a.settings.ModelFiles, path)
				m.a.saveSettings()
			}
			if i := slices.IndexFunc(m.models, func(x ModelInfo) bool { return x.Path == path }); i >= 0 {
				m.list.Select(i)
				return
			}
			m.models = append(m.models, info)
			m.list.Refresh()
			m.list.Select(len(m.models) - 1)
		})
	}()
}

// loadDialog holds the load choices for one model.
type loadDialog struct {
	info      ModelInfo
	opts      LoadOptions
	ctx       *widget.Slider
	ctxValue  *widget.Label
	threads   *widget.Slider
	thrValue  *widget.Label
	placement *widget.RadioGroup
	layers    *widget.Slider
	layValue  *widget.Label
	auto      *widget.Check // offload as many layers as fit
	gpu       *gpuSection   // devices, shares, partition; per-device estimate
	gpuNote   *widget.Label // the devices and their memory, or why not
	quant     *choiceSelect
	kvType    *choiceSelect
	mmap      *widget.Check
	estimate  *widget.Label
	spec      *specSection
	onProblem func(string) // the dialog's Load button follows problem()
	last      MemoryEstimate
	// form and scroll are laid out again when the GPU section's rows show
	// or hide (a container shown again keeps the size it had hidden: 0).
	form   *fyne.Container
	scroll *container.Scroll
}

// choiceSelect is a Select over Choices, reporting values.
type choiceSelect struct {
	*widget.Select
	choices []Choice
}

func newChoiceSelect(cs []Choice, value string, changed func()) *choiceSelect {
	s := &choiceSelect{choices: cs}
	var labels []string
	for _, c := range cs {
		labels = append(labels, c.Label)
	}
	s.Select = widget.NewSelect(labels, nil)
	s.SetValue(value)
	s.OnChanged = func(string) { changed() }
	return s
}

// Value is the chosen value; the first choice when none is.
func (s *choiceSelect) Value() string {
	for _, c := range s.choices {
		if c.Label == s.Selected {
			return c.Value
		}
	}
	if len(s.choices) > 0 {
		return s.choices[0].Value
	}
	return ""
}

// SetValue selects value, or the first choice when it is not offered.
func (s *choiceSelect) SetValue(v string) {
	for _, c := range s.choices {
		if c.Value == v {
			s.SetSelected(c.Label)
			return
		}
	}
	if len(s.choices) > 0 {
		s.SetSelected(s.choices[0].Label)
	}
}

const (
	placeCPU = "CPU only"
	placeGPU = "Offload layers to the GPU"
)

// newLoadDialog builds the form for info, starting from the choices
// remembered for it.
func (m *modelPanel) newLoadDialog(info ModelInfo) (*loadDialog, fyne.CanvasObject) {
	saved, _ := m.a.settings.Model(info.Path)
	d := &loadDialog{info: info, opts: LoadOptions(saved.Load)}
	if d.opts.Context <= 0 {
		d.opts.Context = min(max(info.ContextTrain, 512), 4096)
	}
	if d.opts.Threads <= 0 {
		d.opts.Threads = m.a.lib.MaxThreads()
	}
	d.build(m.a.lib)
	d.spec = newSpecSection(&d.opts, info, m.models)
	gpuNote := d.showGPU(m.a.lib.GPU(), m.a.lib)
	d.changed(m.a.lib)
	form := container.NewVBox(
		widget.NewLabelWithStyle(info.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		helpLabel(modelSummary(info)),
		labelled("Context length", d.ctx, d.ctxValue),
		helpLabel("Tokens the model can see at once: conversation plus reply. More needs more memory."),
		labelled("Threads", d.threads, d.thrValue),
		container.NewBorder(nil, nil, fixedLabel("Weights"), nil, d.quant),
		helpLabel("Re-quantize the weight matrices while loading (Inferflow's load-time quantization): less memory and faster decoding, some quality lost."),
		container.NewBorder(nil, nil, fixedLabel("KV cache"), nil, d.kvType),
		d.mmap,
		d.placement, gpuNote, d.gpu.devices, labelled("GPU layers", d.layers, d.layValue), d.auto,
		d.gpu.perDevice, d.estimate,
		widget.NewAccordion(widget.NewAccordionItem("Speculative decoding", d.spec.box)),
	)
	d.form = form
	return d, form
}

// build makes the widgets, set from d.opts; each change re-estimates.
func (d *loadDialog) build(lib Library) {
	changed := func() { d.changed(lib) }
	maxCtx := max(d.info.ContextTrain, 512)
	d.ctx, d.ctxValue = widget.NewSlider(min(256, float64(maxCtx)), float64(maxCtx)), widget.NewLabel("")
	d.ctx.Step = 256
	d.threads, d.thrValue = widget.NewSlider(1, float64(max(lib.MaxThreads(), 1))), widget.NewLabel("")
	d.layers, d.layValue = widget.NewSlider(0, float64(d.info.Layers)), widget.NewLabel("")
	d.estimate = widget.NewLabel("")
	d.auto = widget.NewCheck("Auto: as many layers as fit the free GPU memory", func(bool) { changed() })
	d.auto.Checked = d.opts.GPUAuto
	d.placement = widget.NewRadioGroup([]string{placeCPU, placeGPU}, func(string) { changed() })
	choices := lib.Choices()
	d.quant = newChoiceSelect(choices.Quants, d.opts.Quant, changed)
	d.kvType = newChoiceSelect(choices.KVTypes, d.opts.KVType, changed)
	d.mmap = widget.NewCheck("Copy weights into huge pages (slower load, faster decode)", func(bool) { changed() })
	d.mmap.Checked = !d.opts.Mmap
	d.ctx.SetValue(float64(d.opts.Context))
	d.threads.SetValue(float64(d.opts.Threads))
	d.layers.SetValue(float64(d.opts.GPULayers))
	d.placement.SetSelected(placeCPU)
	for _, s := range []*widget.Slider{d.ctx, d.threads, d.layers} {
		s.OnChanged = func(float64) { changed() }
	}
}

// showGPU greys out offloading with the reason when it cannot be used,
// builds the device section, and returns the line that names the devices
// with their memory (or says why there are none).
func (d *loadDialog) showGPU(gpu GPUStatus, lib Library) *widget.Label {
	note := helpLabel("")
	d.gpuNote = note
	d.gpu = newGPUSection(gpu, d.opts, func() { d.changed(lib) })
	if !gpu.Usable {
		d.placement.Disable()
		d.layers.Disable()
		d.auto.Disable()
		note.SetText("GPU offload is unavailable: " + gpu.Reason)
		note.Importance = widget.WarningImportance
		return note
	}
	if d.opts.GPULayers > 0 || d.opts.GPUAuto {
		d.placement.SetSelected(placeGPU)
	}
	var lines []string
	for _, dev := range gpu.Devices {
		lines = append(lines, "GPU: "+dev.Label+" · "+memoryText(dev))
	}
	note.SetText(strings.Join(lines, "\n"))
	return note
}

// deviceNames lists the devices found, by label.
func deviceNames(gpu GPUStatus) string {
	var names []string
	for _, d := range gpu.Devices {
		names = append(names, d.Label)
	}
	return strings.Join(names, ", ")
}

// autoMargin is the free GPU memory auto leaves unused (other processes,
// the allocator's rounding); the CLI's --gpu-layers auto leaves the same.
const autoMargin = 0.10

// fitLayers is the most layers whose estimate fits: on every chosen device,
// its part within that device's free memory less autoMargin (or, from a
// library that gives no parts, the total within their free memory).
func (d *loadDialog) fitLayers(lib Library) int {
	o, best := d.opts, 0
	for n := 1; n <= d.info.Layers; n++ {
		o.GPULayers = n
		if d.fits(lib.Estimate(d.info, o), o.Devices) {
			best = n
		}
	}
	return best
}

func (d *loadDialog) fits(e MemoryEstimate, ids []string) bool {
	budget := func(free uint64) float64 { return float64(free) * (1 - autoMargin) }
	if e.Problem != "" {
		return false
	}
	if len(e.Devices) == 0 {
		var free uint64
		for _, id := range ids {
			free += d.gpu.free(id)
		}
		return float64(e.VRAM) <= budget(free)
	}
	for _, p := range e.Devices {
		if float64(p.VRAM) > budget(d.gpu.free(p.ID)) {
			return false
		}
	}
	return true
}

// readPlacement sets the GPU options from the radio, the device section,
// the auto check and the slider (which auto moves to its fit and greys
// out).
func (d *loadDialog) readPlacement(lib Library) {
	d.opts.GPULayers, d.opts.GPUAuto = 0, false
	offload := d.placement.Selected == placeGPU && !d.placement.Disabled()
	setVisible(d.gpu.devices, offload)
	setVisible(d.gpu.perDevice, offload)
	setVisible(d.gpuNote, !offload)
	if !offload {
		d.layers.Disable()
		d.auto.Disable()
		d.opts.Devices, d.opts.Split, d.opts.SplitMode, d.opts.TensorGroup = nil, nil, "", 0
		d.gpu.problem = ""
		return
	}
	d.gpu.read(&d.opts)
	d.auto.Enable()
	d.layers.Enable()
	if d.auto.Checked {
		d.opts.GPUAuto = true
		d.layers.Value = 0
		if d.gpu.problem == "" {
			d.layers.Value = float64(d.fitLayers(lib))
		}
		if d.layers.Value == 0 && d.gpu.problem == "" {
			d.gpu.noFit(lib.Estimate(d.info, withLayers(d.opts, 1)))
		}
		d.layers.Refresh()
		d.layers.Disable()
	}
	d.opts.GPULayers = int(d.layers.Value)
}

func withLayers(o LoadOptions, n int) LoadOptions {
	o.GPULayers = n
	return o
}

// problem is why the dialog's choice cannot load ("" when it can): Load
// is disabled while there is one.
func (d *loadDialog) problem() string {
	if d.gpu == nil {
		return ""
	}
	return d.gpu.problem
}

func labelled(name string, s *widget.Slider, value *widget.Label) fyne.CanvasObject {
	return container.NewBorder(nil, nil, fixedLabel(name), container.NewGridWrap(fyne.NewSize(80, 36), value), s)
}

// fixedLabel aligns the load dialog's rows.
func fixedLabel(name string) fyne.CanvasObject {
	return container.NewGridWrap(fyne.NewSize(120, 36), widget.NewLabel(name))
}

// changed reads the widgets and shows the memory estimate.
func (d *loadDialog) changed(lib Library) {
	d.opts.Context = int(d.ctx.Value)
	d.opts.Threads = int(d.threads.Value)
	if d.quant != nil {
		d.opts.Quant, d.opts.KVType, d.opts.Mmap = d.quant.Value(), d.kvType.Value(), !d.mmap.Checked
	}
	if d.auto != nil && d.gpu != nil {
		d.readPlacement(lib)
	}
	d.ctxValue.SetText(groupDigits(d.opts.Context))
	d.thrValue.SetText(fmt.Sprint(d.opts.Threads))
	d.layValue.SetText(fmt.Sprintf("%d/%d", d.opts.GPULayers, d.info.Layers))
	if d.opts.GPUAuto {
		d.layValue.SetText(fmt.Sprintf("auto %d/%d", d.opts.GPULayers, d.info.Layers))
	}
	e := lib.Estimate(d.info, d.opts)
	d.last = e
	s := "Needs about " + humanBytes(e.RAM) + " of RAM"
	if e.VRAM > 0 {
		s += " and " + humanBytes(e.VRAM) + " of GPU memory"
		if len(e.Devices) > 1 {
			s += fmt.Sprintf(" over %d devices", len(e.Devices))
		}
	}
	d.estimate.SetText(s)
	if d.gpu != nil {
		d.gpu.perDevice.RemoveAll()
		if d.opts.GPULayers > 0 && d.gpu.problem == "" {
			d.gpu.showEstimate(e)
		}
		if d.onProblem != nil {
			d.onProblem(d.problem())
		}
	}
	d.relayout()
}

func (d *loadDialog) relayout() {
	switch {
	case d.scroll != nil:
		d.scroll.Refresh()
	case d.form != nil:
		d.form.Refresh()
	}
}

func (m *modelPanel) showLoadDialog() {
	if m.selected < 0 {
		return
	}
	d, form := m.newLoadDialog(m.models[m.selected])
	if m.a.win == nil {
		if d.problem() == "" {
			m.a.loadModel(d.info.Path, d.opts)
		}
		return
	}
	d.scroll = container.NewVScroll(form)
	dlg := dialog.NewCustomWithoutButtons("Load model", d.scroll, m.a.win)
	load := widget.NewButtonWithIcon("Load", theme.ConfirmIcon(), func() {
		if d.problem() == "" {
			dlg.Hide()
			m.a.loadModel(d.info.Path, d.opts)
		}
	})
	load.Importance = widget.HighImportance
	d.onProblem = func(p string) { setEnabled(load, p == "") }
	m.shown, m.shownLoad = d, load
	d.onProblem(d.problem())
	dlg.SetButtons([]fyne.CanvasObject{widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), dlg.Hide), load})
	dlg.Resize(loadDialogSize(m.a.win.Canvas().Size()))
	dlg.Show()
}

// loadDialogSize is the load dialog's size in a window of size win: 540 ×
// 680 where that fits, else the window less a margin (the form scrolls,
// so the estimate and the speculative decoding section stay reachable).
func loadDialogSize(win fyne.Size) fyne.Size {
	if win.IsZero() {
		return fyne.NewSize(540, 680)
	}
	return fyne.NewSize(min(540, win.Width-40), min(680, win.Height-60))
}

// setLoading shows a load in progress; "" ends it.
func (m *modelPanel) setLoading(what string) {
	if what != "" {
		m.progress.Show()
		m.progress.Start()
		m.state.SetText(what)
	} else {
		m.progress.Stop()
		m.progress.Hide()
	}
	m.updateButtons()
	m.list.Refresh()
}

// loadModel loads the model at path off the UI goroutine, replacing the
// one loaded. The window stays usable; chat waits for the model.
func (a *App) loadModel(path string, o LoadOptions) {
	if a.loading {
		return
	}
	if a.anyBusy() {
		a.stopAll()
	}
	a.stopServer()
	a.loading = true
	name := filepath.Base(path)
	a.models.setError(nil)
	a.models.setLoading("Loading " + name + "…")
	a.status.SetBusy("loading " + name + "…")
	old := a.engine
	go func() {
		if old != nil {
			old.Close()
		}
		e, err := a.lib.Load(context.Background(), path, o)
		a.post(func() { a.modelLoaded(path, o, old, e, err) })
	}()
}

func (a *App) modelLoaded(path string, o LoadOptions, old, e Engine, err error) {
	a.loading = false
	if a.engine == old {
		a.engine, a.modelPath = nil, ""
	}
	a.status.SetBusy("")
	if err != nil {
		a.models.setLoading("")
		a.models.state.SetText("No model loaded.")
		a.models.setError(err)
		a.status.SetModel("no model", "")
		a.showError("Loading "+filepath.Base(path), err)
		a.chat.updateEmpty()
		return
	}
	a.engine, a.modelPath = e, path
	a.refreshServer()
	m, _ := a.settings.Model(path)
	m.Load = store.LoadSettings(o)
	a.settings.SetModel(path, m)
	a.settings.LastModel = path
	a.saveSettings()
	a.sampling, a.preset = m.Sampling.Clone().FitContext(e.ContextSize()), m.Preset
	a.panel.SetParams(a.sampling, a.preset)
	a.panel.SetUnsupported(unsupportedOf(e))
	info := e.Info()
	a.models.setLoading("")
	a.models.state.SetText(fmt.Sprintf("Loaded %s · context %s tokens · %s", info.Name, groupDigits(e.ContextSize()), e.Device()))
	a.models.showLoaded(info)
	a.status.SetModel(info.Name, e.Device())
	a.chat.updateEmpty()
	a.chat.input.SetPlaceHolder("Message " + info.Name + " (Enter to send, Shift+Enter for a new line)")
	a.refreshContext()
	a.requestExplain()
}

// unloadModel closes the loaded model, stopping a reply first.
func (a *App) unloadModel() {
	if a.engine == nil || a.loading {
		return
	}
	if a.anyBusy() {
		a.stopAll()
	}
	a.stopServer()
	e := a.engine
	a.engine, a.modelPath = nil, ""
	a.settings.LastModel = ""
	a.saveSettings()
	go e.Close()
	a.refreshServer()
	a.models.state.SetText("No model loaded.")
	a.models.updateButtons()
	a.models.list.Refresh()
	a.status.SetModel("no model", "")
	a.panel.SetUnsupported(nil)
	a.chat.setContext(0, 0)
	a.chat.updateEmpty()
}
