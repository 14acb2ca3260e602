package ui

import (
	"fyne.io/fyne/v2/container"
	"io"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/presets"
	"flowchat/app/store"
)

// Hooks for the external tests (package ui_test), which need the fakes in
// ui/fake and so cannot live in package ui.

type (
	MessageView = messageView
	CodeSegment = codeSegment
	TokenChart  = tokenChart
)

func (a *App) Composer() *composer                    { return a.chat.input }
func (a *App) SendStop() *widget.Button               { return a.chat.sendStop }
func (a *App) Busy() bool                             { return a.busy() }
func (a *App) Loading() bool                          { return a.loading }
func (a *App) Engine() Engine                         { return a.engine }
func (a *App) Conversation() *store.Conversation      { return a.conv }
func (a *App) Conversations() []*store.Conversation   { return a.convs }
func (a *App) Settings() store.Settings               { return a.settings }
func (a *App) Sampling() presets.Params               { return a.sampling }
func (a *App) SpeedText() string                      { return a.status.speed.Text }
func (a *App) StatusMessage() string                  { return a.status.message.Text }
func (a *App) StatusModel() string                    { return a.status.model.Text }
func (a *App) StatusDevice() string                   { return a.status.device.Text }
func (a *App) Banner() string                         { return visibleText(a.chat.banner) }
func (a *App) ContextText() string                    { return a.chat.ctxLabel.Text }
func (a *App) SystemEntry() *widget.Entry             { return a.chat.system }
func (a *App) PolicySelect() *widget.Select           { return a.chat.policy }
func (a *App) NewConversation()                       { a.newConversation() }
func (a *App) Open(c *store.Conversation)             { a.openConversation(c) }
func (a *App) Rename(c *store.Conversation, t string) { a.renameConversation(c, t) }
func (a *App) Delete(c *store.Conversation)           { a.deleteConversation(c) }
func (a *App) Export(c *store.Conversation, format string, w io.Writer) error {
	return a.exportConversation(c, format, w)
}
func (a *App) Import(r io.Reader) error             { return a.importConversation(r) }
func (a *App) LoadModel(path string, o LoadOptions) { a.loadModel(path, o) }
func (a *App) UnloadModel()                         { a.unloadModel() }

// Sidebar hooks.
func (a *App) SearchEntry() *widget.Entry { return a.side.search }
func (a *App) ListedTitles() []string {
	var out []string
	for _, c := range a.side.shown {
		out = append(out, titleOf(c))
	}
	return out
}

// Sampling panel hooks.
func (a *App) Slider(key string) *widget.Slider    { return a.panel.fields[key].slider }
func (a *App) TextEntry(key string) *widget.Entry  { return a.panel.texts[key].entry }
func (a *App) ValueEntry(key string) *widget.Entry { return a.panel.fields[key].entry }
func (a *App) PresetSelect() *widget.Select        { return a.panel.preset }
func (a *App) DecodingSelect() *widget.Select      { return a.panel.decoding }
func (a *App) SamplingError() string               { return visibleText(a.panel.errLabel) }
func (a *App) SaveUserPreset(name string)          { a.panel.SaveUserPreset(name) }

// FieldName is a sampling setting's name; SettingHelp is the panel's
// help line.
func (a *App) FieldName(key string) fyne.Tappable { return a.panel.fields[key].name }
func (a *App) SettingHelp() string                { return a.panel.help.Text }

// SettingsBottom is where the sampling settings' scroll ends on screen.
func (a *App) SettingsBottom() float32 {
	return fyne.CurrentApp().Driver().AbsolutePositionForObject(a.panel.scroll).Y + a.panel.scroll.Size().Height
}
func (a *App) DeletePresetButton() *widget.Button { return a.panel.deletePreset }
func (a *App) GroupNote(title string) string {
	for _, g := range a.panel.groups {
		if g.g.title == title {
			return visibleText(g.note)
		}
	}
	return "no such group"
}

