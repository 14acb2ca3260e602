package tokenizer

import (
	"errors"
	"path/filepath"
	"testing"

	"flowchat/engine/gguf"
)

// writeVocab writes a GGUF holding only tokenizer metadata and opens it.
func writeVocab(t *testing.T, kv map[string]any) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for k, v := range kv {
		w.Set(k, v)
	}
	p := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFromGGUFMetadata(t *testing.T) {
	f := writeVocab(t, map[string]any{
		"general.name":                            "tiny",
		"tokenizer.ggml.model":                    "llama",
		"tokenizer.ggml.tokens":                   []string{"<unk>", "<s>", "</s>", "<|end|>", "\u2581a"},
		"tokenizer.ggml.scores":                   []float32{0, 0, 0, 0, -1},
		"tokenizer.ggml.token_type":               []int32{2, 3, 3, 1, 1},
		"tokenizer.ggml.eos_token_id":             uint32(2),
		"tokenizer.ggml.seperator_token_id":       uint32(4294967295), // out of range: ignored
		"tokenizer.ggml.add_bos_token":            false,
		"tokenizer.ggml.add_eos_token":            true,
		"tokenizer.ggml.add_space_prefix":         true,
		"tokenizer.ggml.remove_extra_whitespaces": false,
	})
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS() != 1 || tk.EOS() != 2 || tk.AddBOS() || !tk.AddEOS() || tk.sep != noToken {
		t.Errorf("bos %d eos %d addBOS %v addEOS %v sep %d", tk.BOS(), tk.EOS(), tk.AddBOS(), tk.AddEOS(), tk.sep)
	}
	// "<|end|>" is recognised as end of turn by its text and becomes control
	if end := int32(3); tk.EOT() != end || !tk.IsEOG(end) || !tk.IsEOG(2) || tk.IsEOG(4) {
		t.Errorf("eot %d, eog(3) %v eog(2) %v eog(4) %v", tk.EOT(), tk.IsEOG(3), tk.IsEOG(2), tk.IsEOG(4))
	}
	if got, want := tk.Encode("a", true, false), []int32{4, 2}; !equalIDs(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if tk.VocabSize() != 5 || tk.Token(4) != "\u2581a" || tk.Token(9) != "" || tk.Model() != "spm" {
		t.Errorf("vocab %d token %q model %s", tk.VocabSize(), tk.Token(4), tk.Model())
	}
}

func TestFromGGUFErrors(t *testing.T) {
	for name, c := range map[string]struct {
		kv   map[string]any
		want error
	}{
		"no model":   {map[string]any{"tokenizer.ggml.tokens": []string{"a"}}, ErrVocab},
		"no tokens":  {map[string]any{"tokenizer.ggml.model": "llama"}, ErrVocab},
		"rwkv":       {map[string]any{"tokenizer.ggml.model": "rwkv", "tokenizer.ggml.tokens": []string{"a"}}, ErrUnsupported},
		"no merges":  {map[string]any{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": []string{"a"}}, ErrVocab},
		"bad scores": {map[string]any{"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": []string{"a"}, "tokenizer.ggml.scores": []string{"x"}}, ErrVocab},
		"unknown pre": {map[string]any{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "nope",
			"tokenizer.ggml.tokens": []string{"a"}, "tokenizer.ggml.merges": []string{}}, ErrUnsupported},
		"bad charsmap": {map[string]any{"tokenizer.ggml.model": "t5", "tokenizer.ggml.tokens": []string{"a"},
			"tokenizer.ggml.precompiled_charsmap": []uint8{9, 0, 0, 0, 1}}, ErrVocab},
	} {
		if _, err := FromGGUF(writeVocab(t, c.kv)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}
