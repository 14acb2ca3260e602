package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/model"
	"flowchat/engine/quant"
	"flowchat/engine/sample"
)

// specRun generates with q on a fresh scheduler and returns the tokens.
func specRun(t testing.TB, m *Model, q Query) ([]int32, Stats) {
	t.Helper()
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 2, StepTokens: 256, Ctx: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var toks []int32
	q.OnToken = func(id int32) { toks = append(toks, id) }
	h, err := sc.AddQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, sc)
	st, err := h.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return toks, st
}

func loadTB(t testing.TB, path string, opt LoadOptions) *Model {
	t.Helper()
	m, err := Load(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// specPrompts are prompts of a story model: a repetitive one (n-gram
// drafts find matches), a plain one and one that starts a story.
func specPrompts(m *Model) [][]int32 {
	texts := []string{
		"Once upon a time, there was a little dog. The little dog was happy. Once upon a time, there was a little",
		"Lily and Tom went to the park.",
		"One day",
		// longer than maxCatchUp: the draft model restarts on a window
		strings.Repeat("Tim and Sue played in the garden with a red ball and a little dog. ", 6) + "Then",
	}
	var out [][]int32
	for _, s := range texts {
		out = append(out, m.Tok.Encode(s, true, false))
	}
	return out
}

// TestSpecGreedyStrictIsPlainGreedy: greedy (and FSD) decoding with strict
// acceptance gives exactly the plain tokens, for each drafter
// (n-gram, a load-time lower-bit copy of the target, the target's first
// half of layers, another file of the same model), fixed and adaptive K,
// on the fixture models; and the drafters did draft.
func TestSpecGreedyStrictIsPlainGreedy(t *testing.T) {
	type target struct{ name, path, draftPath string }
	targets := []target{
		{"stories260K-F32", fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"), fixtures.Path(t, "models/stories260K/stories260K-Q8_0mix.gguf")},
		{"stories260K-Q8_0mix", fixtures.Path(t, "models/stories260K/stories260K-Q8_0mix.gguf"), fixtures.Path(t, "models/stories260K/stories260K-F16.gguf")},
		{"TinyStories-656K-F32", fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"), fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-Q4_0.gguf")},
	}
	if dir := fixtures.Find("arch"); dir != "" { // random-weight models of other architectures
		for _, n := range []string{"rand-llama-gqa-Q4_K.gguf", "rand-qwen2-F32.gguf", "rand-gemma-F32.gguf", "rand-phi3-F32.gguf"} {
			targets = append(targets, target{n, filepath.Join(dir, n), ""})
		}
	} else {
		t.Log("skipping the random-weight architectures: ../shared/testdata/arch is absent")
	}
	for _, tg := range targets {
		m := loadTB(t, tg.path, LoadOptions{Threads: 2})
		self := loadTB(t, tg.path, LoadOptions{Threads: 1, Quant: quant.Options{Type: ggml.Q4_0}})
		selfDraft, err := NewDraftModel(m, self, "Q4_0 self-draft")
		if err != nil {
			t.Fatal(err)
		}
		drafters := []Drafter{NGram{}, selfDraft}
		if m.Net.NLayer >= 2 {
			ee, err := NewEarlyExitDraft(m, m.Net.NLayer/2)
			if err != nil {
				t.Fatal(err)
			}
			drafters = append(drafters, ee)
		}
		if tg.draftPath != "" {
			other := loadTB(t, tg.draftPath, LoadOptions{Threads: 1})
			od, err := NewDraftModel(m, other, filepath.Base(tg.draftPath))
			if err != nil {
				t.Fatal(err)
			}
			drafters = append(drafters, od)
		}
		for _, dec := range []string{sample.DecodingGreedy, sample.DecodingFSD} {
			p := sample.DefaultParams()
			p.Decoding = dec
			p.RepeatPenalty = 1.1 // the chain's history stages run at every verified position
			for pi, prompt := range specPrompts(m) {
				if dec == sample.DecodingFSD && pi > 1 {
					break // FSD: two prompts suffice
				}
				want, _ := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 48, IgnoreEOG: true})
				for _, d := range drafters {
					for _, fixed := range []bool{true, false} {
						got, st := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 48, IgnoreEOG: true,
							Spec: &SpecOptions{Draft: d, K: 4, FixedK: fixed}})
						what := fmt.Sprintf("%s, %s, prompt %d, %s, fixed K %v", tg.name, dec, pi, d.Name(), fixed)
						if !slices.Equal(got, want) {
							t.Fatalf("%s:\n spec  %v\n plain %v", what, got, want)
						}
						if fixed && st.Drafted == 0 && d.Name() != "ngram" {
							t.Errorf("%s: nothing drafted", what)
						}
						t.Logf("%s: drafted %d, accepted %d (%.0f%%), %d drafting steps", what, st.Drafted, st.DraftAccepted, 100*st.AcceptRate(), st.SpecSteps)
					}
				}
			}
		}
	}
}