// Model panel hooks.
func (a *App) ModelError() string         { return visibleText(a.models.errLabel) }
func (a *App) ModelState() string         { return a.models.state.Text }
func (a *App) ModelDetails() string       { return a.models.details.Text }
func (a *App) LoadButton() *widget.Button { return a.models.loadBtn }
func (a *App) ListedModels() []ModelInfo  { return a.models.models }
func (a *App) SelectModel(i int)          { a.models.list.Select(i) }
func (a *App) AddModelFile(p string)      { a.models.AddFile(p) }

// LoadDialogSize is the load dialog's size in a window of size win.
func LoadDialogSize(win fyne.Size) fyne.Size { return loadDialogSize(win) }

// ModelList is the model panel's list of local models.
func (a *App) ModelList() *widget.List { return a.models.list }

// LoadForm builds the load dialog's form for the model listed at i.
func (a *App) LoadForm(i int) *LoadForm {
	d, _ := a.models.newLoadDialog(a.models.models[i])
	return &LoadForm{d: d, lib: a.lib}
}

// LoadForm exposes a load dialog's widgets.
type LoadForm struct {
	d   *loadDialog
	lib Library
}

func (f *LoadForm) Placement() *widget.RadioGroup  { return f.d.placement }
func (f *LoadForm) Layers() *widget.Slider         { return f.d.layers }
func (f *LoadForm) Auto() *widget.Check            { return f.d.auto }
func (f *LoadForm) LayersText() string             { return f.d.layValue.Text }
func (f *LoadForm) GPUNote() string                { return f.d.gpuNote.Text }
func (f *LoadForm) Context() *widget.Slider        { return f.d.ctx }
func (f *LoadForm) Estimate() string               { return f.d.estimate.Text }
func (f *LoadForm) Options() LoadOptions           { return f.d.opts }
func (f *LoadForm) Quant() *widget.Select          { return f.d.quant.Select }
func (f *LoadForm) KVType() *widget.Select         { return f.d.kvType.Select }
func (f *LoadForm) HugePages() *widget.Check       { return f.d.mmap }
func (f *LoadForm) Drafter() *widget.Select        { return f.d.spec.drafter }
func (f *LoadForm) DraftQuant() *widget.Select     { return f.d.spec.quant }
func (f *LoadForm) DraftModel() *widget.Select     { return f.d.spec.model }
func (f *LoadForm) DraftN() *widget.Slider         { return f.d.spec.n }
func (f *LoadForm) SpecAccept() *widget.RadioGroup { return f.d.spec.accept }
func (f *LoadForm) SpecNote() string               { return f.d.spec.note.Text }
func (f *LoadForm) DraftQuantShown() bool          { return f.d.spec.quantRow.Visible() }
func (f *LoadForm) DraftModelShown() bool          { return f.d.spec.modelRow.Visible() }

// GPU section hooks: a check and a share entry per listed device.
func (f *LoadForm) DeviceChecks() []*widget.Check { return f.d.gpu.checks }
func (f *LoadForm) Shares() []*widget.Entry       { return f.d.gpu.shares }
func (f *LoadForm) Partition() *widget.Select     { return f.d.gpu.mode.Select }
func (f *LoadForm) Group() *widget.Select         { return f.d.gpu.group }
func (f *LoadForm) GroupShown() bool              { return f.d.gpu.groupRow.Visible() }
func (f *LoadForm) SplitShown() bool              { return f.d.gpu.split.Visible() }
func (f *LoadForm) DevicesShown() bool            { return f.d.gpu.devices.Visible() }
func (f *LoadForm) Problem() string               { return f.d.problem() }
func (f *LoadForm) Estimated() MemoryEstimate     { return f.d.last }

// ScrollToGPU scrolls the shown dialog's form to the CPU/GPU choice.
func (f *LoadForm) ScrollToGPU() {
	f.d.scroll.ScrollToOffset(fyne.NewPos(0, f.d.placement.Position().Y-8))
}

// ScrollToEstimate scrolls the shown dialog's form to the GPU layers.
func (f *LoadForm) ScrollToEstimate() {
	f.d.scroll.ScrollToOffset(fyne.NewPos(0, f.d.gpu.devices.Position().Y+f.d.gpu.devices.Size().Height-120))
}

