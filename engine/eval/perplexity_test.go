package eval

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
)

// pplReference is reference/trained/perplexity.json: llama-perplexity -c 128
// with an F32 KV cache over text/tinystories_eval.txt.
type pplReference struct {
	NCtx    int `json:"n_ctx"`
	Results map[string]struct {
		Model   string    `json:"model"`
		PPL     float64   `json:"ppl"`
		StdErr  float64   `json:"ppl_stderr"`
		NChunks int       `json:"n_chunks"`
		Running []float64 `json:"running_ppl_per_chunk"`
		PPLF16  float64   `json:"ppl_kv_f16"`
	} `json:"results"`
}

func loadPPLReference(t *testing.T) (pplReference, string) {
	t.Helper()
	var ref pplReference
	b, err := os.ReadFile(fixtures.Path(t, "reference/trained/perplexity.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(fixtures.Path(t, "text/tinystories_eval.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return ref, string(text)
}

// modelFile maps a reference model name (models/stories260K-F32.gguf) to
// its fixture, which lives in a folder per model family.
func modelFile(t *testing.T, name string) string {
	base := filepath.Base(name)
	dir := "stories260K"
	if strings.HasPrefix(base, "TinyStories-656K") {
		dir = "tinystories-656K"
	}
	return fixtures.Find("models/" + dir + "/" + base)
}

// TestPerplexityMatchesLlamaCpp reproduces llama-perplexity on every
// reference model (F32 and llama.cpp-quantized GGUF files): the final value
// within 0.5% (the bar) and, for chunk-by-chunk agreement, every
// running value within 0.5% too.
func TestPerplexityMatchesLlamaCpp(t *testing.T) {
	ref, text := loadPPLReference(t)
	for name, want := range ref.Results {
		path := modelFile(t, want.Model)
		if path == "" {
			t.Logf("%s: model file absent, skipped", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			tokens := m.Tok.Encode(text, true, false)
			got, err := Perplexity(m, tokens, ChunkOptions{Ctx: ref.NCtx, BOS: m.Tok.BOS()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Chunks != want.NChunks {
				t.Fatalf("%d chunks, llama-perplexity had %d", got.Chunks, want.NChunks)
			}
			rel := math.Abs(got.PPL-want.PPL) / want.PPL
			t.Logf("PPL %.4f ± %.5f, llama-perplexity %.4f ± %.5f (%.3f%%)", got.PPL, got.StdErr, want.PPL, want.StdErr, 100*rel)
			if !(rel <= 0.005) { // NaN fails too
				t.Errorf("PPL %.4f differs from llama-perplexity's %.4f by %.2f%%", got.PPL, want.PPL, 100*rel)
			}
			if !(math.Abs(got.StdErr-want.StdErr)/want.StdErr <= 0.02) {
				t.Errorf("stderr %.5f, llama-perplexity %.5f", got.StdErr, want.StdErr)
			}
			for i, r := range want.Running {
				if !(math.Abs(got.Running[i]-r)/r <= 0.005) {
					t.Errorf("chunk %d: running PPL %.4f, llama-perplexity %.4f", i+1, got.Running[i], r)
				}
			}
		})
	}
}

// TestPerplexityF16Cache reproduces llama-perplexity's -ctk f16 -ctv f16
// runs of the float models with an F16 KV cache, within 0.5%.
func TestPerplexityF16Cache(t *testing.T) {
	ref, text := loadPPLReference(t)
	for _, name := range []string{"stories260K-F32", "stories260K-F16", "TinyStories-656K-F32", "TinyStories-656K-Q8_0"} {
		want := ref.Results[name]
		path := modelFile(t, want.Model)
		if path == "" {
			continue
		}
		m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		tokens := m.Tok.Encode(text, true, false)
		got, err := Perplexity(NetScorer{Net: m.Net, KVType: ggml.F16}, tokens, ChunkOptions{Ctx: ref.NCtx, BOS: m.Tok.BOS()}, nil)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		rel := math.Abs(got.PPL-want.PPLF16) / want.PPLF16
		t.Logf("%s, F16 cache: PPL %.4f, llama-perplexity %.4f (%.3f%%)", name, got.PPL, want.PPLF16, 100*rel)
		if !(rel <= 0.005) {
			t.Errorf("%s, F16 cache: PPL %.4f, llama-perplexity %.4f", name, got.PPL, want.PPLF16)
		}
	}
}