// TestNGramDraft: the n-gram drafter proposes what followed the latest
// occurrence of the longest matching suffix, as points.
func TestNGramDraft(t *testing.T) {
	d, _ := NGram{Max: 3, Min: 2}.newSeq(nil, sample.Params{})
	out, dists := make([]int32, 4), make([]sample.Dist, 4)
	for _, c := range []struct {
		ctx  []int32
		k    int
		want []int32
	}{
		{[]int32{1, 2, 3, 9, 9, 1, 2, 3, 7, 7, 1, 2, 3}, 4, []int32{7, 7, 1, 2}}, // the latest match of 3
		{[]int32{5, 6, 8, 1, 2, 3, 5, 6}, 2, []int32{8, 1}},                      // a match of 2
		{[]int32{5, 6, 8, 1, 2, 3, 6}, 4, nil},                                   // none: 1 token is too short
		{[]int32{4, 4, 4}, 4, []int32{4, 4, 4, 4}},                               // a loop: the copy reads its own output
		{[]int32{1, 2, 9, 1, 2}, 4, []int32{9, 1, 2, 9}},                         // past the end, the period goes on
	} {
		n, err := d.draft(c.ctx, c.k, out, dists)
		if err != nil || !slices.Equal(out[:n], c.want) {
			t.Errorf("draft(%v, %d) = %v, %v; want %v", c.ctx, c.k, out[:n], err, c.want)
		}
		for i := range n {
			if len(dists[i].IDs) != 1 || dists[i].IDs[0] != out[i] || dists[i].P[0] != 1 {
				t.Errorf("draft %d's distribution %+v is not a point on %d", i, dists[i], out[i])
			}
		}
	}
}

// TestSpecNGramDraftsRepeats: on a story model's greedy text (which
// repeats itself) the n-gram drafter drafts and a good share is kept.
func TestSpecNGramDraftsRepeats(t *testing.T) {
	m := schedModel(t, 1)
	p := sample.DefaultParams()
	p.Decoding = sample.DecodingGreedy
	prompt := specPrompts(m)[1]
	var drafted, kept, walks int
	toks, st := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 200, IgnoreEOG: true, Spec: &SpecOptions{Draft: NGram{}, K: 6, FixedK: true},
		OnSpec: func(n, k int) { drafted, kept, walks = drafted+n, kept+k, walks+1 }})
	// every walk is reported, the last one (which reaches MaxTokens) too
	if drafted != st.Drafted || kept != st.DraftAccepted || walks != st.SpecSteps {
		t.Errorf("OnSpec saw %d walks, %d drafted, %d kept; Stats %d, %d, %d", walks, drafted, kept, st.SpecSteps, st.Drafted, st.DraftAccepted)
	}
	if len(toks) != 200 || st.Drafted == 0 || st.AcceptRate() < 0.2 {
		t.Fatalf("%d tokens, drafted %d, accepted %d", len(toks), st.Drafted, st.DraftAccepted)
	}
	t.Logf("n-gram: drafted %d, accepted %d (%.0f%%), mean accepted %.2f", st.Drafted, st.DraftAccepted, 100*st.AcceptRate(), st.MeanAccepted())
}

