package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

// loadGGUF builds the tokenizer of a fixture GGUF (path relative to the
// testdata root), skipping when the fixture is absent.
func loadGGUF(tb testing.TB, rel string) *Tokenizer {
	tb.Helper()
	f, err := gguf.Open(fixtures.Path(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	tk, err := FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

// vocabCases reads llama.cpp's test-tokenizer-0 vectors: inputs split by
// "\n__ggml_vocab_test__\n", one line of space-separated ids per input.
func vocabCases(tb testing.TB, inp, out string) (texts []string, ids [][]int32) {
	tb.Helper()
	in, err := os.ReadFile(inp)
	if err != nil {
		tb.Fatal(err)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	texts = strings.Split(string(in), "\n__ggml_vocab_test__\n")
	texts = texts[:len(texts)-1] // the file ends with a separator
	lines := strings.Split(string(want), "\n")
	if len(lines) < len(texts) {
		tb.Fatalf("%s: %d inputs, %d output lines", inp, len(texts), len(lines))
	}
	for _, l := range lines[:len(texts)] {
		var row []int32
		for _, f := range strings.Fields(l) {
			n, err := strconv.Atoi(f)
			if err != nil {
				tb.Fatal(err)
			}
			row = append(row, int32(n))
		}
		ids = append(ids, row)
	}
	return texts, ids
}

// TestVocabVectors runs every llama.cpp vocabulary test vector whose GGUF is
// present. test-tokenizer-0 tokenizes with add_special = false and
// parse_special = false.
func TestVocabVectors(t *testing.T) {
	root := fixtures.Shared(t)
	inps, _ := filepath.Glob(filepath.Join(root, "vocab", "*.gguf.inp"))
	ran := 0
	for _, inp := range inps {
		model := strings.TrimSuffix(inp, ".inp")
		name := filepath.Base(model)
		if _, err := os.Stat(model); err != nil {
			t.Logf("%s: no vocabulary file, skipped", name)
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			tk := loadGGUF(t, filepath.Join("vocab", name))
			texts, want := vocabCases(t, inp, model+".out")
			for i, text := range texts {
				got := tk.Encode(text, false, false)
				if !equalIDs(got, want[i]) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, text, got, want[i])
				}
			}
		})
	}
	if ran == 0 {
		t.Skip("no vocabulary fixtures")
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestVocabWithoutVectors loads the vocabularies that come without test
// vectors and checks a plain round trip.
func TestVocabWithoutVectors(t *testing.T) {
	for _, name := range []string{"ggml-vocab-baichuan.gguf", "ggml-vocab-gpt-neox.gguf"} {
		tk := loadGGUF(t, "vocab/"+name)
		const text = "Hello world, 日本 😀"
		ids := tk.Encode(text, false, false)
		if got := tk.Decode(ids); got != text {
			t.Errorf("%s: decode(encode(%q)) = %q (ids %v)", name, text, got, ids)
		}
	}
}

// TestParseSpecialBPE: GPT-2's <|endoftext|> (control, id 50256) is one token
// only when special tokens are parsed; otherwise it is spelled out.
func TestParseSpecialBPE(t *testing.T) {
	tk := loadGGUF(t, "vocab/ggml-vocab-gpt-2.gguf")
	if got, want := tk.Encode("a<|endoftext|>b", false, true), []int32{64, 50256, 65}; !equalIDs(got, want) {
		t.Errorf("parsed: got %v, want %v", got, want)
	}
	got := tk.Encode("a<|endoftext|>b", false, false)
	if containsID(got, 50256) || tk.Decode(got) != "a<|endoftext|>b" {
		t.Errorf("unparsed: got %v (%q)", got, tk.Decode(got))
	}
	if !tk.IsEOG(50256) || tk.BOS() != 50256 || tk.EOS() != 50256 || tk.AddBOS() {
		t.Errorf("eog %v bos %d eos %d addBOS %v", tk.IsEOG(50256), tk.BOS(), tk.EOS(), tk.AddBOS())
	}
	if p := string(tk.Piece(50256)); p != "<|endoftext|>" || tk.Decode([]int32{50256}) != "" {
		t.Errorf("Piece = %q, Decode = %q", p, tk.Decode([]int32{50256}))
	}
}
