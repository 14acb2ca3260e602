package sample

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
)

func mustNew(t testing.TB, p Params, nVocab int, opts ...Option) *Sampler {
	t.Helper()
	s, err := New(p, nVocab, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readF32(t *testing.T, path string, cols int) [][]float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]float32, len(b)/4)
	for i := range all {
		all[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	var rows [][]float32
	for i := 0; i+cols <= len(all); i += cols {
		rows = append(rows, all[i:i+cols])
	}
	return rows
}

type refCase struct {
	NVocab       int     `json:"n_vocab"`
	InputIDs     []int32 `json:"input_ids"`
	PromptArgmax []int32 `json:"prompt_argmax"`
	GeneratedIDs []int32 `json:"generated_ids"`
}

// TestGreedyMatchesLlamaCpp replays llama.cpp's greedy generations: the
// argmax of every recorded step's logits is the token llama.cpp chose, and
// a Sampler in greedy mode, or sampling at temperature 0 through the whole
// default chain, chooses the same.
func TestGreedyMatchesLlamaCpp(t *testing.T) {
	for _, model := range []string{"stories260K", "TinyStories-656K"} {
		dir := fixtures.Path(t, filepath.Join("reference/trained", model, "F32"))
		for _, p := range []string{"p0", "p1", "p2"} {
			var rc refCase
			b, err := os.ReadFile(filepath.Join(dir, p+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rc); err != nil {
				t.Fatal(err)
			}
			for i, row := range readF32(t, filepath.Join(dir, p+".prompt_logits.f32"), rc.NVocab) {
				if got := Greedy(row); got != rc.PromptArgmax[i] {
					t.Errorf("%s %s prompt row %d: argmax %d, llama.cpp %d", model, p, i, got, rc.PromptArgmax[i])
				}
			}
			steps := readF32(t, filepath.Join(dir, p+".step_logits.f32"), rc.NVocab)
			greedy := DefaultParams()
			greedy.Decoding, greedy.Seed = DecodingGreedy, 1
			cold := DefaultParams()
			cold.Temperature, cold.Seed = 0, 2
			for _, params := range []Params{greedy, cold} {
				s := mustNew(t, params, rc.NVocab)
				for _, tok := range rc.InputIDs {
					s.Accept(tok)
				}
				for i, row := range steps {
					if got := s.Sample(row); got != rc.GeneratedIDs[i] {
						t.Fatalf("%s %s %s step %d: chose %d, llama.cpp %d", model, p, params.Decoding, i, got, rc.GeneratedIDs[i])
					}
					s.Accept(rc.GeneratedIDs[i])
				}
			}
		}
	}
}

// logitStream is a deterministic sequence of logit vectors for a run.
func logitStream(n, nVocab int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = randLogits(nVocab, uint64(1000+i))
	}
	return out
}

func generate(s *Sampler, stream [][]float32) []int32 {
	var toks []int32
	for _, l := range stream {
		tok := s.Sample(l)
		s.Accept(tok)
		toks = append(toks, tok)
	}
	return toks
}

// configs covers every decoding path.
func configs() map[string]Params {
	base := DefaultParams()
	base.Seed = 1234
	m := map[string]Params{"default": base}
	p := base
	p.RepeatPenalty, p.FrequencyPenalty, p.PresencePenalty = 1.3, 0.2, 0.3
	p.DRYMultiplier = 0.8
	p.XTCProbability, p.XTCThreshold = 0.5, 0.05
	p.TypicalP, p.TFSZ, p.TopK, p.Temperature = 0.9, 0.95, 0, 1.2
	m["everything"] = p
	p = base
	p.Mirostat = 1
	m["mirostat1"] = p
	p.Mirostat = 2
	m["mirostat2"] = p
	p = base
	p.Decoding = DecodingFSD
	m["fsd"] = p
	p.Decoding = DecodingRandomFSD
	m["random-fsd"] = p
	p = base
	p.Decoding = DecodingGreedy
	p.RepeatPenalty = 1.1
	m["greedy"] = p
	return m
}

func TestSeedReproducible(t *testing.T) {
	stream := logitStream(120, 512)
	for name, p := range configs() {
		a := generate(mustNew(t, p, 512), stream)
		b := generate(mustNew(t, p, 512), stream)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different tokens", name)
		}
		s := mustNew(t, p, 512)
		generate(s, stream[:50])
		s.Reset()
		if c := generate(s, stream); !slices.Equal(a, c) {
			t.Errorf("%s: Reset does not replay", name)
		}
		if name == "greedy" || name == "fsd" {
			continue
		}
		p.Seed++
		if d := generate(mustNew(t, p, 512), stream); slices.Equal(a, d) {
			t.Errorf("%s: another seed gave the same 120 tokens", name)
		}
	}
}

