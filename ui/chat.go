package ui

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/store"
)

// Context policy choices as the chat header shows them.
var policyLabels = map[string]string{
	store.PolicyStop:       "Stop and tell me",
	store.PolicyDropOldest: "Leave out the oldest turns",
	store.PolicyShift:      "Shift: keep the start, drop the oldest text",
}

// chatView is the middle column: the conversation shown, its system
// prompt and context use, and the composer.
type chatView struct {
	a *App

	title    *widget.Label
	system   *widget.Entry
	policy   *widget.Select
	ctxBar   *meter
	ctxLabel *widget.Label
	banner   *widget.Label // why the last send did not go as asked

	messages *fyne.Container // messageViews, oldest first
	scroll   *container.Scroll
	empty    *widget.Label // shown until the first message
	views    map[string]*messageView
	pending  *messageView    // the reply being generated in this conversation
	outside  map[string]bool // messages left out of the last request's context

	input    *composer
	sendStop *widget.Button
	content  fyne.CanvasObject
}

func newChatView(a *App) *chatView {
	c := &chatView{a: a, views: map[string]*messageView{}, outside: map[string]bool{}}
	c.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.title.Truncation = fyne.TextTruncateEllipsis
	c.system = widget.NewMultiLineEntry()
	c.system.SetPlaceHolder("System prompt for this conversation (optional), e.g. “You are a concise assistant.”")
	c.system.Wrapping = fyne.TextWrapWord
	c.system.SetMinRowsVisible(2)
	c.system.OnChanged = c.systemChanged
	c.policy = widget.NewSelect([]string{policyLabels[store.PolicyStop], policyLabels[store.PolicyDropOldest], policyLabels[store.PolicyShift]}, c.policyChanged)
	c.ctxBar = newMeter()
	c.ctxLabel = widget.NewLabel("")
	c.ctxLabel.SizeName = theme.SizeNameCaptionText
	c.banner = widget.NewLabel("")
	c.banner.Importance = widget.WarningImportance
	c.banner.Wrapping = fyne.TextWrapWord
	c.banner.Hide()
	c.messages = container.NewVBox()
	c.scroll = container.NewVScroll(container.NewPadded(c.messages))
	c.empty = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{Italic: true})
	c.input = newComposer(c.send)
	c.input.onStop = a.stopReply
	c.input.OnChanged = func(string) { c.a.requestExplain() }
	c.sendStop = widget.NewButton("", c.sendOrStop)
	c.setBusy(false)
	c.content = c.layout()
	return c
}

// layout: header (title, system prompt, context), conversation, banner,
// composer with its button.
func (c *chatView) layout() fyne.CanvasObject {
	sys := widget.NewAccordion(widget.NewAccordionItem("System prompt & context", container.NewVBox(
		c.system,
		container.NewBorder(nil, nil, widget.NewLabel("When the context is full:"), nil, c.policy),
	)))
	ctx := container.NewBorder(nil, nil, nil, c.ctxLabel, container.NewVBox(layout.NewSpacer(), c.ctxBar, layout.NewSpacer()))
	header := container.NewVBox(c.title, ctx, sys)
	composerRow := container.NewBorder(nil, nil, nil,
		container.NewVBox(layout.NewSpacer(), c.sendStop), c.input)
	bottom := container.NewVBox(c.banner, container.NewPadded(composerRow))
	return container.NewBorder(container.NewPadded(header), bottom, nil, nil,
		container.NewStack(c.scroll, container.NewCenter(c.empty)))
}

func (c *chatView) setBusy(busy bool) {
	if busy {
		c.sendStop.SetText("Stop")
		c.sendStop.SetIcon(theme.MediaStopIcon())
		c.sendStop.Importance = widget.DangerImportance
	} else {
		c.sendStop.SetText("Send")
		c.sendStop.SetIcon(theme.MailSendIcon())
		c.sendStop.Importance = widget.HighImportance
	}
	c.sendStop.Refresh()
	for _, v := range c.views {
		v.SetInteractive(!busy)
	}
}

func (c *chatView) sendOrStop() {
	if c.a.busy() {
		c.a.stopReply()
		return
	}
	c.send()
}