// uniformDrafter draws its drafts uniformly from a few tokens and says so
// (a broad q, unlike the target's p: acceptance and the residual
// distribution both matter).
type uniformDrafter struct {
	ids []int32
	rng *rand.Rand
}

func (u *uniformDrafter) Name() string                                         { return "uniform" }
func (u *uniformDrafter) newSeq(*Scheduler, sample.Params) (seqDrafter, error) { return u, nil }
func (u *uniformDrafter) release()                                             {}
func (u *uniformDrafter) draft(_ []int32, k int, out []int32, dists []sample.Dist) (int, error) {
	for i := range k {
		out[i] = u.ids[u.rng.IntN(len(u.ids))]
		dists[i].IDs = append(dists[i].IDs[:0], u.ids...)
		dists[i].P = dists[i].P[:0]
		for range u.ids {
			dists[i].P = append(dists[i].P, 1/float32(len(u.ids)))
		}
	}
	return k, nil
}

// chiSquare compares counts with the probabilities p (bins expected below
// 5 pooled) and reports the statistic and the critical value at α=0.001.
func chiSquare(counts map[int32]int, p []float32, n int) (stat, crit float64, df int) {
	var poolObs, poolExp float64
	for id, pr := range p {
		exp := float64(pr) * float64(n)
		obs := float64(counts[int32(id)])
		if exp < 5 {
			poolObs += obs
			poolExp += exp
			continue
		}
		stat += (obs - exp) * (obs - exp) / exp
		df++
	}
	if poolExp > 0 {
		stat += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		df++
	}
	df--
	// Wilson–Hilferty: the 0.999 quantile of χ²(df).
	k := float64(df)
	z := 3.0902
	crit = k * math.Pow(1-2/(9*k)+z*math.Sqrt(2/(9*k)), 3)
	return stat, crit, df
}

// chainDist is the target's sampling distribution after history: the
// sampler chain's final probabilities on the model's logits.
func chainDist(t *testing.T, m *Model, p sample.Params, history []int32) []float32 {
	t.Helper()
	lg, err := m.Logits(history)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Net.NVocab
	sm, err := sample.New(p, V)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range history {
		sm.Accept(tok)
	}
	var d sample.Dist
	sm.Draft(lg[len(lg)-V:], &d)
	out := make([]float32, V)
	for i, id := range d.IDs {
		out[id] = d.P[i]
	}
	return out
}

