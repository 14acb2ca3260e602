package tokenizer

import (
	"bytes"
	"testing"

	"flowchat/engine/gguf"
)

// TestFIMByText finds the fill-in-the-middle tokens of each family by
// their text, among decoy tokens, and marks them control.
func TestFIMByText(t *testing.T) {
	families := [][3]string{
		{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"}, // Qwen
		{"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},       // StarCoder, Granite
		{"▁<PRE>", "▁<SUF>", "▁<MID>"},                         // CodeLlama
		{"<fim-prefix>", "<fim-suffix>", "<fim-middle>"},
		{"<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"}, // DeepSeek
	}
	for _, fam := range families {
		toks := []string{"<unk>", "<s>", "</s>", "a", "b", "<fim>", fam[1], "c", fam[2], fam[0]}
		tk, err := New(Vocab{Model: "llama", Tokens: toks})
		if err != nil {
			t.Fatal(err)
		}
		pre, suf, mid, ok := tk.FIM()
		if !ok || pre != 9 || suf != 6 || mid != 8 {
			t.Errorf("%q: FIM() = %d %d %d %v, want 9 6 8 true", fam, pre, suf, mid, ok)
		}
		for _, id := range []int32{pre, suf, mid} {
			if !tk.IsControl(id) {
				t.Errorf("%q: token %d (%q) is not control", fam, id, tk.Token(id))
			}
		}
	}
}

// TestFIMByKey: the GGUF keys win over texts, and a vocabulary missing
// one of the three has no FIM.
func TestFIMByKey(t *testing.T) {
	toks := []string{"<unk>", "<s>", "</s>", "x", "y", "z", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"}
	tk, err := New(Vocab{Model: "llama", Tokens: toks, Special: SpecialIDs{FIMPre: ID(3), FIMSuf: ID(4), FIMMid: ID(5)}})
	if err != nil {
		t.Fatal(err)
	}
	if pre, suf, mid, ok := tk.FIM(); !ok || pre != 3 || suf != 4 || mid != 5 {
		t.Errorf("FIM() = %d %d %d %v, want the keys' 3 4 5", pre, suf, mid, ok)
	}
	tk, err = New(Vocab{Model: "llama", Tokens: []string{"<unk>", "<s>", "</s>", "<|fim_prefix|>", "<|fim_suffix|>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := tk.FIM(); ok {
		t.Error("FIM() ok without a middle token")
	}
}

// TestFIMStarCoderVocab finds StarCoder's FIM tokens in its real
// vocabulary, which names them by text only.
func TestFIMStarCoderVocab(t *testing.T) {
	tk := loadGGUF(t, "vocab/ggml-vocab-starcoder.gguf")
	pre, suf, mid, ok := tk.FIM()
	if !ok {
		t.Fatal("no FIM tokens found")
	}
	got := [3]string{tk.Token(pre), tk.Token(suf), tk.Token(mid)}
	if got != [3]string{"<fim_prefix>", "<fim_suffix>", "<fim_middle>"} {
		t.Errorf("FIM tokens = %q", got)
	}
}

// TestFIMGGUFKeys reads the FIM ids from GGUF metadata, in both
// spellings; where a file has both, the older one wins, as in llama.cpp.
func TestFIMGGUFKeys(t *testing.T) {
	toks := []string{"<unk>", "<s>", "</s>", "p", "s", "m", "P", "S", "M"}
	for _, tc := range []struct {
		keys map[string]uint32
		want [3]int32
	}{
		{map[string]uint32{"fim_pre_token_id": 3, "fim_suf_token_id": 4, "fim_mid_token_id": 5}, [3]int32{3, 4, 5}},
		{map[string]uint32{"prefix_token_id": 6, "suffix_token_id": 7, "middle_token_id": 8}, [3]int32{6, 7, 8}},
		{map[string]uint32{"fim_pre_token_id": 3, "fim_suf_token_id": 4, "fim_mid_token_id": 5,
			"prefix_token_id": 6, "suffix_token_id": 7, "middle_token_id": 8}, [3]int32{6, 7, 8}},
	} {
		w := gguf.NewWriter()
		w.Set("tokenizer.ggml.model", "llama")
		w.Set("tokenizer.ggml.tokens", toks)
		for k, v := range tc.keys {
			w.Set("tokenizer.ggml."+k, v)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		tk, err := FromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		pre, suf, mid, ok := tk.FIM()
		if got := [3]int32{pre, suf, mid}; !ok || got != tc.want {
			t.Errorf("keys %v: FIM() = %v %v, want %v", tc.keys, got, ok, tc.want)
		}
	}
}