// show displays conversation conv from scratch.
func (c *chatView) show() {
	conv := c.a.conv
	c.title.SetText(titleOf(conv))
	c.system.OnChanged = nil
	c.system.SetText(conv.System)
	c.system.OnChanged = c.systemChanged
	c.policy.OnChanged = nil
	c.policy.SetSelected(policyLabels[policyOf(conv)])
	c.policy.OnChanged = c.policyChanged
	c.outside = map[string]bool{}
	c.setBanner("")
	c.render()
	c.a.refreshContext()
}

func titleOf(c *store.Conversation) string {
	if c.Title == "" {
		return "New chat"
	}
	return c.Title
}

func policyOf(c *store.Conversation) string {
	if c.Policy == "" {
		return store.PolicyStop
	}
	return c.Policy
}

// render rebuilds the message views of the branch shown; while this
// conversation's reply is being generated, the branch ends at the turn it
// answers, followed by the reply so far.
func (c *chatView) render() {
	conv := c.a.conv
	g := c.a.cur()
	generating := g != nil
	leaf := ""
	if generating {
		leaf = g.parent
	}
	c.views = map[string]*messageView{}
	c.pending = nil
	var objs []fyne.CanvasObject
	for _, m := range pathTo(conv, leaf) {
		v := c.viewFor(conv, m)
		c.views[m.ID] = v
		objs = append(objs, v)
	}
	if generating {
		c.pending = newMessageView(g.reply.ID, RoleAssistant, g.reply.Model, g.text, messageActions{})
		objs = append(objs, c.pending)
	}
	c.messages.Objects = objs
	c.messages.Refresh()
	c.updateEmpty()
	c.setBusy(c.a.busy())
	c.scroll.ScrollToBottom()
}

func (c *chatView) updateEmpty() {
	switch {
	case len(c.messages.Objects) > 0:
		c.empty.Hide()
		return
	case c.a.engine == nil:
		c.empty.SetText("Load a model in the Model tab to start chatting")
	default:
		c.empty.SetText("Start a conversation with " + c.a.engine.Info().Name)
	}
	c.empty.Show()
}

// viewFor makes the view of stored message m.
func (c *chatView) viewFor(conv *store.Conversation, m store.Message) *messageView {
	id := m.ID
	act := messageActions{branch: func(d int) { c.a.switchBranch(id, d) }}
	author := "You"
	if m.Role == RoleUser {
		act.edit = func(text string) { c.a.editAndResend(id, text) }
	} else {
		act.regenerate = func() { c.a.regenerate(id) }
		author = m.Model
		if author == "" {
			author = "Assistant"
		}
	}
	body := m.Content
	if body == "" && m.Role == RoleAssistant {
		body = "*no reply*"
	}
	v := newMessageView(id, m.Role, author, body, act)
	v.markdown = m.Content // copy the text as stored, not the placeholder
	sibs, i := conv.Siblings(id)
	v.SetVersions(i, len(sibs))
	v.SetFooter(messageFooter(m))
	if m.Error != "" {
		v.SetError(fmt.Errorf("%s", m.Error))
	}
	if c.outside[id] {
		v.SetNote(outsideNote)
	}
	return v
}

// outsideNote marks turns left out of the context window.
const outsideNote = "Left out of the model's context window: the model did not see this turn."

// messageFooter is the stats line of a stored message.
func messageFooter(m store.Message) string {
	if m.Stats == nil {
		if m.Interrupted {
			return "interrupted"
		}
		return ""
	}
	s := formatStats(fromStoreStats(m.Stats))
	switch {
	case m.Stats.StopReason == StopCancelled:
		s += " · stopped"
	case m.Stats.StopReason == StopContext:
		s += " · cut off: context window full"
	case m.Stats.StopReason == StopLength:
		s += " · reached the max tokens setting"
	case m.Interrupted:
		s += " · interrupted"
	}
	return s
}

// setBanner shows a warning above the composer; "" hides it.
func (c *chatView) setBanner(s string) { setOptional(c.banner, s) }

// atBottom reports whether the newest text is in view, within two lines,
// so that streaming follows the reply only if the user has not scrolled up.
func (c *chatView) atBottom() bool {
	slack := c.input.Theme().Size(theme.SizeNameText) * 2
	return c.scroll.Offset.Y+c.scroll.Size().Height+slack >= c.scroll.Content.MinSize().Height
}