// DeviceEstimates are the per-device estimate lines, with whether each
// warns.
func (f *LoadForm) DeviceEstimates() (lines []string, warns []bool) {
	for _, o := range f.d.gpu.perDevice.Objects {
		l := o.(*widget.Label)
		lines, warns = append(lines, l.Text), append(warns, l.Importance == widget.WarningImportance)
	}
	return lines, warns
}

// ShownLoadForm is the load dialog on screen, with its Load button.
func (a *App) ShownLoadForm() (*LoadForm, *widget.Button) {
	return &LoadForm{d: a.models.shown, lib: a.lib}, a.models.shownLoad
}

// Chat hooks.

// Views returns the message views shown, oldest first.
func (a *App) Views() []*messageView {
	var out []*messageView
	for _, o := range a.chat.messages.Objects {
		out = append(out, o.(*messageView))
	}
	return out
}

func (m *messageView) Body() *widget.RichText      { return m.body }
func (m *messageView) ID() string                  { return m.id }
func (m *messageView) Footer() string              { return visibleText(m.footer) }
func (m *messageView) Note() string                { return visibleText(m.note) }
func (m *messageView) ErrorText() string           { return visibleText(m.errMsg) }
func (m *messageView) Version() string             { return visibleText(m.version) }
func (m *messageView) Prev() *widget.Button        { return m.prev }
func (m *messageView) Next() *widget.Button        { return m.next }
func (m *messageView) CopyButton() *widget.Button  { return m.copyBtn }
func (m *messageView) EditButton() *widget.Button  { return m.editBtn }
func (m *messageView) RegenButton() *widget.Button { return m.regenBtn }
func (m *messageView) Editor() *widget.Entry       { return m.editor }

// Codes returns the message's code blocks.
func (m *messageView) Codes() []*codeSegment { return m.codes }

func (c *codeSegment) Spans() []widget.RichTextSegment { return c.spans }

// CopyCode taps the copy button of a code block's widget.
func (c *codeSegment) CopyCode() {
	b := c.Visual().(*codeBlock)
	b.copy.OnTapped()
}

// FinishEdit presses the editor's Send.
func (m *messageView) FinishEdit() { m.finishEdit() }

// Chart hooks.
func (a *App) Chart() *tokenChart                   { return a.next.chart }
func (a *App) ChartSummary() string                 { return a.next.summary.Text }
func (a *App) FollowCheck() *widget.Check           { return a.next.follow }
func (a *App) ChartSubject() string                 { return a.next.subject.Text }
func (a *App) ChartSubjectLabel() fyne.CanvasObject { return a.next.subject }

// Bar is one drawn candidate of the chart.
type Bar struct {
	Stage, Token, Value  string
	Before, After, Track float32 // widths
}

// Bars lays the chart out at width and returns what it draws.
func (c *tokenChart) Bars(width float32) []Bar {
	r := c.CreateRenderer().(*chartRenderer)
	r.Layout(fyne.NewSize(width, r.MinSize().Height))
	var out []Bar
	for i, s := range r.stages {
		for _, row := range s.rows {
			out = append(out, Bar{Stage: c.exp.Stages[i].Stage, Token: row.label.Text, Value: row.value.Text,
				Before: row.before.Size().Width, After: row.after.Size().Width, Track: row.track.Size().Width})
		}
	}
	return out
}

func visibleText(l *widget.Label) string {
	if !l.Visible() {
		return ""
	}
	return l.Text
}

