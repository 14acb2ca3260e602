package tokenizer

import (
	"fmt"
	"strings"

	"github.com/dlclark/regexp2"
)

// Category classes llama.cpp rewrites before handing a regex to std::regex:
// \p{X} becomes its stand-in character plus the ASCII members of X.
var categoryStandIn = map[cptFlags]rune{
	fNumber: 0xD1, fLetter: 0xD2, fPunct: 0xD3, fAccent: 0xD4, fSymbol: 0xD5,
}

var categoryClasses = map[string]string{
	`\p{N}`: "\u00D1" + `0-9`,
	`\p{L}`: "\u00D2" + `A-Za-z`,
	`\p{P}`: "\u00D3" + `!-#%-*,-/:-;?-@\[-\]_\{\}`,
	`\p{M}`: "\u00D4",
	`\p{S}`: "\u00D5" + `\$\+<->\^` + "`" + `\|`,
}

// regexStep runs one expression with a backtracking engine, over the
// collapsed text when the expression names Unicode categories and over the
// wide text otherwise (llama.cpp: std::regex vs std::wregex).
type regexStep struct {
	re        *regexp2.Regexp
	collapsed bool
}

func newRegexStep(expr string) (*regexStep, error) {
	s := &regexStep{collapsed: usesCategories(expr)}
	if s.collapsed {
		for _, r := range expr {
			if r >= 128 {
				return nil, fmt.Errorf("%w: regex mixes categories and non-ASCII: %q", ErrUnsupported, expr)
			}
		}
		expr = collapseRegex(expr)
	}
	re, err := regexp2.Compile(asciiSpaceClasses(expr), regexp2.ECMAScript)
	if err != nil {
		return nil, fmt.Errorf("%w: regex %q: %v", ErrUnsupported, expr, err)
	}
	s.re = re
	return s, nil
}

func usesCategories(expr string) bool {
	for k := range categoryClasses {
		if strings.Contains(expr, k) {
			return true
		}
	}
	return false
}

// collapseRegex is llama.cpp's rewrite of \p{X} for the collapsed text: a
// class of its own outside brackets, its members inside them.
func collapseRegex(expr string) string {
	var b strings.Builder
	inside := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '[' && (i == 0 || expr[i-1] != '\\') {
			b.WriteByte(c)
			inside = true
			continue
		}
		if inside && c == ']' && expr[i-1] != '\\' {
			b.WriteByte(c)
			inside = false
			continue
		}
		if c == '\\' && i+4 < len(expr) && expr[i+1] == 'p' && expr[i+2] == '{' && expr[i+4] == '}' {
			if cls, ok := categoryClasses[expr[i:i+5]]; ok {
				if !inside {
					cls = "[" + cls + "]"
				}
				b.WriteString(cls)
				i += 4
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// asciiSpaceClasses spells \s and \S out as the six ASCII whitespace bytes,
// which is what they match in std::regex under the C locale (ECMAScript's
// \s in regexp2 would also match Unicode spaces).
func asciiSpaceClasses(expr string) string {
	const ws = `\t\n\v\f\r `
	var b strings.Builder
	inside := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr):
			switch next := expr[i+1]; {
			case next == 's' && inside:
				b.WriteString(ws)
			case next == 's':
				b.WriteString("[" + ws + "]")
			case next == 'S' && !inside:
				b.WriteString("[^" + ws + "]")
			default:
				b.WriteByte(c)
				b.WriteByte(next)
			}
			i++
			continue
		case c == '[':
			inside = true
		case c == ']':
			inside = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// split is llama.cpp's unicode_regex_split_stl: matches and the gaps
// between them both become segments.
func (s *regexStep) split(in *splitText, offsets []int) []int {
	text := in.wideText()
	if s.collapsed {
		text = in.collapsedText()
	}
	out := make([]int, 0, len(offsets))
	start := 0
	for _, off := range offsets {
		seg := text[start : start+off]
		prev := 0
		m, _ := s.re.FindRunesMatch(seg)
		for m != nil {
			if m.Index > prev {
				out = append(out, m.Index-prev)
			}
			if m.Length > 0 {
				out = append(out, m.Length)
			}
			prev = m.Index + m.Length
			m, _ = s.re.FindNextMatch(m)
		}
		if prev < off {
			out = append(out, off-prev)
		}
		start += off
	}
	return out
}