// focusComposer puts the keyboard back in the composer, when on a canvas.
func (c *chatView) focusComposer() {
	if cv := fyne.CurrentApp().Driver().CanvasForObject(c.input); cv != nil {
		cv.Focus(c.input)
	}
}

func (c *chatView) systemChanged(s string) {
	conv := c.a.ensureConv()
	conv.System = s
	c.a.saveConv(conv, nil)
	c.a.refreshContext()
}

func (c *chatView) policyChanged(label string) {
	conv := c.a.ensureConv()
	for p, l := range policyLabels {
		if l == label {
			conv.Policy = p
		}
	}
	c.a.saveConv(conv, nil)
	c.a.refreshContext()
}

// setContext shows n of size tokens in use; over the limit it says what
// sending will do.
func (c *chatView) setContext(n, size int) {
	if size <= 0 {
		c.ctxBar.Set(0, widget.MediumImportance)
		c.ctxLabel.SetText("context: no model")
		return
	}
	// The conversation can count more tokens than the window (a reply
	// that filled it, plus the template's closing tokens): the window is
	// then full, never over 100%.
	text := fmt.Sprintf("context %s / %s tokens", groupDigits(min(n, size)), groupDigits(size))
	c.ctxLabel.Importance = widget.MediumImportance
	defer func() { c.ctxBar.Set(float64(min(n, size))/float64(size), c.ctxLabel.Importance) }()
	if n >= size {
		c.ctxLabel.Importance = widget.DangerImportance
		switch policyOf(c.a.ensureConv()) {
		case store.PolicyStop:
			text += " · full: sending stops"
		case store.PolicyShift:
			text += " · full: the oldest text shifts out"
		default:
			text += " · full: oldest turns left out"
		}
	} else if n*10 >= size*9 {
		c.ctxLabel.Importance = widget.WarningImportance
		text += " · nearly full"
	}
	c.ctxLabel.SetText(text)
}

// groupDigits writes n with thin spaces between thousands: 12 345.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "\u202f" + s[i:]
	}
	return s
}

// meter is a thin bar showing a fraction, coloured by importance
// (primary, warning, danger).
type meter struct {
	widget.BaseWidget
	value float64 // 0..1
	level widget.Importance
}

func newMeter() *meter {
	m := &meter{}
	m.ExtendBaseWidget(m)
	return m
}

// Set shows v (clamped to 0..1) in the colour of level.
func (m *meter) Set(v float64, level widget.Importance) {
	m.value, m.level = min(max(v, 0), 1), level
	m.Refresh()
}

func (m *meter) CreateRenderer() fyne.WidgetRenderer {
	r := &meterRenderer{m: m, bg: canvas.NewRectangle(color.Transparent), fill: canvas.NewRectangle(color.Transparent)}
	r.Refresh()
	return r
}

type meterRenderer struct {
	m        *meter
	bg, fill *canvas.Rectangle
}

// meterHeight is the bar's thickness in theme padding units.
const meterHeight = 1.5

func (r *meterRenderer) MinSize() fyne.Size {
	return fyne.NewSize(40, meterHeight*r.m.Theme().Size(theme.SizeNamePadding))
}

func (r *meterRenderer) Layout(s fyne.Size) {
	r.bg.Resize(s)
	r.fill.Resize(fyne.NewSize(s.Width*float32(r.m.value), s.Height))
}

func (r *meterRenderer) Refresh() {
	th, v := r.m.Theme(), fyne.CurrentApp().Settings().ThemeVariant()
	name := theme.ColorNamePrimary
	switch r.m.level {
	case widget.WarningImportance:
		name = theme.ColorNameWarning
	case widget.DangerImportance:
		name = theme.ColorNameError
	}
	r.bg.FillColor, r.fill.FillColor = th.Color(theme.ColorNameInputBackground, v), th.Color(name, v)
	radius := r.MinSize().Height / 2
	r.bg.CornerRadius, r.fill.CornerRadius = radius, radius
	r.Layout(r.m.Size())
	r.bg.Refresh()
	r.fill.Refresh()
}

func (r *meterRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.bg, r.fill} }
func (r *meterRenderer) Destroy()                     {}