// Discover hooks.
func (a *App) DiscoverQuery() *widget.Entry    { return a.discover.query }
func (a *App) DiscoverSort() *widget.Select    { return a.discover.sortSel }
func (a *App) DiscoverLibrary() *widget.Select { return a.discover.libSel }
func (a *App) DiscoverHeading() string         { return a.discover.heading.Text }
func (a *App) DiscoverMore() *widget.Button    { return a.discover.more }
func (a *App) DiscoverOpen(i int)              { a.discover.results.list.Select(i) }
func (a *App) RepoFiles() []RemoteFile         { return a.discover.repo.files }
func (a *App) RepoState() string               { return visibleText(a.discover.repo.state) }
func (a *App) RepoTitle() string               { return a.discover.repo.title.Text }
func (a *App) RepoSelect(i int)                { a.discover.repo.list.Select(i) }
func (a *App) RepoSelected() int               { return a.discover.repo.selected }
func (a *App) FitBadge() string                { return a.discover.repo.badge.Text }
func (a *App) FitNumbers() string              { return a.discover.repo.numbers.Text }
func (a *App) FitContext() *widget.Select      { return a.discover.repo.ctxSel }
func (a *App) DownloadButton() *widget.Button  { return a.discover.repo.download }
func (a *App) DownloadStarted() string         { return a.discover.repo.started.Text }
func (a *App) GatedShown() bool                { return a.discover.repo.gated.content.Visible() }
func (a *App) GatedText() string               { return a.discover.repo.gated.message.Text }
func (a *App) GatedLink() *widget.Hyperlink    { return a.discover.repo.gated.link }
func (a *App) Screens() []string {
	var out []string
	for _, t := range a.screens.Items {
		out = append(out, t.Text)
	}
	return out
}

// DiscoverRows are the result list's rows as drawn: title and caption.
func (a *App) DiscoverRows() [][2]string {
	r := a.discover.results
	var out [][2]string
	for i := 0; i < r.length(); i++ {
		o := twoLineRow()
		r.update(i, o)
		box := o.(*fyne.Container)
		out = append(out, [2]string{box.Objects[0].(*widget.Label).Text, box.Objects[1].(*widget.Label).Text})
	}
	return out
}

// FileRows are the file list's rows as drawn: title, size and badge.
func (a *App) FileRows() [][3]string {
	r := a.discover.repo
	var out [][3]string
	for i := range r.files {
		o := fileRow()
		r.updateRow(i, o)
		box := o.(*fyne.Container)
		right := box.Objects[1].(*fyne.Container)
		out = append(out, [3]string{box.Objects[0].(*widget.Label).Text, right.Objects[0].(*widget.Label).Text,
			right.Objects[1].(*fyne.Container).Objects[0].(*widget.Label).Text})
	}
	return out
}

// Downloads hooks.

// JobView is a download row as shown.
type JobView struct {
	Name, Detail, Err string
	Value             float64
	Pause, Cancel     *widget.Button
}

func (a *App) DownloadRows() []JobView {
	var out []JobView
	for _, id := range a.downloads.order {
		r := a.downloads.rows[id]
		out = append(out, JobView{Name: r.name.Text, Detail: r.detail.Text, Err: visibleText(r.errMsg), Value: r.bar.Value, Pause: r.pause, Cancel: r.cancel})
	}
	return out
}
func (a *App) ClearFinished() { a.downloads.clearFinished() }

// Lab hooks.
func (a *App) LabModel() *widget.Select      { return a.lab.model }
func (a *App) LabLevels() *widget.CheckGroup { return a.lab.levels }
func (a *App) LabRun() *widget.Button        { return a.lab.run }
func (a *App) LabCancel() *widget.Button     { return a.lab.cancel }
func (a *App) LabStage() string              { return a.lab.stage.Text }
func (a *App) LabProgress() float64          { return a.lab.bar.Value }
func (a *App) LabSummary() string            { return a.lab.summary.Text }
func (a *App) LabError() string              { return visibleText(a.lab.errMsg) }
func (a *App) LabCharts() int                { return len(a.lab.charts.Objects) }
func (a *App) LabRunning() bool              { return a.lab.running }

// LabHeaderFits reports, per column, whether the bold header fits its
// column's width.
func (a *App) LabHeaderFits() []bool {
	var out []bool
	for c, h := range a.lab.report.Header {
		w := widget.NewLabelWithStyle(h, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}).MinSize().Width
		out = append(out, c < len(a.lab.colWidths) && a.lab.colWidths[c] >= w)
	}
	return out
}
func (a *App) SidePrompt() *widget.Entry    { return a.lab.side.prompt }
func (a *App) SideGenerate() *widget.Button { return a.lab.side.gen }
func (a *App) SideState() string            { return a.lab.side.state.Text }
func (a *App) LabTable() [][]string {
	l := a.lab
	rows, cols := l.tableSize()
	out := [][]string{l.report.Header}
	for r := 0; r < rows; r++ {
		var row []string
		for c := 0; c < cols; c++ {
			lbl := widget.NewLabel("")
			l.tableCell(widget.TableCellID{Row: r, Col: c}, lbl)
			row = append(row, lbl.Text)
		}
		out = append(out, row)
	}
	return out
}

