package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

func ggufTokenizer(t *testing.T, rel string) *Tokenizer {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sameEncoding encodes every line of texts with both tokenizers.
func sameEncoding(t *testing.T, a, b *Tokenizer, texts []string) {
	t.Helper()
	bad := 0
	for _, s := range texts {
		for _, special := range []bool{false, true} {
			x, y := a.Encode(s, special, special), b.Encode(s, special, special)
			if !equalIDs(x, y) {
				if bad++; bad <= 5 {
					t.Errorf("%q (special %v):\n json %v\n gguf %v", s, special, x, y)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d encodings differ", bad, 2*len(texts))
	}
}

func evalTexts(t *testing.T) []string {
	data, err := os.ReadFile(fixtures.Path(t, "text/tinystories_eval.txt"))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Once upon a time", "Lily and Tom went to the park.", "The little dog was sad because",
		"", " ", "  two  spaces", "<|start_story|>Once<|end_story|>", "ünïcödé ☃ 日本語 \t\n x"}
	return append(texts, strings.Split(string(data), "\n")...)
}

type hfCase struct {
	Text         string  `json:"text"`
	IDs          []int32 `json:"ids"`
	IDsNoSpecial []int32 `json:"ids_no_special"`
}

// TestHFJSONTinyStories: the TinyStories-656K tokenizer.json encodes as
// the Hugging Face tokenizers library (Rust) does (testdata/hf, written by
// gen_hf_ids.js), and in GGUF-compat mode as the tokenizer of its GGUF
// conversion does (which lost the merge ranks, so the two differ).
func TestHFJSONTinyStories(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path(t, "models/tinystories-656K/hf/tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := HFConfig{BOS: "<|start_story|>", EOS: "<|end_story|>", UNK: "<unk>", PAD: "<unk>", AddBOS: Bool(true), AddEOS: Bool(false)}
	js, err := FromHFJSON(data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cases []hfCase
	raw, err := os.ReadFile("testdata/hf/tinystories-656K.ids.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if strings.ContainsRune(c.Text, 'ü') {
			// Known difference: characters outside this byte-less
			// vocabulary become one <unk> per byte here (llama.cpp's
			// SPM); the tokenizers library fuses them (fuse_unk).
			continue
		}
		if got := js.Encode(c.Text, true, false); !equalIDs(got, c.IDs) {
			t.Errorf("%q:\n got %v\nwant %v", c.Text, got, c.IDs)
		}
		if got := js.Encode(c.Text, false, false); !equalIDs(got, c.IDsNoSpecial) {
			t.Errorf("%q without specials:\n got %v\nwant %v", c.Text, got, c.IDsNoSpecial)
		}
	}
	cfg.GGUFCompat = true
	compat, err := FromHFJSON(data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	gg := ggufTokenizer(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")
	if compat.VocabSize() != gg.VocabSize() || compat.BOS() != gg.BOS() || compat.EOS() != gg.EOS() {
		t.Fatalf("vocab %d/%d bos %d/%d eos %d/%d", compat.VocabSize(), gg.VocabSize(), compat.BOS(), gg.BOS(), compat.EOS(), gg.EOS())
	}
	sameEncoding(t, compat, gg, evalTexts(t))
}

// jsonFromGGUF writes a tokenizer.json equivalent to a GGUF vocabulary:
// WordPiece for "bert" (undoing convert_hf_to_gguf.py's "▁"/"##" rewrite),
// byte-level BPE for "gpt2".
func jsonFromGGUF(t *testing.T, rel string) []byte {
	f, err := gguf.Open(fixtures.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := VocabFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	vocab := map[string]int{}
	var added []map[string]any
	for i, s := range v.Tokens {
		if v.Types != nil && TokenType(v.Types[i]) == TypeControl {
			added = append(added, map[string]any{"id": i, "content": s, "special": true})
		}
		if v.Model == "bert" {
			switch {
			case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
			case strings.HasPrefix(s, "\u2581"):
				s = strings.TrimPrefix(s, "\u2581")
			default:
				s = "##" + s
			}
		}
		vocab[s] = i
	}
	doc := map[string]any{"added_tokens": added}
	switch v.Model {
	case "bert":
		doc["normalizer"] = map[string]any{"type": "BertNormalizer", "lowercase": true}
		doc["pre_tokenizer"] = map[string]any{"type": "BertPreTokenizer"}
		doc["post_processor"] = map[string]any{"type": "BertProcessing", "cls": []any{"[CLS]", 101}, "sep": []any{"[SEP]", 102}}
		doc["model"] = map[string]any{"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]", "continuing_subword_prefix": "##"}
	case "gpt2":
		doc["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}
		doc["model"] = map[string]any{"type": "BPE", "vocab": vocab, "merges": v.Merges}
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestHFJSONVocabVectors runs llama.cpp's test vectors of the BERT
// (WordPiece) and GPT-2 (byte-level BPE) vocabularies through
// tokenizer.json versions of them.
func TestHFJSONVocabVectors(t *testing.T) {
	for _, name := range []string{"ggml-vocab-bert-bge.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			tk, err := FromHFJSON(jsonFromGGUF(t, "vocab/"+name), HFConfig{})
			if err != nil {
				t.Fatal(err)
			}
			inp := fixtures.Path(t, "vocab/"+name+".inp")
			texts, want := vocabCases(t, inp, strings.TrimSuffix(inp, ".inp")+".out")
			for i, text := range texts {
				if got := tk.Encode(text, false, false); !equalIDs(got, want[i]) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, text, got, want[i])
				}
			}
			if name == "ggml-vocab-bert-bge.gguf" {
				if got := tk.Encode("hello", true, false); len(got) != 3 || got[0] != 101 || got[2] != 102 {
					t.Errorf("[CLS] hello [SEP] = %v", got)
				}
			}
		})
	}
}

// FuzzHFJSON: any bytes give a tokenizer or an error; a tokenizer encodes.
func FuzzHFJSON(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},"pre_tokenizer":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"▁":0,"a":1,"▁a":2,"<0x41>":3},"merges":[["▁","a"]],"byte_fallback":true},"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"}]}}`))
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"a":1,"##b":2},"unk_token":"[UNK]"},"added_tokens":[{"id":0,"content":"[UNK]","special":true}]}`))
	f.Add([]byte(`{"model":{"type":"Unigram","vocab":[["<unk>",0],["▁a",-1],["b",-2]],"unk_id":0},"post_processor":{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A"}},{"SpecialToken":{"id":"<unk>"}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := FromHFJSON(data, HFConfig{MaxVocab: 1 << 12})
		if err != nil {
			return
		}
		tk.Encode("ab a b <unk> ▁x", true, true)
	})
}
