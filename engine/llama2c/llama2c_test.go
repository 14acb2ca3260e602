package llama2c

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
	"flowchat/engine/model"
	"flowchat/engine/sample"
	"flowchat/engine/spec"
	"flowchat/engine/tokenizer"
)

// TestStories260K: the llama2.c checkpoint gives llama.cpp's logits and
// greedy ids of the stories260K GGUF (converted from it).
func TestStories260K(t *testing.T) {
	c, err := Open(fixtures.Path(t, "models/llama2c/stories260K.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sp, err := spec.ForArchitecture("llama2.c", "llama2.c")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Build(sp, c.Config(), c, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := fixtures.Path(t, "reference/trained/stories260K/F32")
	paths, _ := filepath.Glob(filepath.Join(dir, "p*.json"))
	for _, p := range paths {
		var rc struct {
			InputIDs     []int32 `json:"input_ids"`
			GeneratedIDs []int32 `json:"generated_ids"`
			Logits       string  `json:"prompt_logits_file"`
		}
		data, _ := os.ReadFile(p)
		if err := json.Unmarshal(data, &rc); err != nil {
			t.Fatal(err)
		}
		ref := fixtures.ReadF32(t, filepath.Join(dir, rc.Logits))
		s := m.NewState(256, 64)
		got, err := s.Forward(rc.InputIDs, true)
		if err != nil {
			t.Fatal(err)
		}
		var num, den float64
		for i := range ref {
			d := float64(got[i] - ref[i])
			num, den = num+d*d, den+float64(ref[i])*float64(ref[i])
		}
		if e := math.Sqrt(num / den); e > 1e-3 {
			t.Errorf("%s: rel RMS %.2e", filepath.Base(p), e)
		}
		V := m.NVocab
		tok := sample.Greedy(got[len(got)-V:])
		for i, want := range rc.GeneratedIDs {
			if tok != want {
				t.Fatalf("%s: greedy %d = %d, want %d", filepath.Base(p), i, tok, want)
			}
			l, _ := s.Forward([]int32{tok}, false)
			tok = sample.Greedy(l)
		}
	}
}

// TestTokenizer: tok512.bin encodes like the stories260K GGUF tokenizer.
func TestTokenizer(t *testing.T) {
	ck := fixtures.Path(t, "models/llama2c/stories260K.bin")
	p, err := FindTokenizer(ck)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := ReadTokenizer(p, 512)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Once upon a time", "Lily and Tom went to the park.", "The little dog was sad because", "ünï ☃ <s> x\n\ny", ""} {
		a, b := tk.Encode(s, true, false), ref.Encode(s, true, false)
		if len(a) != len(b) {
			t.Errorf("%q: %v, gguf %v", s, a, b)
			continue
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%q: %v, gguf %v", s, a, b)
				break
			}
		}
	}
}

func TestMalformed(t *testing.T) {
	good := make([]byte, 28)
	for i, v := range []int32{8, 16, 1, 2, 2, 4, 4} {
		binary.LittleEndian.PutUint32(good[4*i:], uint32(v))
	}
	for name, data := range map[string][]byte{"short": good[:10], "truncated": good, "zero dim": make([]byte, 28)} {
		if _, err := Parse(data); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseTokenizer([]byte{0, 0, 0, 0, 1, 1, 1, 1, 255, 255, 255, 127}, 3); !errors.Is(err, ErrFormat) {
		t.Errorf("bad tokenizer: %v", err)
	}
}