// SideRowView is a side-by-side row: its header, text, and the runs drawn
// as diverging (bold, in the error colour).
type SideRowView struct {
	Head, Text string
	Changed    []string
}

func (a *App) SideRows() []SideRowView {
	var out []SideRowView
	for _, o := range a.lab.side.rows.Objects {
		box := o.(*fyne.Container)
		rt := box.Objects[1].(*widget.RichText)
		v := SideRowView{Head: box.Objects[0].(*widget.Label).Text, Text: rt.String()}
		for _, s := range rt.Segments {
			if ts := s.(*widget.TextSegment); ts.Style.ColorName == theme.ColorNameError && ts.Style.TextStyle.Bold {
				v.Changed = append(v.Changed, ts.Text)
			}
		}
		out = append(out, v)
	}
	return out
}

func (a *App) PrefillBar() *widget.ProgressBar { return a.status.prefill }

// Welcome screen hooks.
func (a *App) ShowWelcome() { a.showWelcome() }
func (a *App) WelcomeOpen() bool {
	return a.welcome != nil && a.welcome.dlg != nil && a.welcome.content.Visible() && a.win != nil &&
		len(a.win.Canvas().Overlays().List()) > 0
}
func (a *App) WelcomeState() string { return a.welcome.state.Text }
func (a *App) WelcomeDemo() *widget.Button {
	return a.welcome.demoBtn
}

// WelcomeRows are the offered models: name, badge and their buttons.
func (a *App) WelcomeRows() (names, badges []string, get []*widget.Button) {
	for _, r := range a.welcome.rows {
		names, badges, get = append(names, r.entry.Name), append(badges, r.badge.Text), append(get, r.get)
	}
	return
}
func (a *App) WelcomeText() string { return texts(a.welcome.content) }

// texts joins the text of every label and button under o.
func texts(o fyne.CanvasObject) string {
	var out []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			out = append(out, x.Text)
		case *widget.Button:
			out = append(out, x.Text)
		case *container.Scroll:
			walk(x.Content)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return strings.Join(out, "\n")
}

// GroupShown reports whether a sampling group's settings are shown.
func (a *App) GroupShown(title string) bool {
	for _, g := range a.panel.groups {
		if g.g.title == title {
			return g.grid.Visible()
		}
	}
	return false
}

// ChartTop is where the next-token chart below the settings starts.
func (a *App) ChartTop() float32 {
	return fyne.CurrentApp().Driver().AbsolutePositionForObject(a.next.content).Y
}

// LabControls is the Lab's settings column.
func (a *App) LabControls() fyne.CanvasObject {
	return a.lab.content.(*fyne.Container).Objects[1]
}

// Texts joins the text of every label and button under o.
func Texts(o fyne.CanvasObject) string { return texts(o) }

func (a *App) ServerToggle() *widget.Check { return a.server.toggle }
func (a *App) ServerURL() string           { return a.server.url.Text }
func (a *App) ServerExample() string       { return a.server.example.Text }
func (a *App) Unload()                     { a.unloadModel() }

// SideTabs are the chat's side tabs: Sampling, Model, Remote.
func (a *App) SideTabs() *container.AppTabs { return a.tabs }

// ShowLoadDialog opens the load dialog for the selected model.
func (a *App) ShowLoadDialog() { a.models.showLoadDialog() }

// LabTabs are the Lab's result tabs: Charts, Table, Side by side.
func (a *App) LabTabs() *container.AppTabs { return a.lab.results }

// Panes are the chat window's panes by name, to compare their sizes with
// their minimum sizes.
func (a *App) Panes() map[string]fyne.CanvasObject {
	return map[string]fyne.CanvasObject{"sidebar": a.side.content, "chat": a.chat.content, "sampling": a.panel.content,
		"next token": a.next.content, "model": a.models.content}
}
