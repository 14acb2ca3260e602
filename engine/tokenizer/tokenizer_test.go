package tokenizer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// spmVocab is a small SentencePiece vocabulary: <unk> <s> </s>, the 256
// byte tokens (ids 3..258), then the given normal tokens with their scores
// and any extra tokens with their types.
func spmVocab(normal map[string]float32, extra map[string]TokenType) Vocab {
	v := Vocab{Model: "llama", Tokens: []string{"<unk>", "<s>", "</s>"}, Types: []int32{2, 3, 3}}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, fmt.Sprintf("<0x%02X>", b))
		v.Types = append(v.Types, int32(TypeByte))
	}
	v.Scores = make([]float32, len(v.Tokens))
	for _, s := range sortedKeys(normal) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, normal[s])
		v.Types = append(v.Types, int32(TypeNormal))
	}
	for _, s := range sortedKeys(extra) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, 0)
		v.Types = append(v.Types, int32(extra[s]))
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks { // insertion sort: tiny maps, no import
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

func mustNew(tb testing.TB, v Vocab) *Tokenizer {
	tb.Helper()
	tk, err := New(v)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

func ids(tk *Tokenizer, toks ...string) []int32 {
	var out []int32
	for _, s := range toks {
		id, ok := tk.toID[s]
		if !ok {
			panic("no token " + s)
		}
		out = append(out, id)
	}
	return out
}

func TestSPMMerges(t *testing.T) {
	tk := mustNew(t, spmVocab(map[string]float32{
		"\u2581": -1, "a": -1, "b": -1, "c": -1, "aa": 0, "ab": -5, "bc": -1,
	}, nil))
	for _, c := range []struct {
		text string
		want []string
	}{
		// equal scores: the leftmost pair merges first
		{"aaa", []string{"\u2581", "aa", "a"}},
		// a higher score wins over a leftmost pair
		{"abc", []string{"\u2581", "a", "bc"}},
		// no token for "é": its two UTF-8 bytes fall back to byte tokens
		{"é", []string{"\u2581", "<0xC3>", "<0xA9>"}},
		// spaces are escaped, and the prefix space is added once
		{"a b", []string{"\u2581", "a", "\u2581", "b"}},
	} {
		want := ids(tk, c.want...)
		if got := tk.Encode(c.text, false, false); !equalIDs(got, want) {
			t.Errorf("%q: got %v, want %v", c.text, got, want)
		}
	}
	if got, want := tk.Encode("", true, false), []int32{1}; !equalIDs(got, want) {
		t.Errorf("empty text with BOS: got %v, want %v", got, want)
	}
}

func TestSpecialPartition(t *testing.T) {
	v := spmVocab(map[string]float32{"\u2581": -1, "x": -1, "y": -1, "\u2581x": 0, "\u2581y": 0},
		map[string]TokenType{"<|end|>": TypeControl, "<|user|>": TypeUserDefined})
	v.Name = "Phi-3 test" // llama.cpp marks special tokens RSTRIP for phi-3 models
	tk := mustNew(t, v)
	end, user := tk.toID["<|end|>"], tk.toID["<|user|>"]
	if !tk.IsEOG(end) {
		t.Errorf("<|end|> is not end-of-generation")
	}
	got := tk.Encode("x<|end|>  y", false, true)
	want := append(append(ids(tk, "\u2581x"), end), ids(tk, "\u2581y")...)
	if !equalIDs(got, want) {
		t.Errorf("parsed control token with rstrip: got %v, want %v", got, want)
	}
	// without parseSpecial the control token is plain text, but a
	// user-defined token still matches as a whole
	got = tk.Encode("x<|end|><|user|>y", false, false)
	if containsID(got, end) || !containsID(got, user) {
		t.Errorf("parseSpecial=false: got %v (control %d must not appear, user-defined %d must)", got, end, user)
	}
	// the fragment after a matched token gets the space prefix again
	if s := tk.Decode(got); s != "x<|end|><|user|> y" {
		t.Errorf("Decode = %q", s)
	}
}

func containsID(s []int32, id int32) bool {
	for _, x := range s {
		if x == id {
			return true
		}
	}
	return false
}

func TestCleanSpaces(t *testing.T) {
	got := string(cleanSpaces([]byte("a ?b ' c 'sd 're 't ,")))
	if want := "a?b'c'sd're 't,"; got != want {
		t.Errorf("cleanSpaces = %q, want %q", got, want)
	}
}

func TestUnsupported(t *testing.T) {
	for _, v := range []Vocab{
		{Model: "rwkv", Tokens: []string{"a"}},
		{Model: "gpt2", Pre: "no-such-pre", Tokens: []string{"a"}},
	} {
		if _, err := New(v); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s/%s: err = %v, want ErrUnsupported", v.Model, v.Pre, err)
		}
	}
	if _, err := New(Vocab{Model: "llama", Tokens: []string{"a", "a"}}); !errors.Is(err, ErrVocab) {
		t.Errorf("duplicate tokens: err = %v, want ErrVocab", err)
	}
	if _, err := New(Vocab{Model: "llama", Tokens: []string{"a", "b"}, Scores: []float32{0}}); !errors.Is(err, ErrVocab) {
		t.Errorf("short scores: err = %v, want ErrVocab", err)
	}
}

// byteBPE is a byte-level BPE vocabulary of the 256 byte tokens alone.
func byteBPE(tb testing.TB, pre string) *Tokenizer {
	v := Vocab{Model: "gpt2", Pre: pre}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, string(byteToRune[b]))
	}
	return mustNew(tb, v)
}

