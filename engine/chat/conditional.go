package chat

import (
	"strings"

	"github.com/nikolalohinski/gonja/v2/nodes"
)

// gonja parses "a if c else b" only as a whole {{ }} or set expression, not
// inside brackets or arguments: (x if c else y), f(a if c else b),
// [a if c else b]. rewriteConditionals rewrites each such conditional in a
// tag's text into a call gonja can parse,
//
//	(A if C else B)  ->  (__ifelse__((C), (A), (B)))
//
// and the rewriter turns that call into C | @ifelse(k), which evaluates only
// the branch taken (branches[k]), as Python does.

const ifElseName = "__ifelse__"

// branch holds the two arms of one conditional; other is nil without else.
type branch struct{ then, other nodes.Expression }

// rewriteConditionals rewrites the conditionals inside brackets in s, the
// text of one tag (string literals are skipped; top-level ones are left to
// gonja).
func rewriteConditionals(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			j := skipString(s, i)
			b.WriteString(s[i:j])
			i = j
		case c == '(' || c == '[' || c == '{':
			j := matchBracket(s, i)
			if j < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteByte(c)
			b.WriteString(rewriteSegments(s[i+1 : j]))
			b.WriteByte(s[j])
			i = j + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// rewriteSegments handles a bracket's contents, one comma-, colon- or
// keyword-separated operand at a time.
func rewriteSegments(inner string) string {
	var b strings.Builder
	start := 0
	walkTopLevel(inner, func(i int) bool {
		if isSeparator(inner, i) {
			b.WriteString(rewriteOperand(inner[start:i]))
			b.WriteByte(inner[i])
			start = i + 1
		}
		return true
	})
	b.WriteString(rewriteOperand(inner[start:]))
	return b.String()
}

func isSeparator(s string, i int) bool {
	switch s[i] {
	case ',', ':':
		return true
	case '=': // a keyword argument, not ==, !=, <=, >=
		prev := i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0
		next := i+1 < len(s) && s[i+1] == '='
		return !prev && !next
	}
	return false
}

// rewriteOperand rewrites "A if C else B" (B may itself be conditional).
func rewriteOperand(op string) string {
	ifAt := findWord(op, "if", 0)
	if ifAt < 0 {
		return rewriteConditionals(op)
	}
	elseAt := findWord(op, "else", ifAt+2)
	a, c, rest := op[:ifAt], op[ifAt+2:], ""
	if elseAt >= 0 {
		c, rest = op[ifAt+2:elseAt], op[elseAt+4:]
	}
	lead := op[:len(op)-len(strings.TrimLeft(op, " \t\n"))]
	out := lead + ifElseName + "((" + rewriteConditionals(c) + "), (" + rewriteConditionals(strings.TrimLeft(a, " \t\n")) + ")"
	if elseAt >= 0 {
		out += ", (" + rewriteOperand(rest) + ")"
	}
	return out + ")"
}

// findWord finds keyword w at the top level of s from offset from.
func findWord(s, w string, from int) int {
	found := -1
	walkTopLevel(s, func(i int) bool {
		if i >= from && strings.HasPrefix(s[i:], w) && !identByte(s, i-1) && !identByte(s, i+len(w)) {
			found = i
			return false
		}
		return true
	})
	return found
}

func identByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// walkTopLevel calls f for each offset of s outside strings and nested
// brackets, until f returns false.
func walkTopLevel(s string, f func(i int) bool) {
	for i := 0; i < len(s); {
		switch s[i] {
		case '\'', '"':
			i = skipString(s, i)
			continue
		case '(', '[', '{':
			j := matchBracket(s, i)
			if j < 0 {
				return
			}
			i = j + 1
			continue
		}
		if !f(i) {
			return
		}
		i++
	}
}

// skipString returns the offset after the string literal starting at i.
func skipString(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j + 1
		}
	}
	return len(s)
}

// matchBracket returns the offset of the bracket closing the one at i, or -1.
func matchBracket(s string, i int) int {
	depth := 0
	for j := i; j < len(s); {
		switch s[j] {
		case '\'', '"':
			j = skipString(s, j)
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return j
			}
		}
		j++
	}
	return -1
}
