package ui

import (
	"image/color"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// codeColorPrefix starts the theme colour names of highlighted code: the
// name is the prefix and a chroma token type ("flowchat.code.KeywordType"),
// which codeTheme resolves through a chroma style for the theme variant.
const codeColorPrefix = "flowchat.code."

// Chroma styles for the two theme variants.
const (
	codeStyleDark  = "github-dark"
	codeStyleLight = "github"
)

// highlight splits code into RichText segments coloured by token type. An
// unknown lang is guessed from the text, and plain text stays plain.
func highlight(code, lang string) []widget.RichTextSegment {
	lexer := pickLexer(code, lang)
	it, err := chroma.Coalesce(lexer).Tokenise(nil, code)
	if err != nil {
		return []widget.RichTextSegment{codeText(code, chroma.Text)}
	}
	var segs []widget.RichTextSegment
	for tok := it(); tok != chroma.EOF; tok = it() {
		segs = append(segs, codeText(tok.Value, tok.Type))
	}
	return segs
}

func pickLexer(code, lang string) chroma.Lexer {
	if lang != "" {
		if l := lexers.Get(lang); l != nil {
			return l
		}
	}
	if l := lexers.Analyse(code); l != nil {
		return l
	}
	return lexers.Fallback
}

// codeText is one token: inline monospace text whose colour names the
// token type; bold and italic come from the light style (the dark one
// agrees on them).
func codeText(text string, tt chroma.TokenType) *widget.TextSegment {
	e := styles.Get(codeStyleLight).Get(tt)
	return &widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		Inline:    true,
		ColorName: fyne.ThemeColorName(codeColorPrefix + tt.String()),
		TextStyle: fyne.TextStyle{Monospace: true, Bold: e.Bold == chroma.Yes, Italic: e.Italic == chroma.Yes},
	}}
}

// codeTheme resolves code colour names and defers everything else to the
// app's theme, read at each call so theme changes apply.
type codeTheme struct{}

func (codeTheme) base() fyne.Theme { return fyne.CurrentApp().Settings().Theme() }

func (t codeTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	name, ok := strings.CutPrefix(string(n), codeColorPrefix)
	if !ok {
		return t.base().Color(n, v)
	}
	style := codeStyleLight
	if isDark(t.base().Color(theme.ColorNameBackground, v)) {
		style = codeStyleDark
	}
	tt, err := chroma.TokenTypeString(name)
	if e := styles.Get(style).Get(tt); err == nil && e.Colour.IsSet() {
		return color.NRGBA{R: e.Colour.Red(), G: e.Colour.Green(), B: e.Colour.Blue(), A: 0xff}
	}
	return t.base().Color(theme.ColorNameForeground, v)
}

// isDark reports whether c is a dark background. Asking the theme rather
// than trusting the variant argument also suits themes that fix their
// colours whatever the variant.
func isDark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return 299*r+587*g+114*b < 1000*0x8000 // ITU-R 601 luma below half
}

func (t codeTheme) Font(s fyne.TextStyle) fyne.Resource     { return t.base().Font(s) }
func (t codeTheme) Icon(n fyne.ThemeIconName) fyne.Resource { return t.base().Icon(n) }
func (t codeTheme) Size(n fyne.ThemeSizeName) float32       { return t.base().Size(n) }

// codeSegment is a fenced code block in a message: highlighted, with its
// language and a copy button. A message view keeps its code segments
// across re-renders of a streaming reply, so the block's widget is updated
// rather than rebuilt.
type codeSegment struct {
	Lang, Code string
	spans      []widget.RichTextSegment
}

func newCodeSegment(code, lang string) *codeSegment {
	return &codeSegment{Lang: lang, Code: code, spans: highlight(code, lang)}
}

// set changes the content, re-highlighting only when it changed.
func (c *codeSegment) set(code, lang string) {
	if c.Code == code && c.Lang == lang {
		return
	}
	c.Lang, c.Code, c.spans = lang, code, highlight(code, lang)
}

func (c *codeSegment) Inline() bool               { return false }
func (c *codeSegment) Textual() string            { return c.Code }
func (c *codeSegment) Visual() fyne.CanvasObject  { return newCodeBlock(c) }
func (c *codeSegment) Update(o fyne.CanvasObject) { o.(*codeBlock).show(c) }
func (c *codeSegment) Select(_, _ fyne.Position)  {}
func (c *codeSegment) SelectedText() string       { return c.Code }
func (c *codeSegment) Unselect()                  {}

// codeBlock draws a codeSegment: a header with the language and a copy
// button over the highlighted text, which scrolls sideways rather than
// wrapping.
type codeBlock struct {
	widget.BaseWidget
	seg  *codeSegment
	lang *widget.Label
	copy *widget.Button
	text *widget.RichText
}

func newCodeBlock(seg *codeSegment) *codeBlock {
	b := &codeBlock{lang: widget.NewLabel(""), text: widget.NewRichText()}
	b.lang.SizeName = theme.SizeNameCaptionText
	b.lang.Importance = widget.LowImportance
	b.copy = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { copyToClipboard(b.seg.Code) })
	b.copy.Importance = widget.LowImportance
	b.ExtendBaseWidget(b)
	b.show(seg)
	return b
}

func (b *codeBlock) show(seg *codeSegment) {
	b.seg = seg
	lang := seg.Lang
	if lang == "" {
		lang = "code"
	}
	b.lang.SetText(lang)
	b.text.Segments = seg.spans
	b.text.Refresh()
}

func (b *codeBlock) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRectangle(nil)
	bg.StrokeWidth = 1
	header := container.NewHBox(b.lang, layout.NewSpacer(), b.copy)
	body := container.NewBorder(header, nil, nil, nil, container.NewHScroll(b.text))
	themed := container.NewThemeOverride(body, codeTheme{})
	r := &codeBlockRenderer{WidgetRenderer: widget.NewSimpleRenderer(container.NewStack(bg, themed)), bg: bg}
	r.paint()
	return r
}

// codeBlockRenderer repaints the block's background from the theme at
// each refresh, so that a theme change (the desktop going dark) does not
// leave a light box behind dark text.
type codeBlockRenderer struct {
	fyne.WidgetRenderer
	bg *canvas.Rectangle
}

func (r *codeBlockRenderer) paint() {
	r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.bg.StrokeColor = theme.Color(theme.ColorNameInputBorder)
	r.bg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
}

func (r *codeBlockRenderer) Refresh() {
	r.paint()
	r.bg.Refresh()
	r.WidgetRenderer.Refresh()
}

// copyToClipboard puts text on the system clipboard.
func copyToClipboard(text string) {
	if a := fyne.CurrentApp(); a != nil {
		a.Clipboard().SetContent(text)
	}
}
