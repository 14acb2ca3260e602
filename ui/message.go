package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// pendingMarkdown stands in for a reply that has not produced text yet.
const pendingMarkdown = "*…*"

// messageView shows one turn: who spoke, the markdown body, and a footer
// for stats and errors, on a rounded background tinted by role.
type messageView struct {
	widget.BaseWidget
	role     string
	markdown string // what body shows, re-parsed whole on every change

	author *widget.Label
	body   *widget.RichText
	footer *widget.Label
	errMsg *widget.Label
}

func newMessageView(role, author, markdown string) *messageView {
	m := &messageView{
		role:   role,
		author: widget.NewLabelWithStyle(author, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		body:   widget.NewRichText(),
		footer: widget.NewLabel(""),
		errMsg: widget.NewLabel(""),
	}
	m.body.Wrapping = fyne.TextWrapWord
	m.footer.Importance = widget.LowImportance
	m.footer.SizeName = theme.SizeNameCaptionText
	m.footer.Hide()
	m.errMsg.Importance = widget.DangerImportance
	m.errMsg.Wrapping = fyne.TextWrapWord
	m.errMsg.Hide()
	m.ExtendBaseWidget(m)
	m.SetMarkdown(markdown)
	return m
}

// SetMarkdown replaces the body; an empty body shows the pending marker.
func (m *messageView) SetMarkdown(md string) {
	m.markdown = md
	if md == "" {
		md = pendingMarkdown
	}
	m.body.ParseMarkdown(md)
}

// Markdown returns the body as last set.
func (m *messageView) Markdown() string { return m.markdown }

// SetFooter shows a small line under the body; "" hides it.
func (m *messageView) SetFooter(s string) { setOptional(m.footer, s) }

// SetError shows err under the body in the danger colour.
func (m *messageView) SetError(err error) { setOptional(m.errMsg, "⚠ "+err.Error()) }

func setOptional(l *widget.Label, s string) {
	l.SetText(s)
	if s == "" {
		l.Hide()
	} else {
		l.Show()
	}
}

func (m *messageView) CreateRenderer() fyne.WidgetRenderer {
	r := &messageRenderer{
		m:   m,
		bg:  canvas.NewRectangle(color.Transparent),
		box: container.NewVBox(m.author, m.body, m.errMsg, m.footer),
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
