package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/presets"
	"flowchat/app/store"
)

// Deps are what the app window is built from.
type Deps struct {
	Library Library
	Storage Storage
	// Post runs f on the UI goroutine; nil means fyne.Do. It is the only
	// way background work reaches widgets.
	Post func(f func())
	// Model, when set, is loaded at start (a command-line choice).
	Model string
	// DefaultModel is loaded at start when Model is empty and the settings
	// remember none ("" loads nothing).
	DefaultModel string
	// PollMemory is how often the status bar reads memory in use; 0 = never
	// (tests).
	PollMemory time.Duration
	// Welcome shows the welcome screen at the first start (the settings
	// remember that it was shown).
	Welcome bool
	// Hub and Downloads, when set, add the Discover and Downloads screens.
	Hub       Hub
	Downloads Downloader
	// Lab, when set, adds the Quantization Lab screen.
	Lab Lab
	// Remotes, when set, adds the Remote tab: endpoints and their models.
	Remotes Remotes
	// Server, when set, adds the model panel's "Local server" switch.
	Server LocalServer
}

// App is the main window's state and screens. Every field is owned by the
// UI goroutine.
type App struct {
	deps    Deps
	lib     Library
	storage Storage
	post    func(func())
	win     fyne.Window // nil until attached to a window

	settings store.Settings
	convs    []*store.Conversation // newest first
	conv     *store.Conversation   // shown in the chat

	engine    Engine // nil when no model is loaded
	modelPath string
	loading   bool
	gens      map[*store.Conversation]*generation // replies being generated, one per conversation at most

	sampling presets.Params // for the loaded model
	preset   string         // name of the preset it came from ("" = edited)

	side      *sidebar
	chat      *chatView
	panel     *samplingPanel
	next      *explainView
	models    *modelPanel
	server    *serverView // nil without Deps.Server
	status    *statusBar
	explainer *explainer
	tabs      *container.AppTabs
	discover  *discoverView      // nil without a Hub
	downloads *downloadsView     // nil without a Downloader
	lab       *labView           // nil without a Lab
	remote    *remotePanel       // nil without Remotes
	welcome   *welcomeView       // the last welcome screen opened, if any
	screens   *container.AppTabs // Chat, Discover, Downloads…; nil when only Chat
	content   fyne.CanvasObject
	stopPoll  chan struct{}
}

// NewApp builds the app's screens from d, loading conversations and
// settings. Call Start once it is on a window.
func NewApp(d Deps) *App {
	a := &App{deps: d, lib: d.Library, storage: d.Storage, post: d.Post}
	if a.post == nil {
		a.post = fyne.Do
	}
	a.sampling = presets.Default()
	a.preset = "Balanced"
	var loadErrs []error
	var err error
	if a.settings, err = a.storage.LoadSettings(); err != nil {
		loadErrs = append(loadErrs, err)
	}
	if a.convs, err = a.storage.LoadAll(); err != nil {
		loadErrs = append(loadErrs, err)
	}
	a.build()
	a.openInitialConversation()
	if len(loadErrs) > 0 {
		a.status.SetMessage(errors.Join(loadErrs...).Error(), true)
	}
	return a
}

func (a *App) build() {
	a.status = newStatusBar()
	a.explainer = newExplainer(a)
	a.next = newExplainView(a)
	a.panel = newSamplingPanel(a)
	a.models = newModelPanel(a)
	if a.deps.Server != nil {
		a.server = newServerView(a, a.deps.Server)
		a.models.addServer(a.server.content)
	}
	a.side = newSidebar(a)
	a.chat = newChatView(a)
	a.tabs = container.NewAppTabs(
		container.NewTabItem("Sampling", samplingSplit(a.panel.content, a.next.content)),
		container.NewTabItem("Model", a.models.content),
	)
	if a.deps.Remotes != nil {
		a.remote = newRemotePanel(a, a.deps.Remotes)
		a.tabs.Append(container.NewTabItem("Remote", a.remote.content))
	}
	inner := container.NewHSplit(a.chat.content, a.tabs)
	// about 470 px for the settings in a 1200 px window, room for the
	// help texts on two lines and the common settings above the chart
	inner.Offset = 0.5
	outer := container.NewHSplit(a.side.content, inner)
	outer.Offset = 0.2
	a.content = container.NewBorder(nil, a.status.content, nil, nil, a.buildScreens(outer))
}