// TestSpecStrictKeepsDistribution: sampling with strict acceptance over
// 20,000 seeded generations draws the target's distribution (χ² at
// α = 0.001) at the first verified position and at the position right
// after a rejection, with a drafter whose drafts are mostly rejected.
func TestSpecStrictKeepsDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 generations: skipped in -short")
	}
	m := schedModel(t, 1)
	p := sample.DefaultParams()
	p.TopK, p.TopP, p.MinP, p.Temperature = 0, 1, 0, 1.5
	p.RepeatPenalty = 1.3 // the distribution depends on the history
	prompt := m.Tok.Encode("Once upon a time, there was a little girl named Lily. She", true, false)
	// t1 is drawn plainly; the next step [t1, d, d'] verifies a draft at
	// the first verified position (t2); when d was rejected, the step
	// after verifies a draft right after a rejection (t3).
	first := chainDist(t, m, p, prompt)
	t1 := int32(slices.Index(first, slices.Max(first)))
	second := chainDist(t, m, p, append(slices.Clone(prompt), t1))
	top := make([]int32, m.Net.NVocab)
	for i := range top {
		top[i] = int32(i)
	}
	slices.SortFunc(top, func(a, b int32) int { return cmp.Compare(second[b], second[a]) })
	dr := &uniformDrafter{ids: top[:6], rng: rand.New(rand.NewPCG(1, 2))}
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 8, StepTokens: 256, Ctx: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	const N = 20000
	type gen struct {
		h    *Handle
		toks []int32
		kept []int // per verification step
	}
	c2 := map[int32]int{}              // t2 given t1
	c3 := map[[2]int32]map[int32]int{} // t3 given t1 and a correction t2
	n2, n3 := 0, map[[2]int32]int{}
	accepted := 0
	for base := 0; base < N; base += 64 {
		var gens []*gen
		for i := base; i < min(base+64, N); i++ {
			q := Query{Prompt: prompt, Sampling: p, MaxTokens: 4, IgnoreEOG: true, Spec: &SpecOptions{Draft: dr, K: 2, FixedK: true}}
			q.Sampling.Seed = uint64(i)
			g := &gen{}
			q.OnToken = func(id int32) { g.toks = append(g.toks, id) }
			q.OnSpec = func(_, kept int) { g.kept = append(g.kept, kept) }
			h, err := sc.AddQuery(q)
			if err != nil {
				t.Fatal(err)
			}
			g.h = h
			gens = append(gens, g)
		}
		drain(t, sc)
		for _, g := range gens {
			if _, err := g.h.Wait(); err != nil {
				t.Fatal(err)
			}
			if len(g.toks) != 4 || len(g.kept) == 0 {
				t.Fatalf("generated %d tokens in %d verification steps", len(g.toks), len(g.kept))
			}
			if g.toks[0] != t1 {
				continue
			}
			n2++
			c2[g.toks[1]]++
			if g.kept[0] > 0 {
				accepted++
				continue
			}
			k := [2]int32{g.toks[0], g.toks[1]}
			if c3[k] == nil {
				c3[k] = map[int32]int{}
			}
			c3[k][g.toks[2]]++
			n3[k]++
		}
	}
	t.Logf("first draft kept in %d of %d generations", accepted, n2)
	stat, crit, df := chiSquare(c2, second, n2)
	t.Logf("first verified position: %d draws, χ²=%.1f (df %d, critical %.1f)", n2, stat, df, crit)
	if stat > crit || n2 < 1000 {
		t.Errorf("first verified position: χ²=%.1f over %d draws exceeds %.1f (df %d)", stat, n2, crit, df)
	}
	// the most frequent (t1, rejected t2) pair
	var best [2]int32
	for k, n := range n3 {
		if n > n3[best] {
			best = k
		}
	}
	third := chainDist(t, m, p, append(slices.Clone(prompt), best[0], best[1]))
	stat, crit, df = chiSquare(c3[best], third, n3[best])
	t.Logf("after a rejection (t2 = %q): %d draws, χ²=%.1f (df %d, critical %.1f)", m.Tok.Token(best[1]), n3[best], stat, df, crit)
	if stat > crit || n3[best] < 1000 {
		t.Errorf("after a rejection: χ²=%.1f over %d draws exceeds %.1f (df %d)", stat, n3[best], crit, df)
	}
}

// TestSpecRefusesAndChecks: settings speculation cannot verify are
// refused with a message that says why, and a draft model of another
// vocabulary is refused token by token.
func TestSpecRefusesAndChecks(t *testing.T) {
	m := schedModel(t, 1)
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 1, Ctx: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	prompt := specPrompts(m)[1]
	p := sample.DefaultParams()
	p.Mirostat = 2
	if _, err := sc.AddQuery(Query{Prompt: prompt, Sampling: p, Spec: &SpecOptions{Draft: NGram{}}}); err == nil || !strings.Contains(err.Error(), "mirostat") {
		t.Errorf("mirostat: %v", err)
	}
	p = sample.DefaultParams()
	if _, err := sc.AddQuery(Query{Prompt: prompt, Sampling: p, Spec: &SpecOptions{Draft: NGram{}, Accept: sample.Acceptance{Rule: "loose"}}}); err == nil || !strings.Contains(err.Error(), "loose") {
		t.Errorf("bad rule: %v", err)
	}
	if _, err := sc.AddQuery(Query{Prompt: prompt, Sampling: p, Spec: &SpecOptions{Draft: NGram{}, K: 99}}); err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("K 99: %v", err)
	}
	other := loadTB(t, fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"), LoadOptions{Threads: 1})
	if _, err := NewDraftModel(m, other, "656K"); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("another vocabulary: %v", err)
	}
}

