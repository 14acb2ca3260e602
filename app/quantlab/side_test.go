package quantlab

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"flowchat/engine"
	"flowchat/engine/fixtures"
)

// TestGenerateStories260K continues one prompt greedily with the base, Q8
// and Q2: the base row does not diverge, every row's pieces are the
// tokenizer's own decoding of its tokens, Q2 (KLD near 5) parts from the
// base within 32 tokens, and the second call is a cache hit.
func TestGenerateStories260K(t *testing.T) {
	model := fixtures.Path(t, stories)
	req := SideRequest{Model: model, Levels: []string{"F32", "Q8", "Q2"}, Prompt: "Once upon a time", Tokens: 32, Threads: 1}
	opt := Options{CacheDir: t.TempDir()}
	res, err := Generate(context.Background(), req, opt)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Side
	if len(s.Rows) != 3 || s.Rows[0].Level != BaseLevel || s.Rows[1].Level != "Q8" || s.Rows[2].Level != "Q2" {
		t.Fatalf("rows %v, want base, Q8, Q2 (F32 is the base)", levelsOf(s))
	}
	checkPieces(t, model, s)
	if s.Rows[0].DivergeAt != -1 {
		t.Errorf("the base diverges from itself at %d", s.Rows[0].DivergeAt)
	}
	if q2 := s.Rows[2]; q2.DivergeAt < 0 || q2.DivergeAt >= len(q2.Tokens) || !q2.Changed[q2.DivergeAt] ||
		anyTrue(q2.Changed[:q2.DivergeAt]) {
		t.Errorf("Q2: diverges at %d, changed %v", q2.DivergeAt, q2.Changed)
	}
	for _, r := range s.Rows {
		t.Logf("%-4s at %3d  %s", r.Level, r.DivergeAt, r.Marked(Brackets))
	}
	again, err := Generate(context.Background(), req, opt)
	if err != nil || !again.Cached || !reflect.DeepEqual(again.Side, s) {
		t.Errorf("second call: cached %v, same %v, err %v", again.Cached, reflect.DeepEqual(again.Side, s), err)
	}
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

func levelsOf(s *SideBySide) []string {
	var ls []string
	for _, r := range s.Rows {
		ls = append(ls, r.Level)
	}
	return ls
}

// checkPieces compares each row's text with Decode(prompt + tokens) less
// Decode(prompt), and its marks with Diverge against the base row.
func checkPieces(t *testing.T, model string, s *SideBySide) {
	t.Helper()
	m, err := engine.Load(model, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt := m.Tok.Encode(s.Prompt, true, true)
	head := m.Tok.Decode(prompt)
	for _, r := range s.Rows {
		full := m.Tok.Decode(append(append([]int32(nil), prompt...), r.Tokens...))
		if len(r.Pieces) != len(r.Tokens) || !strings.HasPrefix(full, head) || r.Text() != full[len(head):] {
			t.Errorf("%s: %d pieces for %d tokens, text %q, want %q", r.Level, len(r.Pieces), len(r.Tokens), r.Text(), strings.TrimPrefix(full, head))
		}
		if at, ch := Diverge(s.Rows[0].Tokens, r.Tokens); at != r.DivergeAt || !reflect.DeepEqual(ch, r.Changed) {
			t.Errorf("%s: stored marks differ from Diverge", r.Level)
		}
	}
}
