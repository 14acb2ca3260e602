package sample

import (
	"slices"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
	"flowchat/engine/tokenizer"
)

// The engine's tokenizer is what callers pass to WithVocab.
var (
	_ Vocab     = (*tokenizer.Tokenizer)(nil)
	_ Tokenizer = (*tokenizer.Tokenizer)(nil)
)

func gpt2(t *testing.T) *tokenizer.Tokenizer {
	f, err := gguf.Open(fixtures.Path(t, "vocab/ggml-vocab-gpt-2.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tk, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestDRYBreakersRealVocab derives breakers from GPT-2's 50257 tokens: the
// default breakers are single characters, so every token containing one
// breaks alone; a multi-token breaker ("Assistant:") gets heads ending in
// its start, with the tokenizer's encoding of the rest as tails, and stops
// a repeat that would reach back across it.
func TestDRYBreakersRealVocab(t *testing.T) {
	tk := gpt2(t)
	n := tk.VocabSize()
	b := buildBreakers(DefaultParams().DRYSequenceBreakers, tk, n)
	for id := int32(0); int(id) < n; id++ {
		piece := string(tk.Piece(id))
		want := strings.ContainsAny(piece, "\n:\"*")
		if b.singleToken(id) != want {
			t.Fatalf("token %d %q: single breaker %v, want %v", id, piece, b.singleToken(id), want)
		}
	}
	nl := tk.Encode("\n", false, false)
	if len(nl) != 1 || !b.singleToken(nl[0]) {
		t.Errorf("newline %v is not a breaker", nl)
	}

	b = buildBreakers([]string{"Assistant:"}, tk, n)
	text := "User: say hi twice\nAssistant: hi hi\nUser: say hi twice\nAssistant:"
	toks := tk.Encode(text, false, false)
	head := tk.Encode("Assistant:", false, false)
	if tails := b[head[0]]; !slices.ContainsFunc(tails, func(tail []int32) bool { return slices.Equal(tail, head[1:]) }) {
		t.Fatalf("head %d lacks tail %v: %v", head[0], head[1:], tails)
	}
	d := newDRYState(n, b)
	last := toks
	if lim := d.restartLimit(last); lim != 0 {
		t.Errorf("restart limit %d right after the breaker, want 0", lim)
	}
	if lim := newDRYStateLimit(n, breakers{}, last); lim != len(last) {
		t.Errorf("without breakers the limit is the context (%d), got %d", len(last), lim)
	}
}

func newDRYStateLimit(n int, b breakers, last []int32) int {
	d := newDRYState(n, b)
	return d.restartLimit(last)
}

func llamaSPM(tb testing.TB) *tokenizer.Tokenizer {
	f, err := gguf.Open(fixtures.Path(tb, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	tk, err := tokenizer.FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}
