package grammar

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("grammar")

// Bounds on what a grammar may expand to (llama.cpp caps repetitions at
// 2000 too); a grammar beyond them is refused, not truncated.
const (
	maxRepeat = 2000
	maxElems  = 1 << 20
)

type elemKind uint8

const (
	eEnd  elemKind = iota // end of an alternative
	eAlt                  // separates alternatives while parsing; never in a Grammar
	eRef                  // ref: a rule index
	eChar                 // a code point in ranges[lo:hi] (not in them, when neg)
)

// elem is one grammar element; a rule's alternatives are runs of them,
// each ending in eEnd.
type elem struct {
	kind   elemKind
	neg    bool
	ref    int32
	lo, hi int32
}

// span is an inclusive range of code points.
type span struct{ lo, hi rune }

// Grammar is a parsed, checked grammar. It is read-only: any number of
// Matchers may share one.
type Grammar struct {
	elems  []elem
	ranges []span
	alts   [][]int32 // per rule: the index in elems of each alternative's first element
	names  []string
	root   int32
}

// Rules is the number of rules, the generated ones (groups, repetitions)
// included.
func (g *Grammar) Rules() int { return len(g.alts) }

// parser reads GBNF into per-rule element lists (alternatives separated by
// eAlt), creating rules for groups and repetitions as it goes.
type parser struct {
	src     string
	pos     int
	ids     map[string]int32
	names   []string
	rules   [][]elem
	defined []bool
	ranges  []span
	size    int
}

// Parse reads a GBNF grammar whose start rule is root.
func Parse(src string) (*Grammar, error) {
	p := &parser{src: src, ids: map[string]int32{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.finish()
}

func (p *parser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.src[:min(p.pos, len(p.src))], "\n")
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, line, fmt.Sprintf(format, args...))
}

func (p *parser) parse() error {
	p.space(true)
	for p.pos < len(p.src) {
		if err := p.rule(); err != nil {
			return err
		}
		p.space(true)
	}
	return nil
}

func (p *parser) rule() error {
	name := p.name()
	if name == "" {
		return p.errorf("expecting a rule name at %q", p.near())
	}
	p.space(false)
	if !strings.HasPrefix(p.src[p.pos:], "::=") {
		return p.errorf("expecting ::= after %q", name)
	}
	p.pos += 3
	p.space(true)
	id := p.id(name)
	if p.defined[id] {
		return p.errorf("rule %q is defined twice", name)
	}
	body, err := p.alternates(name, false)
	if err != nil {
		return err
	}
	p.define(id, body)
	if p.pos < len(p.src) && p.src[p.pos] == '\r' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] != '\n' {
		return p.errorf("expecting the end of the line at %q", p.near())
	}
	return nil
}

func (p *parser) near() string {
	s := p.src[p.pos:]
	if len(s) > 20 {
		s = s[:20]
	}
	return s
}

