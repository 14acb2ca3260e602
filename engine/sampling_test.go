package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/sample"
)

func loadFixture(t *testing.T, rel string, threads int) *Model {
	t.Helper()
	m, err := Load(fixtures.Path(t, rel), LoadOptions{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// generateIDs runs a sampler over the model token by token and returns the
// ids and the surprise (−log2 of the model's probability, before any
// truncation) of each chosen token.
func generateIDs(t *testing.T, m *Model, prompt string, p sample.Params, n int) ([]int32, []float64) {
	t.Helper()
	sm, err := sample.New(p, m.Net.NVocab, sample.WithVocab(m.Tok))
	if err != nil {
		t.Fatal(err)
	}
	ids := m.Tok.Encode(prompt, true, true)
	st := m.Net.NewState(len(ids)+n+1, 64)
	logits, err := st.Forward(ids, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		sm.Accept(id)
	}
	var out []int32
	var surprise []float64
	for i := 0; i < n; i++ {
		tok := sm.Sample(logits)
		sm.Accept(tok)
		surprise = append(surprise, -math.Log2(softmaxAt(logits, tok)))
		out = append(out, tok)
		if logits, err = st.Forward([]int32{tok}, false); err != nil {
			t.Fatal(err)
		}
	}
	return out, surprise
}

func softmaxAt(logits []float32, tok int32) float64 {
	maxv := math.Inf(-1)
	for _, v := range logits {
		maxv = math.Max(maxv, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - maxv)
	}
	return math.Exp(float64(logits[tok])-maxv) / sum
}

// TestMirostatConvergesToTau: on TinyStories-656K the average observed
// surprise of 300 generated tokens lands within 10% of tau, for both mirostat
// versions and tau 3 and 5. Observed surprise is mirostat's own: −log2 of the
// chosen token's probability in the distribution it drew from, read back
// from the controller (mu moves by eta·(surprise − tau) each step).
//
// The temperature is 1.3: at 1.0 this model's own sampling entropy is about
// 3.9 bits, below tau = 5, and mirostat can only truncate, never add
// surprise (docs/SAMPLING.md).
func TestMirostatConvergesToTau(t *testing.T) {
	m := loadFixture(t, "models/tinystories-656K/TinyStories-656K-F32.gguf", 2)
	for _, version := range []int{1, 2} {
		for _, tau := range []float32{3, 5} {
			p := sample.DefaultParams()
			p.Mirostat, p.MirostatTau, p.MirostatEta, p.Seed, p.Temperature = version, tau, 0.1, 42, 1.3
			mean := mirostatSurprise(t, m, p, 300)
			t.Logf("mirostat v%d tau %.0f: mean observed surprise %.3f bits", version, tau, mean)
			if math.Abs(mean-float64(tau)) > 0.1*float64(tau) {
				t.Errorf("mirostat v%d tau %.0f: mean surprise %.3f, want within 10%%", version, tau, mean)
			}
		}
	}
}

func mirostatSurprise(t *testing.T, m *Model, p sample.Params, n int) float64 {
	sm, err := sample.New(p, m.Net.NVocab)
	if err != nil {
		t.Fatal(err)
	}
	ids := m.Tok.Encode("Once upon a time", true, true)
	st := m.Net.NewState(len(ids)+n+1, 64)
	logits, err := st.Forward(ids, false)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i := 0; i < n; i++ {
		before := sm.Mu()
		tok := sm.Sample(logits)
		sm.Accept(tok)
		sum += float64(p.MirostatTau) - float64(sm.Mu()-before)/float64(p.MirostatEta)
		if logits, err = st.Forward([]int32{tok}, false); err != nil {
			t.Fatal(err)
		}
	}
	return sum / float64(n)
}

// distinctRatio is the share of distinct n-grams among all n-grams of ids.
func distinctRatio(ids []int32, n int) float64 {
	seen := map[string]bool{}
	total := 0
	for i := 0; i+n <= len(ids); i++ {
		seen[fmt.Sprint(ids[i:i+n])] = true
		total++
	}
	return float64(len(seen)) / float64(total)
}

// TestFSDReducesRepetition: FSD is deterministic and repeats itself less
// than greedy decoding on the trained tiny models (ratios go to
// docs/SAMPLING.md).
func TestFSDReducesRepetition(t *testing.T) {
	for _, rel := range []string{"models/stories260K/stories260K-F32.gguf", "models/tinystories-656K/TinyStories-656K-F32.gguf"} {
		m := loadFixture(t, rel, 2)
		greedy := sample.DefaultParams()
		greedy.Decoding = "greedy"
		fsd := sample.DefaultParams()
		fsd.Decoding = "fsd"
		g, _ := generateIDs(t, m, "Once upon a time", greedy, 200)
		f1, _ := generateIDs(t, m, "Once upon a time", fsd, 200)
		f2, _ := generateIDs(t, m, "Once upon a time", fsd, 200)
		if fmt.Sprint(f1) != fmt.Sprint(f2) {
			t.Errorf("%s: FSD is not deterministic", rel)
		}
		for _, n := range []int{2, 3, 4} {
			gr, fr := distinctRatio(g, n), distinctRatio(f1, n)
			t.Logf("%s: distinct-%d greedy %.3f, FSD %.3f", rel, n, gr, fr)
			if n == 3 && fr <= gr {
				t.Errorf("%s: FSD distinct-3 %.3f not above greedy %.3f", rel, fr, gr)
			}
		}
	}
}

// TestSeedReproducibleAcrossThreads: the same seed and settings give the
// same text whatever the thread count.
func TestSeedReproducibleAcrossThreads(t *testing.T) {
	var outs []string
	for _, threads := range []int{1, 2, 3} {
		m := loadFixture(t, "models/tinystories-656K/TinyStories-656K-F32.gguf", threads)
		p := sample.DefaultParams()
		p.Seed, p.Temperature, p.TopP, p.MinP = 1234, 1.1, 0.95, 0.02
		s := m.NewSession(256)
		text := ""
		_, err := s.Generate(context.Background(), m.Tok.Encode("The little dog", true, true), GenerateOptions{
			MaxTokens: 64, Sampling: p, IgnoreEOG: true,
			OnPiece: func(x string) bool { text += x; return true },
		})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, text)
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Errorf("outputs differ across thread counts:\n%q\n%q\n%q", outs[0], outs[1], outs[2])
	}
}