func TestSeedRandom(t *testing.T) {
	p := DefaultParams()
	a, b := mustNew(t, p, 8), mustNew(t, p, 8)
	if a.Seed() == SeedRandom || a.Seed() == b.Seed() {
		t.Errorf("drawn seeds %d %d", a.Seed(), b.Seed())
	}
	p.Seed = a.Seed()
	stream := logitStream(50, 8)
	if !slices.Equal(generate(a, stream), generate(mustNew(t, p, 8), stream)) {
		t.Error("replaying the reported seed differs")
	}
}

// Explain runs the step on copies of the state: interleaving it changes
// nothing, and it names the token Sample then returns.
func TestExplainDoesNotAdvance(t *testing.T) {
	stream := logitStream(80, 256)
	for name, p := range configs() {
		want := generate(mustNew(t, p, 256), stream)
		s := mustNew(t, p, 256)
		for i, l := range stream {
			e := s.Explain(l)
			e2 := s.Explain(l)
			tok := s.Sample(l)
			s.Accept(tok)
			if tok != want[i] || e.Chosen != tok || e2.Chosen != tok {
				t.Fatalf("%s step %d: sample %d, alone %d, explain %d/%d", name, i, tok, want[i], e.Chosen, e2.Chosen)
			}
		}
	}
}

func TestExplainStages(t *testing.T) {
	p := DefaultParams()
	p.Seed, p.TopK, p.TopP, p.MinP = 5, 3, 1, 0.2
	s := mustNew(t, p, 5)
	// p = .4 .3 .2 .06 .04: top_k 3 removes 3 and 4; min_p 0.2 (0.08 of the
	// top) keeps the rest.
	e := s.Explain(logitsOf(0.4, 0.3, 0.2, 0.06, 0.04))
	var names []string
	for _, st := range e.Stages {
		names = append(names, st.Stage)
	}
	// Stages switched off by their settings are left out.
	want := []string{StageTopK, StageMinP, StageTemperature, "dist"}
	if !slices.Equal(names, want) {
		t.Fatalf("stages %v, want %v", names, want)
	}
	if by := e.RemovedBy(3); by != StageTopK {
		t.Errorf("token 3 removed by %q, want top_k", by)
	}
	if by := e.RemovedBy(0); by != "" {
		t.Errorf("token 0 removed by %q", by)
	}
	topk := e.Stages[0]
	if topk.In != 5 || topk.Out != 3 || len(topk.Candidates) != 5 {
		t.Fatalf("top_k report %+v", topk)
	}
	for _, c := range topk.Candidates {
		if c.Kept && math.Abs(float64(c.P)-float64(c.PBefore)/0.9) > 1e-6 {
			t.Errorf("token %d: renormalized p %g, want %g", c.Token, c.P, c.PBefore/0.9)
		}
	}
	if _, err := json.Marshal(e); err != nil {
		t.Fatal(err)
	}
}

func TestSampleKeepsCallerLogits(t *testing.T) {
	for name, p := range configs() {
		s := mustNew(t, p, 300)
		for _, tok := range []int32{1, 2, 3, 1, 2} {
			s.Accept(tok)
		}
		l := randLogits(300, 5)
		orig := slices.Clone(l)
		s.Sample(l)
		s.Explain(l)
		if !slices.Equal(l, orig) {
			t.Errorf("%s: caller's logits changed", name)
		}
	}
}