// space skips blanks and comments, and line ends when newlines is set.
func (p *parser) space(newlines bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case newlines && (c == '\r' || c == '\n'):
			p.pos++
		default:
			return
		}
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func (p *parser) name() string {
	start := p.pos
	for p.pos < len(p.src) && isWordChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// id is the index of the rule called name, creating it on first sight.
func (p *parser) id(name string) int32 {
	if id, ok := p.ids[name]; ok {
		return id
	}
	id := int32(len(p.names))
	p.ids[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	p.defined = append(p.defined, false)
	return id
}

// generated creates a fresh rule named after base.
func (p *parser) generated(base string) int32 {
	for i := len(p.names); ; i++ {
		name := base + "_" + strconv.Itoa(i)
		if _, taken := p.ids[name]; !taken {
			return p.id(name)
		}
	}
}

func (p *parser) define(id int32, body []elem) {
	p.rules[id], p.defined[id] = body, true
}

func (p *parser) alternates(name string, nested bool) ([]elem, error) {
	var out []elem
	for {
		seq, err := p.sequence(name, nested)
		if err != nil {
			return nil, err
		}
		out = append(out, seq...)
		if p.pos >= len(p.src) || p.src[p.pos] != '|' {
			return out, nil
		}
		out = append(out, elem{kind: eAlt})
		p.pos++
		p.space(true)
	}
}

// sequence reads symbols up to "|", ")" or the end of the line. last is
// where the most recent symbol starts, for a repetition operator.
func (p *parser) sequence(name string, nested bool) ([]elem, error) {
	var out []elem
	last := -1
	for p.pos < len(p.src) {
		start := len(out)
		var err error
		switch c := p.src[p.pos]; {
		case c == '"':
			out, err = p.literal(out)
		case c == '[':
			out, err = p.class(out)
		case c == '.':
			p.pos++
			out = append(out, elem{kind: eChar, neg: true, lo: int32(len(p.ranges)), hi: int32(len(p.ranges))})
		case c == '(':
			out, err = p.group(out, name)
		case isWordChar(c):
			out = append(out, elem{kind: eRef, ref: p.id(p.name())})
		case c == '*' || c == '+' || c == '?' || c == '{':
			if last < 0 {
				return nil, p.errorf("%q has nothing before it to repeat", c)
			}
			out, err = p.repetition(out, last, name)
			start = last
		default:
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if p.size += len(out) - start; p.size > maxElems {
			return nil, p.errorf("the grammar expands to more than %d elements", maxElems)
		}
		last = start
		p.space(nested)
	}
	return out, nil
}

func (p *parser) literal(out []elem) ([]elem, error) {
	p.pos++
	for p.pos < len(p.src) && p.src[p.pos] != '"' {
		r, err := p.char()
		if err != nil {
			return nil, err
		}
		out = append(out, p.charElem(false, span{r, r}))
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf("unterminated string literal")
	}
	p.pos++
	return out, nil
}

func (p *parser) charElem(neg bool, spans ...span) elem {
	lo := int32(len(p.ranges))
	p.ranges = append(p.ranges, spans...)
	return elem{kind: eChar, neg: neg, lo: lo, hi: int32(len(p.ranges))}
}

func (p *parser) class(out []elem) ([]elem, error) {
	p.pos++
	neg := p.pos < len(p.src) && p.src[p.pos] == '^'
	if neg {
		p.pos++
	}
	var spans []span
	for p.pos < len(p.src) && p.src[p.pos] != ']' {
		lo, err := p.char()
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			if hi, err = p.char(); err != nil {
				return nil, err
			}
		}
		spans = append(spans, span{lo, hi})
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf("unterminated character class")
	}
	p.pos++
	return append(out, p.charElem(neg, spans...)), nil
}

// char reads one code point of a literal or class, escapes included.
func (p *parser) char() (rune, error) {
	if p.src[p.pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && n == 1 {
			return 0, p.errorf("invalid UTF-8")
		}
		p.pos += n
		return r, nil
	}
	if p.pos+1 >= len(p.src) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case 'x':
		return p.hex(2)
	case 'u':
		return p.hex(4)
	case 'U':
		return p.hex(8)
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'n':
		return '\n', nil
	case '\\', '"', '[', ']', '-', '^', '/':
		return rune(c), nil
	}
	return 0, p.errorf("unknown escape \\%c", c)
}

func (p *parser) hex(n int) (rune, error) {
	if p.pos+n > len(p.src) {
		return 0, p.errorf("expecting %d hex digits", n)
	}
	v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
	if err != nil || v > utf8.MaxRune {
		return 0, p.errorf("bad hex escape %q", p.src[p.pos:p.pos+n])
	}
	p.pos += n
	return rune(v), nil
}

func (p *parser) group(out []elem, name string) ([]elem, error) {
	p.pos++
	p.space(true)
	id := p.generated(name)
	body, err := p.alternates(name, true)
	if err != nil {
		return nil, err
	}
	if p.pos >= len(p.src) || p.src[p.pos] != ')' {
		return nil, p.errorf("expecting ) at %q", p.near())
	}
	p.pos++
	p.define(id, body)
	return append(out, elem{kind: eRef, ref: id}), nil
}

// repetition reads * + ? {m} {m,} {m,n} and rewrites the symbol at
// out[last:] as llama.cpp does: m copies, then either a rule
// R ::= sym R | ε (no upper bound) or n-m nested optional rules.
func (p *parser) repetition(out []elem, last int, name string) ([]elem, error) {
	lo, hi, err := p.bounds()
	if err != nil {
		return nil, err
	}
	sym := append([]elem(nil), out[last:]...)
	out = out[:last]
	if p.size += len(sym) * lo; p.size > maxElems {
		return nil, p.errorf("the grammar expands to more than %d elements", maxElems)
	}
	for range lo {
		out = append(out, sym...)
	}
	if hi < 0 {
		id := p.generated(name)
		p.define(id, append(append(append([]elem(nil), sym...), elem{kind: eRef, ref: id}), elem{kind: eAlt}))
		return append(out, elem{kind: eRef, ref: id}), nil
	}
	var next int32 = -1
	for range hi - lo {
		id := p.generated(name)
		body := append([]elem(nil), sym...)
		if next >= 0 {
			body = append(body, elem{kind: eRef, ref: next})
		}
		p.define(id, append(body, elem{kind: eAlt}))
		if p.size += len(body) + 1; p.size > maxElems {
			return nil, p.errorf("the grammar expands to more than %d elements", maxElems)
		}
		next = id
	}
	if next >= 0 {
		out = append(out, elem{kind: eRef, ref: next})
	}
	return out, nil
}

// bounds reads a repetition operator; hi = -1 is unbounded.
func (p *parser) bounds() (lo, hi int, err error) {
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '*':
		return 0, -1, nil
	case '+':
		return 1, -1, nil
	case '?':
		return 0, 1, nil
	}
	p.space(false)
	if lo, err = p.int(); err != nil {
		return 0, 0, err
	}
	hi = lo
	p.space(false)
	if p.pos < len(p.src) && p.src[p.pos] == ',' {
		p.pos++
		p.space(false)
		hi = -1
		if p.pos < len(p.src) && p.src[p.pos] != '}' {
			if hi, err = p.int(); err != nil {
				return 0, 0, err
			}
		}
		p.space(false)
	}
	if p.pos >= len(p.src) || p.src[p.pos] != '}' {
		return 0, 0, p.errorf("expecting } at %q", p.near())
	}
	p.pos++
	if hi >= 0 && hi < lo {
		return 0, 0, p.errorf("repetition {%d,%d} has its maximum below its minimum", lo, hi)
	}
	return lo, hi, nil
}

func (p *parser) int() (int, error) {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > maxRepeat {
		return 0, p.errorf("expecting a repetition count in [0, %d] at %q", maxRepeat, p.src[start:])
	}
	return n, nil
}