// TestDecoderMatchesDecode feeds random ids through the streaming decoder
// and compares with Decode of the whole sequence: random bytes exercise the
// hold-back of incomplete UTF-8 and of clean-up-sensitive tails.
func TestDecoderMatchesDecode(t *testing.T) {
	tks := map[string]*Tokenizer{"bpe clean": byteBPE(t, "gpt-2"), "bpe keep": byteBPE(t, "qwen2"),
		"spm": mustNew(t, spmVocab(map[string]float32{"\u2581": 0, "'": 0, "s": 0, "?": 0}, nil))}
	rng := rand.New(rand.NewPCG(1, 2))
	// bias towards bytes that matter: space, apostrophe, punctuation, UTF-8 leads
	hot := []byte(" ' ?.,sremvtd\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x80\xff")
	for name, tk := range tks {
		for trial := 0; trial < 300; trial++ {
			var seq []int32
			for n := rng.IntN(30); n > 0; n-- {
				seq = append(seq, pickID(tk, rng, hot))
			}
			d := tk.NewDecoder()
			var sb strings.Builder
			for _, id := range seq {
				s := d.Add(id)
				if !utf8.ValidString(s) {
					t.Fatalf("%s: Add returned invalid UTF-8 %q", name, s)
				}
				sb.WriteString(s)
			}
			sb.WriteString(d.Flush())
			if want := validUTF8([]byte(tk.Decode(seq))); sb.String() != want {
				t.Fatalf("%s %v: decoder %q, Decode %q", name, seq, sb.String(), want)
			}
		}
	}
}

func pickID(tk *Tokenizer, rng *rand.Rand, hot []byte) int32 {
	if tk.kind == kindSPM && rng.IntN(2) == 0 {
		return tk.byteToken(hot[rng.IntN(len(hot))])
	}
	if tk.kind == kindBPE && rng.IntN(2) == 0 {
		return tk.toID[string(byteToRune[hot[rng.IntN(len(hot))]])]
	}
	return int32(rng.IntN(tk.VocabSize()))
}

// TestDecoderHoldsSplitRunes streams a text whose characters all fall back
// to byte tokens: no output may hold a partial character, and the whole
// stream must give back the text.
func TestDecoderHoldsSplitRunes(t *testing.T) {
	tk := mustNew(t, spmVocab(map[string]float32{"\u2581": 0}, nil))
	text := "naïve €5 😀 日本"
	seq := tk.Encode(text, false, false) // with BOS first, the space would stay (as in llama.cpp)
	d := tk.NewDecoder()
	var parts []string
	for _, id := range seq {
		if s := d.Add(id); s != "" {
			parts = append(parts, s)
		}
	}
	parts = append(parts, d.Flush())
	for _, p := range parts {
		if strings.ContainsRune(p, utf8.RuneError) {
			t.Errorf("streamed part %q holds a replacement character", p)
		}
	}
	if got := strings.Join(parts, ""); got != text {
		t.Errorf("streamed %q, want %q", got, text)
	}
	if got := tk.Decode(seq); got != text {
		t.Errorf("Decode = %q, want %q", got, text)
	}
}

// TestPreTypesCompile builds every pre-tokenizer llama.cpp names and splits
// a mixed sample with it; the words must cover the text exactly.
func TestPreTypesCompile(t *testing.T) {
	const sample = "Hello, y'all! 3.14159 \u00a0 naïve\t\n\n日本語 — 😀 'RE  x"
	for name, p := range preTypes {
		pre, err := newPreTokenizer(p.exprs)
		if err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		if got := strings.Join(pre.words(sample, false), ""); got != sample {
			t.Errorf("%q: words join to %q", name, got)
		}
	}
}

// TestNoUnknownToken: vocabularies too small for the default unknown id
// must not emit negative ids for text they cannot cover.
func TestNoUnknownToken(t *testing.T) {
	for _, model := range []string{"bert", "t5", "llama"} {
		tk := mustNew(t, Vocab{Model: model, Tokens: []string{"\u2581a", "a"}})
		for _, id := range tk.Encode("a zz a", true, true) {
			if id < 0 || int(id) >= tk.VocabSize() {
				t.Errorf("%s: id %d", model, id)
			}
		}
	}
}
