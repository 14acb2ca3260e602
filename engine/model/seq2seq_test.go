package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

func loadFixture(t *testing.T, rel string) *Model {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := FromGGUF(f, nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

type encCase struct {
	InputIDs     []int32 `json:"input_ids"`
	GeneratedIDs []int32 `json:"generated_ids"`
	TokenEmbd    string  `json:"token_embd_file"`
	Pooled       string  `json:"pooled_file"`
	EncoderOut   string  `json:"encoder_out_file"`
	StepLogits   string  `json:"step_logits_file"`
}

func encCases(t *testing.T, arch string) (dir string, cases []encCase) {
	dir = fixtures.Path(t, "reference/arch/"+arch)
	paths, _ := filepath.Glob(filepath.Join(dir, "s*.json"))
	for _, p := range paths {
		var c encCase
		data, _ := os.ReadFile(p)
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Skip("no cases")
	}
	return dir, cases
}

// rowsRMS returns the worst per-row relative RMS error of got vs ref.
func rowsRMS(got, ref []float32, width int) float64 {
	worst := 0.0
	for r := 0; r+width <= len(ref); r += width {
		worst = max(worst, fixtures.RelRMS(got[r:r+width], ref[r:r+width]))
	}
	return worst
}

// TestBERTReference: the random BERT's per-token embeddings and mean-pooled
// vector match llama.cpp's.
func TestBERTReference(t *testing.T) {
	m := loadFixture(t, "arch/rand-bert-F32.gguf")
	dir, cases := encCases(t, "bert")
	for i, c := range cases {
		hidden, pooled, err := m.Embed(c.InputIDs)
		if err != nil {
			t.Fatal(err)
		}
		e1 := rowsRMS(hidden, fixtures.ReadF32(t, filepath.Join(dir, c.TokenEmbd)), m.NEmbd)
		e2 := fixtures.RelRMS(pooled, fixtures.ReadF32(t, filepath.Join(dir, c.Pooled)))
		t.Logf("s%d: token embeddings rel RMS %.2e, pooled %.2e", i, e1, e2)
		if e1 > 1e-3 || e2 > 1e-3 {
			t.Errorf("s%d: rel RMS %.2e / %.2e", i, e1, e2)
		}
	}
}

// TestT5Reference: the random T5's encoder output, every decoder step's
// logits and the greedy ids match llama.cpp's.
func TestT5Reference(t *testing.T) {
	m := loadFixture(t, "arch/rand-t5-F32.gguf")
	dir, cases := encCases(t, "t5")
	V := m.NVocab
	for i, c := range cases {
		s := m.NewState(256, 64)
		logits, err := s.Forward(c.InputIDs, false)
		if err != nil {
			t.Fatal(err)
		}
		e1 := rowsRMS(s.sq.encOut, fixtures.ReadF32(t, filepath.Join(dir, c.EncoderOut)), m.NEmbd)
		ref := fixtures.ReadF32(t, filepath.Join(dir, c.StepLogits))
		worst := 0.0
		for step, want := range c.GeneratedIDs {
			worst = max(worst, fixtures.RelRMS(logits, ref[step*V:(step+1)*V]))
			if got := argmax(logits); got != want {
				t.Errorf("s%d: step %d greedy %d, want %d", i, step, got, want)
				break
			}
			if logits, err = s.Forward([]int32{want}, false); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("s%d: encoder rel RMS %.2e, step logits %.2e", i, e1, worst)
		if e1 > 1e-3 || worst > 1e-3 {
			t.Errorf("s%d: rel RMS %.2e / %.2e", i, e1, worst)
		}
	}
}

// TestSeqTruncate: after a truncation the state encodes again, so a
// repeated prompt gives the first step's logits again.
func TestSeqTruncate(t *testing.T) {
	m := loadFixture(t, "arch/rand-t5-F32.gguf")
	s := m.NewState(64, 16)
	in := []int32{65, 75, 94, 1}
	a, _ := s.Forward(in, false)
	a = append([]float32(nil), a...)
	s.Forward([]int32{argmax(a)}, false)
	s.Truncate(len(in) - 1)
	b, err := s.Forward(in[len(in)-1:], false)
	if err != nil || fixtures.RelRMS(b, a) > 1e-6 || s.Pos() != len(in) {
		t.Errorf("after truncate: rel RMS %.2e, pos %d, err %v", fixtures.RelRMS(b, a), s.Pos(), err)
	}
}
