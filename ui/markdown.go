package ui

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"fyne.io/fyne/v2/widget"
)

// renderMarkdown parses md into RichText segments with Fyne's markdown
// renderer and swaps each code block for a highlighted codeSegment. reuse
// holds the previous render's code segments: the i-th block reuses the
// i-th segment, so its widget survives a streaming re-render.
func renderMarkdown(md string, reuse []*codeSegment) ([]widget.RichTextSegment, []*codeSegment) {
	segs := widget.NewRichTextFromMarkdown(md).Segments
	langs := codeLanguages(md)
	var codes []*codeSegment
	next := func(code string) *codeSegment {
		i := len(codes)
		lang := ""
		if i < len(langs) {
			lang = langs[i]
		}
		var c *codeSegment
		if i < len(reuse) {
			c = reuse[i]
			c.set(code, lang)
		} else {
			c = newCodeSegment(code, lang)
		}
		codes = append(codes, c)
		return c
	}
	return swapCode(segs, next), codes
}

// swapCode replaces code blocks depth first, in document order.
func swapCode(segs []widget.RichTextSegment, next func(code string) *codeSegment) []widget.RichTextSegment {
	for i, s := range segs {
		switch s := s.(type) {
		case *widget.CodeBlockSegment:
			segs[i] = next(s.Text)
		case *widget.ListSegment:
			s.Items = swapCode(s.Items, next)
		case *widget.ParagraphSegment:
			s.Texts = swapCode(s.Texts, next)
		}
	}
	return segs
}

// codeLanguages lists the info-string language of every non-empty code
// block of md in document order ("" for indented blocks), matching the
// blocks Fyne's renderer emits (it drops empty ones).
func codeLanguages(md string) []string {
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.TaskList, extension.Table)).Parser().Parse(text.NewReader(src))
	var langs []string
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Type() != ast.TypeBlock || n.Lines().Len() == 0 {
			return ast.WalkContinue, nil
		}
		switch b := n.(type) {
		case *ast.FencedCodeBlock:
			langs = append(langs, string(b.Language(src)))
		case *ast.CodeBlock:
			langs = append(langs, "")
		}
		return ast.WalkContinue, nil
	})
	return langs
}
