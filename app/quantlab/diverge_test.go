package quantlab

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestDiverge checks the marks on hand-made token rows against the base
// row [1 2 3 4 5 6 7 8].
func TestDiverge(t *testing.T) {
	base := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	const F, T = false, true
	cases := []struct {
		name    string
		tokens  []int32
		at      int
		changed []bool
	}{
		{"same", []int32{1, 2, 3, 4, 5, 6, 7, 8}, -1, []bool{F, F, F, F, F, F, F, F}},
		{"one substituted", []int32{1, 2, 9, 4, 5, 6, 7, 8}, 2, []bool{F, F, T, F, F, F, F, F}},
		{"short island merged", []int32{1, 2, 9, 4, 9, 6, 7, 8}, 2, []bool{F, F, T, T, T, F, F, F}},
		{"island of minRun kept", []int32{1, 9, 3, 4, 5, 9, 7, 8}, 1, []bool{F, T, F, F, F, T, F, F}},
		{"deleted", []int32{1, 2, 4, 5, 6, 7, 8}, 2, []bool{F, F, T, F, F, F, F}},
		{"deleted late", []int32{1, 2, 3, 4, 5, 7, 8}, 5, []bool{F, F, F, F, F, T, F}},
		{"inserted", []int32{1, 2, 3, 9, 4, 5, 6, 7}, 3, []bool{F, F, F, T, F, F, F, F}},
		{"longer", []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 8, []bool{F, F, F, F, F, F, F, F, T}},
		{"shorter", []int32{1, 2, 3}, 3, []bool{F, F, F}},
		{"all different", []int32{9, 10, 11}, 0, []bool{T, T, T}},
		{"empty", nil, 0, []bool{}},
	}
	for _, c := range cases {
		at, changed := Diverge(base, c.tokens)
		if at != c.at || !reflect.DeepEqual(changed, c.changed) {
			t.Errorf("%s: Diverge = %d %v, want %d %v", c.name, at, changed, c.at, c.changed)
		}
	}
}

// TestMarked wraps changed spans, keeping their leading space outside.
func TestMarked(t *testing.T) {
	c := Continuation{
		Level:   "Q2",
		Pieces:  []string{" The", " cat", " sat", "", "é", " on", " a", " mat", "."},
		Changed: []bool{false, true, true, true, true, false, false, true, true},
	}
	if got, want := c.Marked(Brackets), " The [cat saté] on a [mat.]"; got != want {
		t.Errorf("Marked(Brackets) = %q, want %q", got, want)
	}
	if got, want := c.Marked(ANSI), " The \x1b[1;31mcat saté\x1b[0m on a \x1b[1;31mmat.\x1b[0m"; got != want {
		t.Errorf("Marked(ANSI) = %q, want %q", got, want)
	}
	if c.Text() != " The cat saté on a mat." {
		t.Errorf("Text = %q", c.Text())
	}
	w := Continuation{Pieces: []string{" a", " g", "irl", " and", " b", "ox", "es", "."}, Changed: []bool{false, true, false, false, false, false, true, false}}
	if got, want := w.Marked(Brackets), " a [girl] and [boxes]."; got != want {
		t.Errorf("Marked widened to words = %q, want %q", got, want)
	}
	var b bytes.Buffer
	s := &SideBySide{Prompt: "Once", Rows: []Continuation{{Level: BaseLevel, DivergeAt: -1}, c}}
	s.Rows[1].DivergeAt, s.Rows[1].Tokens = 1, make([]int32, 9)
	if err := WriteSide(&b, s, Brackets); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "── Q2 · diverges at token 2 · 9 tokens") || !strings.Contains(b.String(), "[cat saté]") {
		t.Errorf("WriteSide:\n%s", b.String())
	}
}