func TestSampleAllocs(t *testing.T) {
	stream := logitStream(8, 4096)
	for name, p := range configs() {
		s := mustNew(t, p, 4096)
		generate(s, stream) // warm: DRY's scratch grows to the context once
		i := 0
		allocs := testing.AllocsPerRun(200, func() {
			s.Accept(s.Sample(stream[i%len(stream)]))
			i++
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Sample+Accept", name, allocs)
		}
	}
}

// FSD on a hand-computed case: bigram anti-LM (n = 2), beta 0.9, alpha 0.5,
// k = 3, history 0 1 0 1 0, P_LM = .1 .5 .3 .1.
//
//	token 1: after "0" 2 of 2 times: 0.9*2/3 = 0.6, then unigram 0.1*2/5 = 0.04
//	         score 0.5*0.5 - 0.5*0.64 = -0.07
//	token 2: never seen: 0.5*0.3 = 0.15
//	token 0: never after "0"; unigram 3/5: 0.5*0.1 - 0.5*0.6 = -0.25
func TestFSDHandComputed(t *testing.T) {
	p := DefaultParams()
	p.Decoding, p.FSDN, p.FSDK, p.FSDAlpha, p.FSDBeta, p.Seed = DecodingFSD, 2, 3, 0.5, 0.9, 1
	s := mustNew(t, p, 4)
	for _, tok := range []int32{0, 1, 0, 1, 0} {
		s.Accept(tok)
	}
	l := logitsOf(0.1, 0.5, 0.3, 0.1)
	e := s.Explain(l)
	if tok := s.Sample(l); tok != 2 || e.Chosen != 2 {
		t.Fatalf("FSD chose %d (explain %d), want 2", tok, e.Chosen)
	}
	st := e.Stages[len(e.Stages)-1]
	want := map[int32]float32{1: -0.07, 2: 0.15, 0: -0.25}
	if st.Stage != "fsd" || st.Out != 3 {
		t.Fatalf("last stage %+v", st)
	}
	for _, c := range st.Candidates {
		if w, ok := want[c.Token]; ok != c.Kept || (ok && math.Abs(float64(c.Score-w)) > 1e-6) {
			t.Errorf("token %d: kept %v score %g, want %v %g", c.Token, c.Kept, c.Score, ok, w)
		}
	}
	// alpha 0 is greedy.
	p.FSDAlpha = 0
	s = mustNew(t, p, 4)
	for _, tok := range []int32{0, 1, 0, 1, 0} {
		s.Accept(tok)
	}
	if tok := s.Sample(l); tok != 1 {
		t.Errorf("FSD alpha 0 chose %d, want greedy 1", tok)
	}
}

// FSD breaks a greedy loop: on logits that always prefer continuing a
// cycle, FSD's n-gram penalty eventually picks something else.
func TestFSDReducesRepetition(t *testing.T) {
	const n = 16
	next := func(prev int32) []float32 {
		l := make([]float32, n)
		for i := range l {
			l[i] = -float32((int32(i)-prev-1+n)%n) * 0.3 // prefer prev+1, then prev+2...
		}
		l[0] += 0.5 // and token 0
		return l
	}
	distinct := func(p Params) int {
		s := mustNew(t, p, n)
		prev := int32(0)
		s.Accept(prev)
		seen := map[[2]int32]bool{}
		for i := 0; i < 200; i++ {
			tok := s.Sample(next(prev))
			s.Accept(tok)
			seen[[2]int32{prev, tok}] = true
			prev = tok
		}
		return len(seen)
	}
	g := DefaultParams()
	g.Decoding, g.Seed = DecodingGreedy, 1
	f := g
	f.Decoding = DecodingFSD
	dg, df := distinct(g), distinct(f)
	t.Logf("distinct bigrams over 200 tokens: greedy %d, fsd %d", dg, df)
	if df <= dg {
		t.Errorf("FSD did not diversify: %d <= %d distinct bigrams", df, dg)
	}
}

func TestRandomFSD(t *testing.T) {
	stream := logitStream(40, 64)
	p := DefaultParams()
	p.Seed = 3
	p.Decoding = DecodingFSD
	fsdToks := generate(mustNew(t, p, 64), stream)
	p.Decoding, p.FSDRandomSteps = DecodingRandomFSD, 0
	if got := generate(mustNew(t, p, 64), stream); !slices.Equal(got, fsdToks) {
		t.Error("random-fsd with 0 random steps differs from fsd")
	}
	// With 10 random steps the tail is still FSD-driven, the head is mixed.
	p.FSDRandomSteps = 10
	sampled := 0
	for seed := uint64(0); seed < 20; seed++ {
		p.Seed = seed
		s := mustNew(t, p, 64)
		for i, l := range stream[:10] {
			e := s.Explain(l)
			if e.Stages[len(e.Stages)-1].Stage == "dist" {
				sampled++
			}
			s.Accept(s.Sample(l))
			_ = i
		}
	}
	if sampled < 60 || sampled > 140 { // 200 coin flips at 1/2
		t.Errorf("random-fsd sampled %d of 200 early steps", sampled)
	}
}

// Mirostat v2 on p = .5 .25 .125 .125 (surprises 1, 2, 3, 3 bits), tau
// 1.25: mu starts at 2.5, so only tokens 0 and 1 survive, renormalized to
// 2/3 and 1/3, and mu moves by eta times the error of the drawn token.
func TestMirostatV2Step(t *testing.T) {
	p := DefaultParams()
	p.Mirostat, p.MirostatTau, p.MirostatEta, p.Seed = 2, 1.25, 0.1, 11
	p.Temperature = 1
	s := mustNew(t, p, 4)
	if s.Mu() != 2.5 {
		t.Fatalf("initial mu %g, want 2 tau", s.Mu())
	}
	l := logitsOf(0.5, 0.25, 0.125, 0.125)
	e := s.Explain(l)
	last := e.Stages[len(e.Stages)-1]
	if last.Stage != "mirostat_v2" || last.Out != 2 {
		t.Fatalf("mirostat stage %+v", last)
	}
	counts := [4]int{}
	for i := 0; i < 2000; i++ {
		s.Reset()
		for j := uint64(0); j < uint64(i%7); j++ {
			s.rng.Uint64() // vary the draw
		}
		tok := s.Sample(l)
		counts[tok]++
		pr := map[int32]float64{0: 2.0 / 3, 1: 1.0 / 3}[tok]
		want := 2.5 - 0.1*(-math.Log2(pr)-1.25)
		if math.Abs(float64(s.Mu())-want) > 1e-5 {
			t.Fatalf("mu after drawing %d: %g, want %g", tok, s.Mu(), want)
		}
	}
	if counts[2]+counts[3] != 0 {
		t.Errorf("tokens above mu drawn: %v", counts)
	}
}

// zipfLogits is a Zipf-shaped distribution over n tokens with exponent s,
// its ranks shuffled by seed.
func zipfLogits(n int, s float64, seed uint64) []float32 {
	l := make([]float32, n)
	perm := randLogits(n, seed)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if perm[a] < perm[b] {
			return -1
		}
		return 1
	})
	for rank, i := range idx {
		l[i] = float32(-s * math.Log(float64(rank+1)))
	}
	return l
}