// TestSpecGrammar: with a grammar, greedy strict speculation gives the
// plain constrained text, and sampling keeps every token inside the
// grammar (drafts the grammar refuses are rejected).
func TestSpecGrammar(t *testing.T) {
	m := schedModel(t, 1)
	self := loadTB(t, fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"), LoadOptions{Threads: 1, Quant: quant.Options{Type: ggml.Q4_0}})
	sd, err := NewDraftModel(m, self, "Q4_0")
	if err != nil {
		t.Fatal(err)
	}
	const g = `root ::= ("the" | "a" | "dog" | "cat" | "ran" | "saw") (" " ("the" | "a" | "dog" | "cat" | "ran" | "saw"))* "."`
	prompt := specPrompts(m)[1]
	for _, dec := range []string{sample.DecodingGreedy, sample.DecodingSample} {
		p := sample.DefaultParams()
		p.Decoding, p.Grammar, p.Seed = dec, g, 3
		want, _ := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 40})
		for _, d := range []Drafter{NGram{}, sd} {
			got, st := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 40, Spec: &SpecOptions{Draft: d, K: 4, FixedK: true}})
			text := m.Tok.Decode(got)
			if dec == sample.DecodingGreedy && !slices.Equal(got, want) {
				t.Errorf("greedy, %s: %q, plain %q", d.Name(), text, m.Tok.Decode(want))
			}
			for _, w := range strings.FieldsFunc(strings.TrimSuffix(text, "."), func(r rune) bool { return r == ' ' }) {
				if !slices.Contains([]string{"the", "a", "dog", "cat", "ran", "saw"}, w) {
					t.Errorf("%s, %s: %q breaks the grammar at %q", dec, d.Name(), text, w)
					break
				}
			}
			t.Logf("%s, %s: %q (drafted %d, kept %d)", dec, d.Name(), text, st.Drafted, st.DraftAccepted)
		}
	}
}

