package quantlab

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// minRun is the shortest run of tokens matching the base that, between two
// changed spans, still reads as agreement: once two continuations have
// parted, they share single tokens (" the", ".") by chance, and marking
// those as agreeing breaks one changed passage into confetti.
const minRun = 3

// lcsLimit bounds the comparison's table (len(base)·len(tokens) cells);
// longer rows are marked changed from their first difference on.
const lcsLimit = 1 << 22

// Diverge compares a row's tokens with the base row's. at is the first
// index where they differ, a token past the end of either included (-1
// when the sequences are equal). changed[i] marks token i as not part of a
// longest common subsequence with the base, or as the token right after
// base tokens the row lacks ("a girl" against "a little girl" marks
// "girl"); every island of fewer than minRun matching tokens between two
// changed ones is marked too.
func Diverge(base, tokens []int32) (at int, changed []bool) {
	at = commonPrefix(base, tokens)
	if at == len(base) && at == len(tokens) {
		return -1, make([]bool, len(tokens))
	}
	if (len(base)-at)*(len(tokens)-at) > lcsLimit {
		changed = make([]bool, len(tokens))
		for i := at; i < len(tokens); i++ {
			changed[i] = true
		}
		return at, changed
	}
	changed = make([]bool, len(tokens))
	copy(changed[at:], unmatched(base[at:], tokens[at:]))
	mergeIslands(changed)
	return at, changed
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// unmatched marks the elements of b outside one longest common
// subsequence of a and b (the classic dynamic program, O(len a · len b)),
// and the element of b that follows elements of a the subsequence skips,
// so a dropped word shows where it was dropped.
func unmatched(a, b []int32) []bool {
	n, m := len(a), len(b)
	// l[i][j] = LCS length of a[i:], b[j:]; one flat (n+1)×(m+1) table.
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int { return i*(m+1) + j }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[at(i, j)] = l[at(i+1, j+1)] + 1
			} else {
				l[at(i, j)] = max(l[at(i+1, j)], l[at(i, j+1)])
			}
		}
	}
	out := make([]bool, m)
	for i := range out {
		out[i] = true
	}
	// Between two matches: skipped, base tokens passed over; shown, a token
	// of b already marked there. Skipped but not shown is a deletion.
	skipped, shown := false, false
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out[j] = skipped && !shown
			i, j, skipped, shown = i+1, j+1, false, false
		case l[at(i+1, j)] >= l[at(i, j+1)]:
			i, skipped = i+1, true
		default:
			j, shown = j+1, true
		}
	}
	return out
}

// mergeIslands marks short matching runs that have changes on both sides.
func mergeIslands(changed []bool) {
	for i := 0; i < len(changed); {
		if changed[i] {
			i++
			continue
		}
		j := i
		for j < len(changed) && !changed[j] {
			j++
		}
		if i > 0 && j < len(changed) && j-i < minRun {
			for k := i; k < j; k++ {
				changed[k] = true
			}
		}
		i = j
	}
}

// Marks open and close a highlighted span when text is printed.
type Marks struct{ Open, Close string }

var (
	// Brackets marks changed spans as [text]: plain text, pipes, files.
	Brackets = Marks{"[", "]"}
	// ANSI marks them in bold red on a terminal.
	ANSI = Marks{"\x1b[1;31m", "\x1b[0m"}
)

// WordChanged is Changed widened to whole words: a token joined to a
// changed one without a space or punctuation between them is marked too,
// so " g" changed before a matching "irl" reads "[girl]", not "[g]irl".
func (c *Continuation) WordChanged() []bool {
	w := make([]bool, len(c.Pieces))
	copy(w, c.Changed)
	for i := 1; i < len(w); i++ { // forward: a word's tail after a change
		if w[i-1] && joined(c.Pieces[i-1], c.Pieces[i]) {
			w[i] = true
		}
	}
	for i := len(w) - 2; i >= 0; i-- { // backward: its head before one
		if w[i+1] && joined(c.Pieces[i], c.Pieces[i+1]) {
			w[i] = true
		}
	}
	return w
}

// joined reports whether two adjacent pieces are inside one word.
func joined(a, b string) bool {
	r, _ := utf8.DecodeLastRuneInString(a)
	s, _ := utf8.DecodeRuneInString(b)
	return a != "" && b != "" && isWordRune(r) && isWordRune(s)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' }

// Marked is the row's text with each run of changed words (WordChanged)
// wrapped in mk; a span's leading white space stays outside it ("a [b] c",
// not "a[ b] c").
func (c *Continuation) Marked(mk Marks) string {
	var b strings.Builder
	open := false
	changed := c.WordChanged()
	for i, p := range c.Pieces {
		ch := changed[i]
		switch {
		case ch && !open:
			rest := strings.TrimLeftFunc(p, unicode.IsSpace)
			b.WriteString(p[:len(p)-len(rest)] + mk.Open)
			p, open = rest, true
		case !ch && open:
			b.WriteString(mk.Close)
			open = false
		}
		b.WriteString(p)
	}
	if open {
		b.WriteString(mk.Close)
	}
	return b.String()
}

// WriteSide prints every row: a header with the level, where it diverges
// and its speed, then its marked text.
func WriteSide(w io.Writer, s *SideBySide, mk Marks) error {
	var b strings.Builder
	b.WriteString("prompt: " + s.Prompt + "\n")
	for i := range s.Rows {
		r := &s.Rows[i]
		b.WriteString("\n" + rowHeader(r) + "\n" + r.Marked(mk) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rowHeader(r *Continuation) string {
	h := "── " + r.Level
	switch {
	case r.Level == BaseLevel:
	case r.DivergeAt < 0:
		h += " · same as the base"
	default:
		h += fmt.Sprintf(" · diverges at token %d", r.DivergeAt+1)
	}
	return h + fmt.Sprintf(" · %d tokens, %.0f tok/s ──", len(r.Tokens), r.TPS)
}