// Mirostat's control loop: over 300 tokens from Zipf-like distributions
// with a varying exponent, the average observed surprise (bits, of the
// drawn token in the distribution it was drawn from) is within 10% of tau.
func TestMirostatConverges(t *testing.T) {
	const n = 32000
	var dists [][]float32
	for i := 0; i < 8; i++ {
		dists = append(dists, zipfLogits(n, 1.0+0.05*float64(i), uint64(i)))
	}
	for _, mode := range []int{1, 2} {
		for _, tau := range []float32{3, 5} {
			p := DefaultParams()
			p.Mirostat, p.MirostatTau, p.Seed, p.Temperature = mode, tau, 77, 1
			s := mustNew(t, p, n)
			var sum float64
			for i := 0; i < 300; i++ {
				mu := s.Mu()
				s.Accept(s.Sample(dists[i%len(dists)]))
				// mu' = mu - eta (surprise - tau)
				sum += float64((mu-s.Mu())/p.MirostatEta + tau)
			}
			avg := sum / 300
			t.Logf("mirostat v%d tau %g: average surprise %.3f bits", mode, tau, avg)
			if math.Abs(avg-float64(tau)) > 0.1*float64(tau) {
				t.Errorf("mirostat v%d tau %g: average surprise %.3f", mode, tau, avg)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	nan := float32(math.NaN())
	cases := []struct {
		mut  func(*Params)
		want string
	}{
		{func(p *Params) { p.Temperature = -0.1 }, "temperature"},
		{func(p *Params) { p.Temperature = nan }, "temperature"},
		{func(p *Params) { p.TopP = 0 }, "top_p"},
		{func(p *Params) { p.TopP = 1.01 }, "top_p"},
		{func(p *Params) { p.TopK = -1 }, "top_k"},
		{func(p *Params) { p.MinP = 1.5 }, "min_p"},
		{func(p *Params) { p.TypicalP = 0 }, "typical_p"},
		{func(p *Params) { p.TFSZ = nan }, "tfs_z"},
		{func(p *Params) { p.MinKeep = -1 }, "min_keep"},
		{func(p *Params) { p.Mirostat = 3 }, "mirostat"},
		{func(p *Params) { p.Mirostat, p.MirostatTau = 2, 0 }, "mirostat_tau"},
		{func(p *Params) { p.Mirostat, p.MirostatEta = 1, -1 }, "mirostat_eta"},
		{func(p *Params) { p.RepeatPenalty = 0 }, "repeat_penalty"},
		{func(p *Params) { p.RepeatLastN = -2 }, "repeat_last_n"},
		{func(p *Params) { p.PresencePenalty = 2.5 }, "presence_penalty"},
		{func(p *Params) { p.FrequencyPenalty = -3 }, "frequency_penalty"},
		{func(p *Params) { p.LogitBias = map[int32]float32{-1: 1} }, "logit_bias"},
		{func(p *Params) { p.LogitBias = map[int32]float32{1: nan} }, "logit_bias"},
		{func(p *Params) { p.DRYMultiplier = -1 }, "dry_multiplier"},
		{func(p *Params) { p.DRYMultiplier, p.DRYBase = 1, 0.5 }, "dry_base"},
		{func(p *Params) { p.DRYAllowedLength = -1 }, "dry_allowed_length"},
		{func(p *Params) { p.DRYPenaltyLastN = -5 }, "dry_penalty_last_n"},
		{func(p *Params) { p.DRYSequenceBreakers = []string{""} }, "dry_sequence_breakers"},
		{func(p *Params) { p.XTCProbability = 2 }, "xtc_probability"},
		{func(p *Params) { p.XTCThreshold = -0.1 }, "xtc_threshold"},
		{func(p *Params) { p.Decoding = "beam" }, "decoding"},
		{func(p *Params) { p.Decoding, p.FSDAlpha = DecodingFSD, 1.5 }, "fsd_alpha"},
		{func(p *Params) { p.Decoding, p.FSDK = DecodingFSD, 0 }, "fsd_k"},
		{func(p *Params) { p.Decoding, p.FSDN = DecodingRandomFSD, 0 }, "fsd_n"},
		{func(p *Params) { p.Decoding, p.FSDN = DecodingFSD, 1<<30 }, "fsd_n"},
		{func(p *Params) { p.Decoding, p.FSDBeta = DecodingFSD, 0 }, "fsd_beta"},
		{func(p *Params) { p.Decoding, p.FSDRandomSteps = DecodingRandomFSD, -1 }, "fsd_random_steps"},
		{func(p *Params) { p.Order = []string{"top_k", "bogus"} }, "bogus"},
		{func(p *Params) { p.Order = []string{"top_k", "top-k"} }, "twice"},
	}
	for _, c := range cases {
		p := DefaultParams()
		c.mut(&p)
		err := p.Validate()
		if err == nil || !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v", c.want, err)
			continue
		}
		if _, err := New(p, 10); err == nil {
			t.Errorf("%s: New accepted it", c.want)
		}
	}
	// Several problems are all reported.
	p := DefaultParams()
	p.TopP, p.Temperature = 2, -1
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "top_p") || !strings.Contains(err.Error(), "temperature") {
		t.Errorf("joined errors: %v", err)
	}
	if _, err := New(DefaultParams(), 0); err == nil {
		t.Error("empty vocabulary accepted")
	}
}

func TestOrderAliasesAndCustomOrder(t *testing.T) {
	p := DefaultParams()
	p.Seed = 1
	p.Order = []string{"Temperature", "top-k"}
	s := mustNew(t, p, 10)
	e := s.Explain(randLogits(10, 1))
	if e.Stages[0].Stage != StageTemperature || e.Stages[1].Stage != StageTopK || len(e.Stages) != 3 {
		t.Errorf("custom order ran %v", e.Stages)
	}
}

func TestParamsJSON(t *testing.T) {
	b, err := json.Marshal(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"temperature", "top_p", "top_k", "min_p", "typical_p", "tfs_z", "mirostat", "mirostat_tau", "mirostat_eta",
		"repeat_penalty", "repeat_last_n", "presence_penalty", "frequency_penalty", "seed", "logit_bias", "dry_multiplier", "dry_base",
		"dry_allowed_length", "dry_penalty_last_n", "dry_sequence_breakers", "xtc_probability", "xtc_threshold", "decoding", "fsd_alpha", "fsd_k", "fsd_n"} {
		if !strings.Contains(string(b), `"`+key+`"`) {
			t.Errorf("JSON lacks %q: %s", key, b)
		}
	}
	var p Params
	if err := json.Unmarshal([]byte(`{"temperature":0.7,"top_p":0.9,"seed":42,"logit_bias":{"50256":-100}}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Temperature != 0.7 || p.TopP != 0.9 || p.Seed != 42 || p.LogitBias[50256] != -100 {
		t.Errorf("OpenAI-style request decoded as %+v", p)
	}
}
