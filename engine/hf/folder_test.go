package hf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/model"
	"flowchat/engine/sample"
)

// refCase is one llama.cpp reference case.
type refCase struct {
	InputIDs        []int32 `json:"input_ids"`
	GeneratedIDs    []int32 `json:"generated_ids"`
	PromptLogitFile string  `json:"prompt_logits_file"`
}

func readCases(t *testing.T, dir string) (cases []refCase, logits [][]float32) {
	paths, _ := filepath.Glob(filepath.Join(dir, "p*.json"))
	if len(paths) == 0 {
		t.Skip("no reference cases")
	}
	for _, p := range paths {
		var c refCase
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
		logits = append(logits, fixtures.ReadF32(t, filepath.Join(dir, c.PromptLogitFile)))
	}
	return cases, logits
}

// checkModel compares a network's prompt logits with llama.cpp's and its
// greedy continuation with the reference ids.
func checkModel(t *testing.T, m *model.Model, cases []refCase, logits [][]float32, tol float64) {
	t.Helper()
	V := m.NVocab
	for ci, c := range cases {
		s := m.NewState(256, 64)
		got, err := s.Forward(c.InputIDs, true)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for p := range c.InputIDs {
			worst = max(worst, fixtures.RelRMS(got[p*V:(p+1)*V], logits[ci][p*V:(p+1)*V]))
		}
		if worst > tol {
			t.Errorf("case %d: worst rel RMS %.2e > %.0e", ci, worst, tol)
		}
		tok := sample.Greedy(got[(len(c.InputIDs)-1)*V:])
		for i, want := range c.GeneratedIDs {
			if tok != want {
				t.Errorf("case %d: greedy token %d = %d, want %d", ci, i, tok, want)
				break
			}
			l, err := s.Forward([]int32{tok}, false)
			if err != nil {
				t.Fatal(err)
			}
			tok = sample.Greedy(l)
		}
		t.Logf("case %d: worst rel RMS %.2e", ci, worst)
	}
}

// TestTinyStoriesVariants: the HF folder and every PyTorch/safetensors
// variant of TinyStories-656K give llama.cpp's F32 logits and greedy text.
func TestTinyStoriesVariants(t *testing.T) {
	cases, logits := readCases(t, fixtures.Path(t, "reference/trained/TinyStories-656K/F32"))
	for _, v := range []struct {
		dir string
		tol float64
	}{
		{"models/tinystories-656K/hf", 1e-3},
		{"pytorch/tinystories-656K-torch-zip", 1e-3},
		{"pytorch/tinystories-656K-torch-legacy", 1e-3},
		{"pytorch/tinystories-656K-torch-sharded", 1e-3},
		{"pytorch/tinystories-656K-safetensors-sharded", 1e-3},
		{"pytorch/tinystories-656K-torch-zip-bf16", 1e-2},
		{"pytorch/tinystories-656K-safetensors-f16", 1e-2},
		{"pytorch/tinystories-656K-safetensors-bf16", 1e-2},
	} {
		t.Run(filepath.Base(v.dir), func(t *testing.T) {
			f, err := Open(fixtures.Path(t, v.dir), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := f.Build(model.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if f.Spec.Family != "llama-hf" || m.NVocab != 2048 || m.NHeadKV != 4 {
				t.Errorf("spec %s, vocab %d, kv heads %d", f.Spec.Family, m.NVocab, m.NHeadKV)
			}
			checkModel(t, m, cases, logits, v.tol)
			tok, err := f.Tokenizer()
			if err != nil {
				t.Fatal(err)
			}
			if ids := tok.Encode("Once upon a time", true, false); len(ids) != 6 || ids[0] != 1 {
				t.Errorf("tokenizer: %v", ids)
			}
		})
	}
}