// TestSpecCtl: the controller drafts long when drafts are cheap and kept,
// pauses (probing rarely) when they are costly and rejected, so that it
// stays within a few percent of plain decoding, and keeps drafting where
// it pays; simulated steps of 40 ms plus the given draft and row costs.
func TestSpecCtl(t *testing.T) {
	const ms = time.Millisecond
	const plainStep = 40 * ms
	// run simulates steps decode steps of a 20-token prompt with a draft
	// that catches up at catchPerTok a token (the first probe from
	// firstWindow tokens, later ones from at most maxCatchUp) and drafts
	// at draftPerTok; a verification pass costs rowCost per draft.
	var from *specCtl // a finished query's controller to resume, nil: a first query
	run := func(steps int, keep float64, draftPerTok, catchPerTok, rowCost time.Duration) (c *specCtl, plainSteps int, speedup float64) {
		ctl := newSpecCtl(2, 8, false)
		if from != nil {
			ctl = from.resumed()
		}
		c = &ctl
		rng := rand.New(rand.NewPCG(1, 2))
		var spent time.Duration
		tokens, dpos, started := 20, 0, false
		behind := func() int { return max(1, min(tokens+1-dpos, maxCatchUp)) }
		for range steps {
			n, w := c.want(behind()) // a draft not started yet is behind by the whole context
			if n == 0 {
				plainSteps++
				c.update(0, 0, 1, plainStep, 0, 0, 0)
				spent += plainStep
				tokens++
				continue
			}
			catchN := min(behind(), w)
			if !started {
				catchN, started = w, true
			}
			draft, all := time.Duration(n)*draftPerTok, time.Duration(n)*draftPerTok
			if catchN > 1 {
				draft = time.Duration(n-1) * draftPerTok
				all = draft + time.Duration(catchN)*catchPerTok
			}
			kept := 0
			for kept < n && rng.Float64() < keep {
				kept++
			}
			step := plainStep + time.Duration(n)*rowCost
			c.update(n, kept, kept+1, step, draft, all, catchN)
			spent += step + all
			tokens += kept + 1
			dpos = tokens
		}
		return c, plainSteps, float64(tokens-20) * plainStep.Seconds() / spent.Seconds()
	}
	// n-gram on a loop: free drafts, all kept: long drafts, no plain steps after the first two
	c, plain, sp := run(2000, 1, 0, 0, 2*ms)
	if c.k < 6 || plain != 2 || sp < 3 {
		t.Errorf("free, kept drafts: K %d, %d plain steps, %.2f×", c.k, plain, sp)
	}
	// every draft rejected, short and long generations: drafts at 60% of a
	// step with a fast catch-up, and a slow-prefill draft (Q2_K here: a
	// caught-up token costs 40% of a plain step): at least 0.97× of plain
	// from 128 tokens on (0.96× at 64); a draft as slow as the target (TinyStories-656K's
	// Q4_0 file for its F32) loses its first probe, ~6 plain steps, and
	// is at 0.97× from 256 tokens on.
	for _, steps := range []int{64, 128, 256, 512, 2000} {
		for _, cost := range [][2]time.Duration{{24 * ms, 6 * ms}, {12 * ms, 16 * ms}, {40 * ms, 40 * ms}} {
			_, plain, sp = run(steps, 0, cost[0], cost[1], 4*ms)
			floor := 0.97
			switch {
			case cost[0] == plainStep && steps < 256:
				floor = 0.9
			case steps < 128:
				floor = 0.96
			}
			if sp < floor {
				t.Errorf("%d steps, rejected drafts at %v, catch-up at %v a token: %d plain steps, %.3f× plain", steps, cost[0], cost[1], plain, sp)
			}
		}
	}
	// The next query with that drafter resumes the verdict: no unpaid
	// first probe, so even the draft as slow as the target stays at
	// ≥ 0.98× from 64 tokens on; and a drafter that paid drafts again
	// after the two timing steps.
	for _, cost := range [][2]time.Duration{{24 * ms, 6 * ms}, {12 * ms, 16 * ms}, {40 * ms, 40 * ms}} {
		first, _, _ := run(512, 0, cost[0], cost[1], 4*ms)
		if first.pause == 0 {
			t.Fatalf("rejected drafts at %v: the first query ended drafting", cost[0])
		}
		from = first
		for _, steps := range []int{64, 128, 256, 512, 2000} {
			if _, plain, sp := run(steps, 0, cost[0], cost[1], 4*ms); sp < 0.98 {
				t.Errorf("resumed, %d steps, rejected drafts at %v, catch-up at %v a token: %d plain steps, %.3f× plain", steps, cost[0], cost[1], plain, sp)
			}
		}
		from = nil
	}
	from, _, _ = run(2000, 0.8, 6*ms, 16*ms, 2*ms)
	if _, plain, sp := run(200, 0.8, 6*ms, 16*ms, 2*ms); plain > 8 || sp < 1.3 {
		t.Errorf("resumed good draft: %d plain steps of 200, %.2f×", plain, sp)
	}
	from = nil
	// half the drafts kept, drafts at 10%: drafting pays, K in the middle
	c, plain, sp = run(2000, 0.5, 4*ms, 4*ms, 2*ms)
	if c.k < 1 || c.k > 4 || plain > 500 || sp < 1.2 {
		t.Errorf("half kept: K %d, %d plain steps, %.2f×", c.k, plain, sp)
	}
	// a good draft with a slow catch-up still starts early: within 40 steps
	c, plain, sp = run(200, 0.8, 6*ms, 16*ms, 2*ms)
	if plain > 40 || sp < 1.3 {
		t.Errorf("good draft, slow catch-up: K %d, %d plain steps of 200, %.2f×", c.k, plain, sp)
	}
}