// buildScreens puts the chat beside the optional screens, as top-level
// tabs; with none, the chat is the whole window.
func (a *App) buildScreens(chat fyne.CanvasObject) fyne.CanvasObject {
	var items []*container.TabItem
	if a.deps.Hub != nil {
		a.discover = newDiscoverView(a, a.deps.Hub)
		items = append(items, container.NewTabItemWithIcon("Discover", theme.SearchIcon(), a.discover.content))
	}
	if a.deps.Downloads != nil {
		a.downloads = newDownloadsView(a, a.deps.Downloads)
		tab := container.NewTabItemWithIcon("Downloads", theme.DownloadIcon(), a.downloads.content)
		a.downloads.onCount = func(n int) { a.setTabTitle(tab, "Downloads", n) }
		items = append(items, tab)
	}
	if a.deps.Lab != nil {
		a.lab = newLabView(a, a.deps.Lab)
		items = append(items, container.NewTabItemWithIcon("Quantization Lab", theme.GridIcon(), a.lab.content))
	}
	if len(items) == 0 {
		return chat
	}
	a.screens = container.NewAppTabs(append([]*container.TabItem{container.NewTabItemWithIcon("Chat", theme.MailComposeIcon(), chat)}, items...)...)
	return a.screens
}

// ShowScreen brings the top-level tab whose title starts with name to
// the front ("Chat", "Discover", "Downloads", "Quantization Lab").
func (a *App) ShowScreen(name string) {
	if a.screens == nil {
		return
	}
	for _, t := range a.screens.Items {
		if strings.HasPrefix(t.Text, name) {
			a.screens.Select(t)
		}
	}
}

// setTabTitle shows a count of work under way beside a tab's name.
func (a *App) setTabTitle(tab *container.TabItem, name string, n int) {
	title := name
	if n > 0 {
		title = fmt.Sprintf("%s (%d)", name, n)
	}
	if tab.Text != title {
		tab.Text = title
		a.screens.Refresh()
	}
}

// samplingSplit stacks the settings over the next-token chart: in an
// 800 px window, under the menu bar, the common settings (max tokens,
// temperature to min-p) whole above, and six of a stage's eight
// candidates below (TestChartHasRoom).
func samplingSplit(settings, chart fyne.CanvasObject) fyne.CanvasObject {
	s := container.NewVSplit(settings, chart)
	s.Offset = 0.64
	return s
}

// Content is the window's content.
func (a *App) Content() fyne.CanvasObject { return a.content }

// Start attaches the app to w (for dialogs), starts the memory poll and
// loads the default model.
func (a *App) Start(w fyne.Window) {
	d := a.deps
	a.win = w
	a.models.refresh()
	if d.PollMemory > 0 {
		a.stopPoll = make(chan struct{})
		go a.pollMemory(d.PollMemory, a.stopPoll)
	}
	a.updateMemory(a.lib.MemoryInUse())
	if a.downloads != nil {
		a.downloads.restore()
	}
	if a.lab != nil {
		a.lab.reopen()
	}
	path := d.Model
	if path == "" {
		path = a.settings.LastModel
	}
	if path == "" {
		path = d.DefaultModel
	}
	if path != "" {
		m, _ := a.settings.Model(path)
		a.loadModel(path, LoadOptions(m.Load))
	}
	a.welcomeOnce()
}

// Close stops a reply in progress and background work, and flushes
// pending writes.
func (a *App) Close() {
	a.stopAll()
	a.stopServer()
	if a.stopPoll != nil {
		close(a.stopPoll)
		a.stopPoll = nil
	}
	if a.deps.Downloads != nil {
		a.deps.Downloads.Close()
	}
	if a.lab != nil {
		a.lab.stop()
	}
	a.storage.Flush()
}

func (a *App) pollMemory(every time.Duration, stop chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n := a.lib.MemoryInUse()
			a.post(func() { a.updateMemory(n) })
		case <-stop:
			return
		}
	}
}

func (a *App) updateMemory(n uint64) { a.status.SetMemory(n) }

// showError reports err in the window (a dialog when there is one) and in
// the status bar.
func (a *App) showError(what string, err error) {
	err = errors.New(what + ": " + err.Error())
	a.status.SetMessage(err.Error(), true)
	if a.win != nil {
		dialog.ShowError(err, a.win)
	}
}

