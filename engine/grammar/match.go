package grammar

import (
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// maxStacks bounds the live parses of one state. An ambiguous grammar can
// keep many stacks alive; past the bound the extra ones are dropped (the
// state stays non-empty, so matching goes on with the parses kept).
const maxStacks = 4096

// stack is one parse: element positions, the next element to match on
// top (last). Stacks are never modified once built, so states share them.
type stack []int32

// State is where a match stands: the live parses and an incomplete UTF-8
// sequence carried over from the previous bytes. States are values: a
// Matcher derives new ones and never changes old ones, so a caller can
// try many continuations of one state (a token trie walk).
type State struct {
	stacks []stack
	part   partial
}

// partial is a UTF-8 sequence cut between tokens: the bits read so far
// and how many continuation bytes are still expected.
type partial struct {
	val uint32
	rem int8
	n   int8 // the sequence's length in bytes
}

// minRune is the smallest code point a sequence of n bytes may encode
// (shorter encodings are overlong, hence invalid).
var minRune = [5]uint32{0, 0, 0x80, 0x800, 0x10000}

// Complete reports whether the input so far is a whole sentence of the
// grammar (end of generation may come now).
func (s State) Complete() bool {
	if s.part.rem != 0 {
		return false
	}
	for _, st := range s.stacks {
		if len(st) == 0 {
			return true
		}
	}
	return false
}

// Dead reports whether no continuation is possible at all.
func (s State) Dead() bool { return len(s.stacks) == 0 }

// Matcher advances States of one grammar. It keeps scratch space, so it is
// not safe for concurrent use; a Grammar may have many Matchers.
type Matcher struct {
	g    *Grammar
	seen map[string]struct{}
	key  []byte
	one  [1]byte
}

// NewMatcher returns a matcher for g.
func (g *Grammar) NewMatcher() *Matcher {
	return &Matcher{g: g, seen: map[string]struct{}{}}
}

// Start is the state before any input.
func (m *Matcher) Start() State {
	var out []stack
	for _, a := range m.g.alts[m.g.root] {
		out = m.expand(pushNonEnd(m.g, nil, a), out)
	}
	return State{stacks: out}
}

// Advance feeds bytes to s; ok is false when no parse of s can take them
// (s itself is unchanged either way).
func (m *Matcher) Advance(s State, b []byte) (State, bool) {
	for _, c := range b {
		var ok bool
		if s, ok = m.AdvanceByte(s, c); !ok {
			return s, false
		}
	}
	return s, true
}

// AdvanceByte feeds one byte: a code point is matched when its last byte
// arrives; before that, the state survives only if some parse can take a
// code point that starts with the bytes so far.
func (m *Matcher) AdvanceByte(s State, c byte) (State, bool) {
	p := s.part
	switch {
	case p.rem == 0 && c < 0x80:
		return m.acceptRune(s.stacks, rune(c))
	case p.rem == 0:
		n := utf8Len(c)
		if n == 0 {
			return State{}, false
		}
		p = partial{val: uint32(c) & (0xff >> (n + 1)), rem: int8(n - 1), n: int8(n)}
	case c&0xc0 != 0x80:
		return State{}, false
	default:
		p = partial{val: p.val<<6 | uint32(c&0x3f), rem: p.rem - 1, n: p.n}
	}
	if p.rem == 0 {
		if p.val > utf8.MaxRune || p.val < minRune[p.n] || (p.val >= 0xd800 && p.val < 0xe000) {
			return State{}, false
		}
		return m.acceptRune(s.stacks, rune(p.val))
	}
	if !m.partialFits(s.stacks, p) {
		return State{}, false
	}
	return State{stacks: s.stacks, part: p}, true
}

// utf8Len is the length of the sequence a lead byte starts, 0 for a byte
// that cannot start one (continuations, overlong C0/C1, F5 and above).
func utf8Len(c byte) int {
	switch {
	case c >= 0xc2 && c < 0xe0:
		return 2
	case c >= 0xe0 && c < 0xf0:
		return 3
	case c >= 0xf0 && c < 0xf5:
		return 4
	}
	return 0
}

// partialFits reports whether some parse can take a code point in the
// range the partial sequence still allows.
func (m *Matcher) partialFits(stacks []stack, p partial) bool {
	shift := 6 * uint(p.rem)
	lo := rune(max(p.val<<shift, minRune[p.n]))
	hi := rune(min(p.val<<shift|(1<<shift-1), utf8.MaxRune))
	if lo > hi {
		return false
	}
	for _, st := range stacks {
		if len(st) > 0 && m.g.overlaps(m.g.elems[st[len(st)-1]], lo, hi) {
			return true
		}
	}
	return false
}

// acceptRune replaces every parse whose next element matches r by the
// parses that follow it.
func (m *Matcher) acceptRune(stacks []stack, r rune) (State, bool) {
	var out []stack
	for _, st := range stacks {
		if len(st) == 0 {
			continue
		}
		top := st[len(st)-1]
		if !m.g.matches(m.g.elems[top], r) {
			continue
		}
		next := make(stack, len(st)-1, len(st)+3)
		copy(next, st)
		out = m.expand(pushNonEnd(m.g, next, top+1), out)
	}
	return State{stacks: out}, len(out) > 0
}

// pushNonEnd pushes position i unless it ends its alternative (a tail
// position is never kept, so right recursion does not deepen stacks).
func pushNonEnd(g *Grammar, st stack, i int32) stack {
	if g.elems[i].kind == eEnd {
		return st
	}
	return append(st, i)
}

// expand resolves rule references on top of st until every resulting
// stack has a character class on top (or is empty: the input may end),
// adding the new ones to out.
func (m *Matcher) expand(st stack, out []stack) []stack {
	if len(st) == 0 {
		return m.add(st, out)
	}
	top := st[len(st)-1]
	e := m.g.elems[top]
	if e.kind == eChar {
		return m.add(st, out)
	}
	base := st[:len(st)-1]
	for _, a := range m.g.alts[e.ref] {
		next := make(stack, len(base), len(base)+3)
		copy(next, base)
		next = pushNonEnd(m.g, next, top+1)
		next = pushNonEnd(m.g, next, a)
		out = m.expand(next, out)
	}
	return out
}

// add appends st to out unless a stack equal to it is there: by a linear
// scan while out is short (the common case, and no hashing), then through
// the seen set.
func (m *Matcher) add(st stack, out []stack) []stack {
	if len(out) >= maxStacks {
		return out
	}
	if len(out) < linearDedup {
		for _, o := range out {
			if slices.Equal(o, st) {
				return out
			}
		}
		return append(out, st)
	}
	if len(out) == linearDedup {
		clear(m.seen)
		for _, o := range out {
			m.seen[m.keyOf(o)] = struct{}{}
		}
	}
	k := m.keyOf(st)
	if _, dup := m.seen[k]; dup {
		return out
	}
	m.seen[k] = struct{}{}
	return append(out, st)
}

// linearDedup is how many stacks add compares one by one.
const linearDedup = 32

func (m *Matcher) keyOf(st stack) string {
	m.key = m.key[:0]
	for _, x := range st {
		m.key = binary.LittleEndian.AppendUint32(m.key, uint32(x))
	}
	return string(m.key)
}

func (g *Grammar) matches(e elem, r rune) bool {
	in := false
	for _, s := range g.ranges[e.lo:e.hi] {
		if r >= s.lo && r <= s.hi {
			in = true
			break
		}
	}
	return in != e.neg
}

// overlaps reports whether some code point in [lo, hi] matches e (for a
// negated class: whether no single range of it covers [lo, hi], an
// over-approximation that the completed code point settles).
func (g *Grammar) overlaps(e elem, lo, hi rune) bool {
	for _, s := range g.ranges[e.lo:e.hi] {
		if e.neg && s.lo <= lo && s.hi >= hi {
			return false
		}
		if !e.neg && s.lo <= hi && s.hi >= lo {
			return true
		}
	}
	return e.neg
}