// TestSpecFlexibleAcceptance measures Inferflow's flexible accept against
// strict on TinyStories-656K (F32 target, the Q4_0 file as its draft),
// sampling at the default settings: acceptance rate, the perplexity of
// the generated text under the target, and distinct-2. The numbers go to
// docs/PERFORMANCE.md (go test -run TestSpecFlexibleAcceptance -v ./engine/).
func TestSpecFlexibleAcceptance(t *testing.T) {
	m := loadTB(t, fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"), LoadOptions{Threads: 2})
	d := loadTB(t, fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-Q4_0.gguf"), LoadOptions{Threads: 1})
	dm, err := NewDraftModel(m, d, "Q4_0")
	if err != nil {
		t.Fatal(err)
	}
	starts := []string{"Once upon a time", "One day", "Tom had a", "The little bird", "Sara and Ben", "There was a big", "Mom said", "The sun was"}
	rate := map[string]float64{}
	for _, dec := range []string{sample.DecodingSample, sample.DecodingGreedy} {
		for _, acc := range []sample.Acceptance{{Rule: sample.AcceptStrict}, {Rule: sample.AcceptTopK, TopK: 5}, {Rule: sample.AcceptTopK, TopK: 10}, {Rule: sample.AcceptTopP, TopP: 0.9}} {
			var drafted, kept, ntok int
			var nll float64
			bigrams, distinct := 0, map[[2]int32]bool{}
			for si, s := range starts {
				for seed := range 4 {
					p := sample.DefaultParams()
					p.Seed, p.Decoding = uint64(100*si+seed), dec
					prompt := m.Tok.Encode(s, true, false)
					gen, st := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 64, IgnoreEOG: true,
						Spec: &SpecOptions{Draft: dm, K: 4, FixedK: true, Accept: acc}})
					drafted, kept = drafted+st.Drafted, kept+st.DraftAccepted
					all := append(slices.Clone(prompt), gen...)
					lg, err := m.Logits(all)
					if err != nil {
						t.Fatal(err)
					}
					V := m.Net.NVocab
					for i := len(prompt); i < len(all); i++ {
						row := lg[(i-1)*V : i*V]
						mx := slices.Max(row)
						var z float64
						for _, l := range row {
							z += math.Exp(float64(l - mx))
						}
						nll += math.Log(z) - float64(row[all[i]]-mx)
						ntok++
					}
					for i := 1; i < len(gen); i++ {
						distinct[[2]int32{gen[i-1], gen[i]}] = true
						bigrams++
					}
				}
			}
			name := acc.Rule
			if acc.Rule == sample.AcceptTopK {
				name = fmt.Sprintf("top-k %d", acc.TopK)
			} else if acc.Rule == sample.AcceptTopP {
				name = fmt.Sprintf("top-p %.1f", acc.TopP)
			}
			name = dec + ", " + name
			rate[name] = float64(kept) / float64(drafted)
			t.Logf("%-17s acceptance %.1f%% (%d of %d), perplexity under the target %.2f, distinct-2 %.3f",
				name, 100*rate[name], kept, drafted, math.Exp(nll/float64(ntok)), float64(len(distinct))/float64(bigrams))
		}
	}
	// A larger pool keeps more (a sampled draft often lies outside a small
	// one: top-k 5 can keep less than strict, whose min(1, p/q) is near 1
	// when the draft's q resembles p).
	for _, dec := range []string{sample.DecodingSample, sample.DecodingGreedy} {
		if k5, k10 := rate[dec+", top-k 5"], rate[dec+", top-k 10"]; k10 < k5 {
			t.Errorf("%s: top-k 10 keeps %.1f%%, top-k 5 %.1f%%", dec, 100*k10, 100*k5)
		}
	}
	// Greedy: a pool holds the argmax, so flexible keeps at least what strict does.
	if k, st := rate["greedy, top-k 5"], rate["greedy, strict"]; k < st {
		t.Errorf("greedy: top-k 5 keeps %.1f%%, strict %.1f%%", 100*k, 100*st)
	}
}

