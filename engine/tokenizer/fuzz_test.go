package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"flowchat/engine/fixtures"
)

// fuzzTokenizers are the vocabularies FuzzEncode runs on: hand-built SPM
// and byte-level BPE always, plus small fixture vocabularies when present,
// one per code path (SPM, collapsed-category regexes, wide regexes,
// WordPiece, unigram). Large vocabularies would make each run, and so
// minimisation, slow.
func fuzzTokenizers(f *testing.F) map[string]*Tokenizer {
	tks := map[string]*Tokenizer{
		"spm":         mustNew(f, spmVocab(map[string]float32{"\u2581": -1, "a": -1, "\u2581a": 0, "ab": -2, "<": -3}, nil)),
		"spm-special": mustNew(f, spmVocab(map[string]float32{"\u2581": -1, "a": -1}, map[string]TokenType{"<|u|>": TypeUserDefined, "<|c|>": TypeControl})),
		"bpe":         byteBPE(f, "qwen2"),
	}
	for name, rel := range map[string]string{
		"stories260K": "models/stories260K/stories260K-F32.gguf",
		"bert":        "vocab/ggml-vocab-bert-bge.gguf",
		"t5":          "arch/rand-t5-F32.gguf",
		"qwen2":       "arch/rand-qwen2-F32.gguf",
		"bloom":       "arch/rand-bloom-F32.gguf",
	} {
		if fixtures.Find(rel) != "" {
			tks[name] = loadGGUF(f, rel)
		}
	}
	return tks
}

// roundTrips lists the vocabularies on which decode(encode(s)) == s for
// valid UTF-8 (SPM with byte fallback reads U+2581 back as a space;
// byte-level BPE without space clean-up is lossless). Vocabularies with
// user-defined tokens are left out: SPM puts a space after each.
var roundTrips = map[string]bool{"spm": true, "bpe": true, "stories260K": true, "qwen2": true}

// FuzzEncode: Encode never panics on any input, and on byte-fallback SPM
// and clean-up-free byte-level BPE the text decodes back.
func FuzzEncode(f *testing.F) {
	tks := fuzzTokenizers(f)
	for _, s := range []string{"", " ", "Hello world", "  a\n\n\tb", "ab<|u|>a<|c|>", "naïve 😀 日本 \u2581", "\xff\xc3", "\xed\xa0\x80", "'s 'RE 123456", "\u3000\u00a0x"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, parseSpecial bool) {
		for name, tk := range tks {
			ids := tk.Encode(s, true, parseSpecial)
			for _, id := range ids {
				if id < 0 || int(id) >= tk.VocabSize() {
					t.Fatalf("%s: id %d out of range", name, id)
				}
			}
			d := tk.NewDecoder()
			for _, id := range ids {
				d.Add(id)
			}
			d.Flush()
			if !roundTrips[name] || !utf8.ValidString(s) {
				continue
			}
			ids = tk.Encode(s, false, false)
			want := s
			if tk.kind == kindSPM {
				want = strings.ReplaceAll(s, "\u2581", " ")
			}
			if got := tk.Decode(ids); got != want {
				t.Fatalf("%s: decode(encode(%q)) = %q", name, s, got)
			}
		}
	})
}
