package chat

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// gonja unescapes string literals twice (once in its lexer, again in its
// parser) and ends a literal at any quote preceded by a backslash, so '\\'
// and '\\t' come out wrong. protectStrings decodes every literal that holds
// a backslash with Python's rules (jinja2 uses the unicode-escape codec) and
// puts a backslash-free placeholder in its place; the rewriter swaps the
// decoded text back in. Literals without a backslash pass through gonja
// unchanged.

var (
	rawOpen  = regexp.MustCompile(`^\{%[-+]?\s*raw\s*[-+]?%\}`)
	rawClose = regexp.MustCompile(`\{%[-+]?\s*endraw\s*[-+]?%\}`)
)

type literalScanner struct {
	src  string
	out  strings.Builder
	lits []string
}

// placeholder marks decoded literal n; NUL cannot occur in a sane template.
func placeholder(n int) string { return "\x00" + strconv.Itoa(n) + "\x00" }

func protectStrings(src string) (string, []string, error) {
	s := &literalScanner{src: src}
	for i := 0; i < len(src); {
		j := nextTag(src, i)
		if j < 0 {
			s.out.WriteString(src[i:])
			break
		}
		s.out.WriteString(src[i:j])
		var err error
		if i, err = s.construct(j); err != nil {
			return "", nil, err
		}
	}
	return s.out.String(), s.lits, nil
}

// nextTag finds the next "{{", "{%" or "{#" at or after i.
func nextTag(src string, i int) int {
	for {
		k := strings.IndexByte(src[i:], '{')
		if k < 0 || i+k+1 >= len(src) {
			return -1
		}
		i += k
		if c := src[i+1]; c == '{' || c == '%' || c == '#' {
			return i
		}
		i++
	}
}

// construct copies the comment, raw block or tag starting at j.
func (s *literalScanner) construct(j int) (int, error) {
	src := s.src
	switch {
	case src[j+1] == '#':
		return s.copyThrough(j, strings.Index(src[j:], "#}"), 2), nil
	case rawOpen.MatchString(src[j:]):
		loc := rawClose.FindStringIndex(src[j:])
		if loc == nil {
			return s.copyThrough(j, -1, 0), nil
		}
		return s.copyThrough(j, loc[0], loc[1]-loc[0]), nil
	case src[j+1] == '{':
		return s.tag(j, "}}")
	}
	return s.tag(j, "%}")
}

// copyThrough copies src[j:] up to offset end (relative to j) plus n bytes,
// or everything when end < 0.
func (s *literalScanner) copyThrough(j, end, n int) int {
	if end < 0 {
		s.out.WriteString(s.src[j:])
		return len(s.src)
	}
	s.out.WriteString(s.src[j : j+end+n])
	return j + end + n
}

// tag copies one {{ }} or {% %} tag, replacing string literals that need it
// and conditionals gonja cannot parse (conditional.go).
func (s *literalScanner) tag(j int, end string) (int, error) {
	src, depth := s.src, 0
	s.out.WriteString(src[j : j+2])
	var body strings.Builder
	for k := j + 2; k < len(src); {
		c := src[k]
		switch {
		case c == '\'' || c == '"':
			lit, next, err := s.literal(k)
			if err != nil {
				return 0, err
			}
			body.WriteString(lit)
			k = next
			continue
		case depth == 0 && strings.HasPrefix(src[k:], end):
			s.out.WriteString(rewriteConditionals(body.String()))
			s.out.WriteString(end)
			return k + len(end), nil
		case c == '(' || c == '[' || c == '{':
			depth++
		case (c == ')' || c == ']' || c == '}') && depth > 0:
			depth--
		}
		body.WriteByte(c)
		k++
	}
	s.out.WriteString(body.String())
	return len(src), nil
}

// literal reads the string literal whose opening quote is at k and returns
// its replacement text and the offset after it.
func (s *literalScanner) literal(k int) (string, int, error) {
	src, quote := s.src, s.src[k]
	i := k + 1
	for i < len(src) && src[i] != quote {
		if src[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(src) { // unterminated: leave it to gonja's error
		return src[k:], len(src), nil
	}
	body := src[k+1 : i]
	if !strings.ContainsRune(body, '\\') {
		return src[k : i+1], i + 1, nil
	}
	v, err := decodePyString(body)
	if err != nil {
		return "", 0, err
	}
	s.lits = append(s.lits, v)
	return `"` + placeholder(len(s.lits)-1) + `"`, i + 1, nil
}

// decodePyString applies Python's unicode-escape decoding to a literal body.
func decodePyString(body string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 == len(body) {
			b.WriteByte(body[i])
			continue
		}
		i++
		n, err := decodeEscape(&b, body[i:])
		if err != nil {
			return "", err
		}
		i += n - 1
	}
	return b.String(), nil
}

var simpleEscapes = map[byte]string{
	'\n': "", '\\': `\`, '\'': `'`, '"': `"`, 'a': "\a", 'b': "\b",
	'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
}

// decodeEscape decodes the escape whose letter starts s and returns how many
// bytes of s it used.
func decodeEscape(b *strings.Builder, s string) (int, error) {
	c := s[0]
	if v, ok := simpleEscapes[c]; ok {
		b.WriteString(v)
		return 1, nil
	}
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	switch {
	case c >= '0' && c <= '7':
		n := 1
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(s[:n], 8, 32)
		b.WriteRune(rune(v))
		return n, nil
	case width > 0:
		if len(s) <= width {
			return 0, literalError(c)
		}
		v, err := strconv.ParseUint(s[1:1+width], 16, 32)
		if err != nil || v > utf8.MaxRune {
			return 0, literalError(c)
		}
		if v >= 0xd800 && v < 0xdc00 {
			if lo, ok := lowSurrogate(s[1+width:]); ok {
				b.WriteRune(utf16.DecodeRune(rune(v), lo))
				return 1 + width + 6, nil
			}
		}
		writeCodePoint(b, rune(v))
		return 1 + width, nil
	case c == 'N':
		return 0, &Error{Kind: "TemplateSyntaxError", Msg: `\N{...} escapes are not supported`}
	}
	b.WriteByte('\\') // unknown escapes stay as written
	b.WriteByte(c)
	return 1, nil
}

func literalError(c byte) error {
	return &Error{Kind: "TemplateSyntaxError", Msg: "truncated \\" + string(c) + " escape"}
}

// writeCodePoint writes r; surrogates (from \ud83d\ude00 pairs, as Python
// sources spell astral characters) are paired up by decodeEscape, and a lone
// one, which a Go string cannot hold, becomes U+FFFD.
func writeCodePoint(b *strings.Builder, r rune) {
	if r >= 0xd800 && r <= 0xdfff {
		r = utf8.RuneError
	}
	b.WriteRune(r)
}

// lowSurrogate parses a following "\udcXX" escape, if any.
func lowSurrogate(s string) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:6], 16, 32)
	if err != nil || v < 0xdc00 || v > 0xdfff {
		return 0, false
	}
	return rune(v), true
}