// TestSpecDraftPoolFull: a draft model whose KV cache runs out restarts
// on a window of the last tokens and keeps drafting; the text is still
// the plain greedy text.
func TestSpecDraftPoolFull(t *testing.T) {
	m := schedModel(t, 1)
	d := loadTB(t, fixtures.Path(t, "models/stories260K/stories260K-Q8_0mix.gguf"), LoadOptions{Threads: 1})
	dm, err := NewDraftModel(m, d, "Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	p := sample.DefaultParams()
	p.Decoding = sample.DecodingGreedy
	prompt := specPrompts(m)[1]
	want, _ := specRun(t, m, Query{Prompt: prompt, Sampling: p, MaxTokens: 150, IgnoreEOG: true})

	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 1, Ctx: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	pool, err := d.Net.NewKVPool(model.PoolOptions{Blocks: 5, BlockTokens: sc.opt.BlockTokens, Ctx: 512}) // 80 positions
	if err != nil {
		t.Fatal(err)
	}
	sc.drafts = map[*Model]*draftPool{d: {m: d, pool: pool, batch: pool.NewBatch(64)}}
	var got []int32
	h, err := sc.AddQuery(Query{Prompt: prompt, Sampling: p, MaxTokens: 150, IgnoreEOG: true, Spec: &SpecOptions{Draft: dm, K: 4, FixedK: true},
		OnToken: func(id int32) { got = append(got, id) }})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, sc)
	st, err := h.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("with a full draft cache:\n %v\nplain\n %v", got, want)
	}
	if st.SpecSteps < 34 || st.DraftAccepted == 0 { // 36 here; 28 when a full cache only pauses drafting
		t.Errorf("drafting stopped: %d drafting steps, %d kept", st.SpecSteps, st.DraftAccepted)
	}
	t.Logf("%d drafting steps, drafted %d, kept %d", st.SpecSteps, st.Drafted, st.DraftAccepted)
}

// TestSpecPriorAcrossQueries: a finished query leaves its controller to
// the next query with the same drafter and settings. A paused verdict
// whose probe the credit cannot pay means no drafting at all in the next
// query (no unpaid first probe), where a fresh scheduler probes at once.
func TestSpecPriorAcrossQueries(t *testing.T) {
	m := schedModel(t, 1)
	p := sample.DefaultParams()
	p.Decoding = sample.DecodingGreedy
	prompt := specPrompts(m)[1]
	spec := SpecOptions{Draft: NGram{}, K: 4}
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 2, StepTokens: 256, Ctx: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	gen := func(sc *Scheduler) Stats {
		o := spec
		h, err := sc.AddQuery(Query{Prompt: prompt, Sampling: p, MaxTokens: 100, IgnoreEOG: true, Spec: &o})
		if err != nil {
			t.Fatal(err)
		}
		drain(t, sc)
		st, err := h.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if sc.specPrior(spec) != nil {
		t.Fatal("a prior before any query")
	}
	if st := gen(sc); st.SpecSteps == 0 {
		t.Fatal("the first query never drafted")
	}
	prior := sc.specPrior(spec)
	if prior == nil || prior.tVerify.n == 0 {
		t.Fatalf("no prior kept after a drafting query: %+v", prior)
	}
	if other := sc.specPrior(SpecOptions{Draft: NGram{}, K: 5}); other != nil {
		t.Error("a prior for another draft length")
	}
	// Make the verdict "pause" with drafting far too dear for any credit.
	prior.pause, prior.tDraft.v, prior.tVerify.v = minPause, 3600, 3600
	sc.statsMu.Lock()
	sc.priors[specKey(spec)] = *prior
	sc.statsMu.Unlock()
	if st := gen(sc); st.Drafted != 0 {
		t.Errorf("resumed a paused, unpayable verdict and still drafted %d tokens", st.Drafted)
	}
	fresh, err := NewScheduler(m, SchedOptions{MaxSeqs: 2, StepTokens: 256, Ctx: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if st := gen(fresh); st.Drafted == 0 {
		t.Error("a fresh scheduler did not probe")
	}
}
