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
)

// pendingMarkdown stands in for a reply that has not produced text yet.
const pendingMarkdown = "*…*"

// messageActions are what a message's buttons do; nil hides a button.
type messageActions struct {
	edit       func(text string) // resend the user's message edited
	regenerate func()
	branch     func(delta int) // show the previous (-1) or next (+1) version
}

// messageView shows one turn: who spoke, its actions and version
// navigator, the markdown body, and lines for notes, errors and stats, on
// a rounded background tinted by role.
type messageView struct {
	widget.BaseWidget
	id, role string
	markdown string         // what body shows, re-parsed whole on every change
	codes    []*codeSegment // body's code blocks, reused across re-renders
	act      messageActions

	author   *widget.Label
	prev     *widget.Button
	version  *widget.Label
	next     *widget.Button
	copyBtn  *widget.Button
	editBtn  *widget.Button
	regenBtn *widget.Button
	body     *widget.RichText
	editor   *widget.Entry
	editBar  *fyne.Container
	note     *widget.Label // e.g. left out of the context window
	footer   *widget.Label
	errMsg   *widget.Label
}

func newMessageView(id, role, author, markdown string, act messageActions) *messageView {
	m := &messageView{id: id, role: role, act: act,
		author: widget.NewLabelWithStyle(author, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		body:   widget.NewRichText(), version: widget.NewLabel(""),
		footer: widget.NewLabel(""), errMsg: widget.NewLabel(""), note: widget.NewLabel(""),
	}
	m.body.Wrapping = fyne.TextWrapWord
	m.buildButtons()
	m.buildEditor()
	m.footer.Importance = widget.LowImportance
	m.footer.SizeName = theme.SizeNameCaptionText
	m.footer.Hide()
	m.note.Importance = widget.WarningImportance
	m.note.SizeName = theme.SizeNameCaptionText
	m.note.Hide()
	m.errMsg.Importance = widget.DangerImportance
	m.errMsg.Wrapping = fyne.TextWrapWord
	m.errMsg.Hide()
	m.ExtendBaseWidget(m)
	m.SetMarkdown(markdown)
	m.SetVersions(0, 1)
	return m
}

func smallButton(label string, icon fyne.Resource, tapped func()) *widget.Button {
	b := widget.NewButtonWithIcon(label, icon, tapped)
	b.Importance = widget.LowImportance
	return b
}

func (m *messageView) buildButtons() {
	m.copyBtn = smallButton("", theme.ContentCopyIcon(), func() { copyToClipboard(m.markdown) })
	m.prev = smallButton("", theme.NavigateBackIcon(), func() { m.act.branch(-1) })
	m.next = smallButton("", theme.NavigateNextIcon(), func() { m.act.branch(+1) })
	m.editBtn = smallButton("", theme.DocumentCreateIcon(), m.startEdit)
	m.regenBtn = smallButton("", theme.ViewRefreshIcon(), func() { m.act.regenerate() })
	if m.act.edit == nil {
		m.editBtn.Hide()
	}
	if m.act.regenerate == nil {
		m.regenBtn.Hide()
	}
}

func (m *messageView) buildEditor() {
	m.editor = widget.NewMultiLineEntry()
	m.editor.Wrapping = fyne.TextWrapWord
	send := widget.NewButtonWithIcon("Send", theme.MailSendIcon(), m.finishEdit)
	send.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", m.cancelEdit)
	m.editBar = container.NewHBox(layout.NewSpacer(), cancel, send)
	m.editor.Hide()
	m.editBar.Hide()
}

// SetMarkdown replaces the body; an empty body shows the pending marker.
func (m *messageView) SetMarkdown(md string) {
	m.markdown = md
	if md == "" {
		md = pendingMarkdown
	}
	m.body.Segments, m.codes = renderMarkdown(md, m.codes)
	m.body.Refresh()
}

// Markdown returns the body as last set.
func (m *messageView) Markdown() string { return m.markdown }

// SetVersions shows the ‹ i/n › navigator (index from 0) when there is
// more than one version of this turn.
func (m *messageView) SetVersions(i, n int) {
	if n <= 1 || m.act.branch == nil {
		m.prev.Hide()
		m.version.Hide()
		m.next.Hide()
		return
	}
	m.version.SetText(fmt.Sprintf("%d/%d", i+1, n))
	m.prev.Show()
	m.version.Show()
	m.next.Show()
	setEnabled(m.prev, i > 0)
	setEnabled(m.next, i < n-1)
}

// SetInteractive enables or disables the actions that start a reply or
// change the branch (not copying), e.g. while a reply is being generated.
func (m *messageView) SetInteractive(on bool) {
	for _, b := range []*widget.Button{m.editBtn, m.regenBtn} {
		setEnabled(b, on)
	}
	if !on {
		setEnabled(m.prev, false)
		setEnabled(m.next, false)
	}
}

func setEnabled(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

func (m *messageView) startEdit() {
	m.editor.SetText(m.markdown)
	m.body.Hide()
	m.editor.Show()
	m.editBar.Show()
	if c := fyne.CurrentApp().Driver().CanvasForObject(m); c != nil {
		c.Focus(m.editor)
	}
}

func (m *messageView) cancelEdit() {
	m.editor.Hide()
	m.editBar.Hide()
	m.body.Show()
}

func (m *messageView) finishEdit() {
	text := m.editor.Text
	m.cancelEdit()
	if text != m.markdown && m.act.edit != nil {
		m.act.edit(text)
	}
}

// SetFooter shows a small line under the body; "" hides it.
func (m *messageView) SetFooter(s string) { setOptional(m.footer, s) }

// SetNote shows a warning line under the body; "" hides it.
func (m *messageView) SetNote(s string) { setOptional(m.note, s) }

// SetError shows err under the body in the danger colour; nil hides it.
func (m *messageView) SetError(err error) {
	if err == nil {
		setOptional(m.errMsg, "")
		return
	}
	setOptional(m.errMsg, "⚠ "+err.Error())
}

func setOptional(l *widget.Label, s string) {
	l.SetText(s)
	if s == "" {
		l.Hide()
	} else {
		l.Show()
	}
}

func (m *messageView) CreateRenderer() fyne.WidgetRenderer {
	header := container.NewHBox(m.author, layout.NewSpacer(), m.prev, m.version, m.next, m.copyBtn, m.editBtn, m.regenBtn)
	r := &messageRenderer{
		m:   m,
		bg:  canvas.NewRectangle(color.Transparent),
		box: container.NewVBox(header, m.body, m.editor, m.editBar, m.note, m.errMsg, m.footer),
	}
	r.applyTheme()
	return r
}

// messageRenderer draws the bubble: the background fills the widget, less
// an indent on the left for the user's turns so the two voices read apart,
// and the content sits inset by the theme padding.
type messageRenderer struct {
	m   *messageView
	bg  *canvas.Rectangle
	box *fyne.Container
}

func (r *messageRenderer) inset() float32 { return r.m.Theme().Size(theme.SizeNamePadding) }

// indent is the left margin of the user's bubbles.
func (r *messageRenderer) indent() float32 {
	if r.m.role != RoleUser {
		return 0
	}
	return 12 * r.inset()
}

func (r *messageRenderer) Layout(size fyne.Size) {
	in, left := r.inset(), r.indent()
	r.bg.Move(fyne.NewPos(left, 0))
	r.bg.Resize(size.SubtractWidthHeight(left, 0))
	r.box.Move(fyne.NewPos(left+in, in/2))
	r.box.Resize(size.SubtractWidthHeight(left+2*in, in))
}

func (r *messageRenderer) MinSize() fyne.Size {
	in := r.inset()
	return r.box.MinSize().AddWidthHeight(r.indent()+2*in, in)
}

func (r *messageRenderer) Refresh() {
	r.applyTheme()
	r.bg.Refresh()
	r.box.Refresh()
}

func (r *messageRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.bg, r.box} }

func (r *messageRenderer) Destroy() {}

func (r *messageRenderer) applyTheme() {
	th := r.m.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.bg.CornerRadius = 2 * th.Size(theme.SizeNameInputRadius)
	r.bg.FillColor = th.Color(theme.ColorNameInputBackground, v)
	if r.m.role == RoleUser {
		r.bg.FillColor = withAlpha(th.Color(theme.ColorNamePrimary, v), 0x40)
	}
}

// withAlpha returns c at the given opacity (0-255), un-premultiplied.
func withAlpha(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}