// ReportError shows an error from background work (a failed save) in the
// status bar. Call it on the UI goroutine.
func (a *App) ReportError(err error) { a.status.SetMessage(err.Error(), true) }

// saveSettings queues the settings for writing.
func (a *App) saveSettings() { a.storage.SaveSettingsAsync(a.settings) }

// saveConv queues c for writing once it has something worth keeping.
func (a *App) saveConv(c *store.Conversation, then func()) {
	if len(c.Messages) == 0 && c.System == "" {
		if then != nil {
			then()
		}
		return
	}
	a.storage.SaveAsync(c, then)
}

// stopServer stops the local server before the engine it serves changes.
func (a *App) stopServer() {
	if a.server != nil {
		a.server.stop()
	}
}

// refreshServer shows whether the local server can be switched on.
func (a *App) refreshServer() {
	if a.server != nil {
		a.server.refresh()
	}
}

// cur is the reply being generated in the conversation shown, if any.
// Replies of other conversations go on at the same time (the engine
// batches them); each conversation has at most one.
func (a *App) cur() *generation { return a.gens[a.conv] }

// busy reports whether a reply of the conversation shown is being
// generated.
func (a *App) busy() bool { return a.cur() != nil }

// anyBusy reports whether any conversation's reply is being generated.
func (a *App) anyBusy() bool { return len(a.gens) > 0 }

// stopAll cancels every reply being generated (closing, or changing the
// model).
func (a *App) stopAll() {
	for _, g := range a.gens {
		g.cancel()
	}
}

// samplingChanged is the sampling panel's report of new settings.
func (a *App) samplingChanged(p presets.Params, preset string) {
	a.sampling, a.preset = p.Clone(), preset
	if a.modelPath != "" {
		m, _ := a.settings.Model(a.modelPath)
		m.Sampling, m.Preset = a.sampling.Clone(), preset
		a.settings.SetModel(a.modelPath, m)
		a.saveSettings()
	}
	a.requestExplain()
}

// requestMessages is what the engine sees for the branch of c ending at
// leaf: the system prompt, then the turns. ids[i] is msgs[i]'s message ID
// ("" for the system prompt).
func requestMessages(c *store.Conversation, leaf string) (msgs []Message, ids []string) {
	if c.System != "" {
		msgs, ids = append(msgs, Message{Role: RoleSystem, Content: c.System}), append(ids, "")
	}
	for _, m := range pathTo(c, leaf) {
		msgs, ids = append(msgs, Message{Role: m.Role, Content: m.Content}), append(ids, m.ID)
	}
	return msgs, ids
}

// pathTo is the branch shown, cut after leaf ("" = the whole branch).
func pathTo(c *store.Conversation, leaf string) []store.Message {
	p := c.Path()
	if leaf == "" {
		return p
	}
	for i, m := range p {
		if m.ID == leaf {
			return p[:i+1]
		}
	}
	return p
}

// requestExplain asks for the next-token view of the conversation shown:
// the first token of the reply to the draft in the composer, else to the
// last question of the branch, else to an example question.
func (a *App) requestExplain() {
	if a.engine == nil || a.busy() {
		return
	}
	c := a.ensureConv()
	draft := strings.TrimSpace(a.chat.input.Text)
	var msgs []Message
	about := draft
	switch last := lastUser(c); {
	case draft != "":
		msgs, _ = requestMessages(c, "")
		msgs = append(msgs, Message{Role: RoleUser, Content: draft})
	case last != nil:
		msgs, _ = requestMessages(c, last.ID)
		about = last.Content
	default:
		msgs, _ = requestMessages(c, "")
		msgs = append(msgs, Message{Role: RoleUser, Content: explainPrompt})
		about = explainPrompt + " (an example; type a message to see its reply)"
	}
	a.next.SetSubject(about)
	a.explainer.request(Request{Messages: msgs, Sampling: a.sampling.Clone()})
}

// lastUser is the last user turn of the branch shown, or nil.
func lastUser(c *store.Conversation) *store.Message {
	p := c.Path()
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].Role == RoleUser {
			return &p[i]
		}
	}
	return nil
}

// explainPrompt stands in for a question when the conversation has none.
const explainPrompt = "Tell me a story."

// ensureConv returns the conversation shown, making a new one if none.
func (a *App) ensureConv() *store.Conversation {
	if a.conv == nil {
		a.newConversation()
	}
	return a.conv
}

func statusLabel() *widget.Label {
	l := widget.NewLabel("")
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}
