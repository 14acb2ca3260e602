package tokenizer

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
)

func readJSON(tb testing.TB, rel string, v any) {
	tb.Helper()
	b, err := os.ReadFile(fixtures.Path(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
}

// archModel is the fixture GGUF of an arch name in the reference JSONs.
func archModel(arch string) string { return "arch/rand-" + arch + "-F32.gguf" }

// TestArchTokenizerCases compares with llama-tokenize --ids on every arch
// fixture. llama-tokenize passes add_special = the model's add_bos flag (so
// T5, which adds no BOS, gets no EOS either) and parse_special = true.
func TestArchTokenizerCases(t *testing.T) {
	var ref struct {
		Cases map[string][]struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		} `json:"cases"`
	}
	readJSON(t, "reference/arch/tokenizer_cases.json", &ref)
	for arch, cases := range ref.Cases {
		t.Run(arch, func(t *testing.T) {
			tk := loadGGUF(t, archModel(arch))
			for _, c := range cases {
				if got := tk.Encode(c.Text, tk.AddBOS(), true); !equalIDs(got, c.IDs) {
					t.Errorf("%q:\n got %v\nwant %v", c.Text, got, c.IDs)
				}
			}
		})
	}
}

// TestArchSequences checks the input ids of the arch fixtures' reference
// sequences (T5 inputs had </s> appended by hand, as llama-tokenize adds
// nothing there).
func TestArchSequences(t *testing.T) {
	var ref struct {
		Texts    []string             `json:"texts"`
		TokenIDs map[string][][]int32 `json:"token_ids"`
	}
	readJSON(t, "reference/arch/sequences.json", &ref)
	for arch, seqs := range ref.TokenIDs {
		tk := loadGGUF(t, archModel(arch))
		for i, text := range ref.Texts {
			got := tk.Encode(text, tk.AddBOS(), true)
			if arch == "t5" {
				got = append(got, tk.EOS())
			}
			if !equalIDs(got, seqs[i]) {
				t.Errorf("%s %q:\n got %v\nwant %v", arch, text, got, seqs[i])
			}
		}
	}
}

// refCase is the part of an llref case JSON the tokenizer is checked on.
type refCase struct {
	Model         string   `json:"model"`
	InputIDs      []int32  `json:"input_ids"`
	GeneratedIDs  []int32  `json:"generated_ids"`
	GeneratedText string   `json:"generated_text"`
	GeneratedHex  string   `json:"generated_text_hex"`
	PiecesHex     []string `json:"generated_pieces_hex"`
	FullText      string   `json:"full_text"`
}

func relShared(tb testing.TB, p string) string {
	rel, err := filepath.Rel(fixtures.Shared(tb), p)
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// TestTrainedPrompts compares with the prompt ids llama-tokenize gave for the
// trained models.
func TestTrainedPrompts(t *testing.T) {
	var ref struct {
		Prompts  []string             `json:"prompts"`
		TokenIDs map[string][][]int32 `json:"token_ids"`
	}
	readJSON(t, "reference/trained/prompts.json", &ref)
	models := map[string]string{
		"stories260K":      "models/stories260K/stories260K-F32.gguf",
		"TinyStories-656K": "models/tinystories-656K/TinyStories-656K-F32.gguf",
	}
	for name, ids := range ref.TokenIDs {
		tk := loadGGUF(t, models[name])
		for i, p := range ref.Prompts {
			if got := tk.Encode(p, tk.AddBOS(), true); !equalIDs(got, ids[i]) {
				t.Errorf("%s %q:\n got %v\nwant %v", name, p, got, ids[i])
			}
		}
	}
}

// TestReferencePieces checks Piece, Decode and the streaming Decoder against
// the generated tokens of every reference case: pieces byte for byte,
// Decode against llama_detokenize's bytes, the Decoder against the text
// with invalid UTF-8 replaced.
func TestReferencePieces(t *testing.T) {
	root := fixtures.Shared(t)
	var paths []string
	for _, pat := range []string{"reference/arch/*/s*.json", "reference/arch/*/*/s*.json", "reference/trained/*/*/p*.json"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		paths = append(paths, m...)
	}
	cache := map[string]*Tokenizer{}
	n := 0
	for _, p := range paths {
		var c refCase
		readJSON(t, relShared(t, p), &c)
		if len(c.PiecesHex) == 0 {
			continue
		}
		rel := strings.TrimPrefix(c.Model, "models/")
		if !strings.HasPrefix(rel, "arch/") {
			rel = trainedModel(rel)
		}
		tk := cache[rel]
		if tk == nil {
			tk = loadGGUF(t, rel)
			cache[rel] = tk
		}
		checkCase(t, relShared(t, p), tk, &c)
		n++
	}
	if n == 0 {
		t.Skip("no reference cases")
	}
	t.Logf("%d reference cases", n)
}

// trainedModel maps "stories260K-Q4_0mix.gguf" to its fixture path.
func trainedModel(base string) string {
	if strings.HasPrefix(base, "TinyStories-656K") {
		return "models/tinystories-656K/" + base
	}
	return "models/stories260K/" + base
}

func checkCase(t *testing.T, name string, tk *Tokenizer, c *refCase) {
	t.Helper()
	for i, id := range c.GeneratedIDs {
		if got := hex.EncodeToString(tk.Piece(id)); got != c.PiecesHex[i] {
			t.Errorf("%s: piece %d (id %d) = %s, want %s", name, i, id, got, c.PiecesHex[i])
		}
	}
	if got := hex.EncodeToString([]byte(tk.Decode(c.GeneratedIDs))); got != c.GeneratedHex {
		t.Errorf("%s: Decode = %s\nwant %s", name, got, c.GeneratedHex)
	}
	d := tk.NewDecoder()
	var sb strings.Builder
	for _, id := range c.GeneratedIDs {
		sb.WriteString(d.Add(id))
	}
	sb.WriteString(d.Flush())
	if sb.String() != c.GeneratedText {
		t.Errorf("%s: Decoder = %q\nwant %q", name, sb.String(), c.GeneratedText)
	}
	if c.FullText != "" {
		all := append(append([]int32(nil), c.InputIDs...), c.GeneratedIDs...)
		if got := validUTF8([]byte(tk.Decode(all))); got != c.FullText {
			t.Errorf("%s: Decode(prompt+generated) = %q\nwant %q", name, got, c.FullText)
		}
	}
}
