package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

func loadSplitFixture(t testing.TB, file string, threads int) *Model {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, file))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := FromGGUF(f, nil, Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// splitRun is one generation: a prompt of prompt tokens in batches of 16,
// then steps decode steps; it keeps every decode step's logits.
type splitRun struct {
	kv                 ggml.Type
	minKeys, chunkKeys int
	prompt, steps      int
	beforeStep         func(s *State, step int) // may change φ
	logits             [][]float32
	stats              AttnSplitStats
	s                  *State
}

func (r *splitRun) run(t *testing.T, m *Model) *splitRun {
	t.Helper()
	s := m.NewState(r.prompt+r.steps, 16)
	if err := s.SetKVType(r.kv); err != nil {
		t.Fatal(err)
	}
	s.SetAttnSplit(r.minKeys, r.chunkKeys)
	tok := func(i int) int32 { return int32((i*7919 + 3) % m.NVocab) }
	ids := make([]int32, r.prompt)
	for i := range ids {
		ids[i] = tok(i)
	}
	if _, err := s.Forward(ids, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < r.steps; i++ {
		if r.beforeStep != nil {
			r.beforeStep(s, i)
		}
		l, err := s.Forward([]int32{tok(r.prompt + i)}, false)
		if err != nil {
			t.Fatal(err)
		}
		r.logits = append(r.logits, append([]float32(nil), l...))
	}
	r.stats, r.s = s.AttnSplitStats(), s
	return r
}

// compare fails when a decode step's logits differ from want's by more
// than tol (relative RMS) and returns the largest difference.
func (r *splitRun) compare(t *testing.T, name string, want *splitRun, tol float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range want.logits {
		e := fixtures.RelRMS(r.logits[i], want.logits[i])
		worst = max(worst, e)
		if e > tol {
			t.Errorf("%s: decode step %d: logits differ from the unsplit path's by %.2e", name, i, e)
		}
	}
	return worst
}

// TestSplitAttentionMatchesUnsplit: decode steps whose attention runs over
// chunks against the unified max give the logits and attention outputs of
// the one-task-per-head path, for float32, F16 and Q8_0 caches, grouped-query heads, 1 and 2
// threads, chunks that are and are not multiples of 8, and contexts that
// cross the threshold during the run.
func TestSplitAttentionMatchesUnsplit(t *testing.T) {
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "arch/rand-llama-gqa-F32.gguf"} {
		for _, threads := range []int{1, 2} {
			m := loadSplitFixture(t, file, threads)
			for _, kv := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0} {
				want := (&splitRun{kv: kv, prompt: 40, steps: 12}).run(t, m)
				if want.stats.Heads != 0 {
					t.Fatalf("split path taken while off: %+v", want.stats)
				}
				for _, ck := range [][2]int{{1, 16}, {1, 13}, {45, 8}, {1, 1000}} {
					name := fmt.Sprintf("%s %d threads %v cache, split from %d keys in chunks of %d", file, threads, kv, ck[0], ck[1])
					got := (&splitRun{kv: kv, prompt: 40, steps: 12, minKeys: ck[0], chunkKeys: ck[1]}).run(t, m)
					// A quantized cache stores the new token's keys and values
					// of layer l+1 rounded from layer l's attention output: a
					// rounding-level change there can flip an F16 or Q8_0
					// rounding (2^−11 or more), so the logits get more room and
					// the attention outputs themselves are checked too.
					tol := 1e-5
					if kv != ggml.F32 {
						tol = 1e-4
					}
					worst := got.compare(t, name, want, tol)
					if e := splitAttnDiff(got.s, 1); e > 2e-6 {
						t.Errorf("%s: attention outputs differ by %.2e", name, e)
					}
					st := got.stats
					steps := int64(12)
					if ck[0] == 45 {
						steps = 12 - 4 // positions 40..43 see fewer than 45 keys
					}
					if heads := steps * int64(m.NLayer*m.NHead); st.Heads != heads || st.Cold != int64(m.NLayer*m.NHead) || st.Fallbacks != 0 {
						t.Errorf("%s: %+v, want %d heads, %d cold, no fallbacks", name, st, heads, m.NLayer*m.NHead)
					}
					t.Logf("%s: worst rel RMS %.2e", name, worst)
				}
			}
		}
	}
}

// TestSplitAttentionFallback: a φ far below or far above the scores makes
// every head recompute with its exact maximum; the logits stay those of the
// unsplit path and the fallbacks are counted.
func TestSplitAttentionFallback(t *testing.T) {
	m := loadSplitFixture(t, "models/stories260K/stories260K-F32.gguf", 2)
	want := (&splitRun{kv: ggml.F32, prompt: 30, steps: 6}).run(t, m)
	heads := int64(m.NLayer * m.NHead)
	for _, phi := range []float32{-1e4, -200, 300, 1e4} {
		force := func(s *State, step int) {
			if step%2 == 1 {
				for i := range s.sp.phi {
					s.sp.phi[i] = phi
				}
			}
		}
		got := (&splitRun{kv: ggml.F32, prompt: 30, steps: 6, minKeys: 1, chunkKeys: 8, beforeStep: force}).run(t, m)
		got.compare(t, fmt.Sprintf("φ = %v", phi), want, 1e-5)
		if st := got.stats; st.Fallbacks != 3*heads || st.Cold != heads || st.Heads != 6*heads {
			t.Errorf("φ = %v on odd steps: %+v, want %d fallbacks", phi, st, 3*heads)
		}
	}
}

// TestSplitAttentionVariants: soft-capped and sliding-window attention
// (gemma), ALiBi (bloom) and grouped-query heads (llama-gqa) on the split
// path: every layer's attention output matches the unsplit path's to float
// rounding, for queries at several scales (scores up to the hundreds), and
// so do the logits (to 1e-4: these random networks amplify rounding at
// some positions).
func TestSplitAttentionVariants(t *testing.T) {
	for _, c := range []struct {
		file string
		set  func(m *Model)
	}{
		{"arch/rand-gemma-F32.gguf", func(m *Model) { m.AttnSoftcap = 2 }},
		{"arch/rand-gemma-F32.gguf", func(m *Model) { m.SlidingWindow, m.SlidingPattern = 9, 2 }},
		{"arch/rand-bloom-F32.gguf", func(m *Model) {}},
		{"arch/rand-llama-gqa-F32.gguf", func(m *Model) {}},
	} {
		m := loadSplitFixture(t, c.file, 2)
		c.set(m)
		for _, kv := range []ggml.Type{ggml.F32, ggml.F16} {
			name := fmt.Sprintf("%s (softcap %v, window %d) %v cache", c.file, m.AttnSoftcap, m.SlidingWindow, kv)
			want := (&splitRun{kv: kv, prompt: 20, steps: 8}).run(t, m)
			got := (&splitRun{kv: kv, prompt: 20, steps: 8, minKeys: 1, chunkKeys: 6}).run(t, m)
			got.compare(t, name, want, 1e-4)
			if got.stats.Heads == 0 || got.stats.Fallbacks != 0 {
				t.Errorf("%s: %+v", name, got.stats)
			}
			for _, scale := range []float32{1, 30} {
				if e := splitAttnDiff(got.s, scale); e > 1e-6 {
					t.Errorf("%s: attention outputs with queries ×%v differ by %.2e", name, scale, e)
				}
			}
		}
	}
}

// splitAttnDiff runs every layer's attention for a random query at the
// last cached position through both paths and returns the largest relative
// RMS difference of a head's output.
func splitAttnDiff(s *State, scale float32) float64 {
	m := s.m
	r := rand.New(rand.NewPCG(uint64(m.NHead), 7))
	q := make([]float32, m.NHead*m.HeadDim)
	want, got := make([]float32, m.NHead*m.HeadDimV), make([]float32, m.NHead*m.HeadDimV)
	s.pos--
	defer func() { s.pos++ }()
	worst := 0.0
	for l := range m.NLayer {
		for i := range q {
			q[i] = scale * float32(r.NormFloat64())
		}
		s.attn = attnTask{s: s, l: l, T: 1, q: q, out: want}
		m.pool.Run(&s.attn, m.NHead)
		if !s.splitAttend(l, q, got) {
			panic("split path not taken")
		}
		for h := range m.NHead {
			o := h * m.HeadDimV
			worst = max(worst, fixtures.RelRMS(got[o:o+m.HeadDimV], want[o:o+m.HeadDimV]))
		}
	}
	return worst
}

// TestSplitAttentionDefaults: with NewState's settings short contexts keep
// the one-task-per-head path bit for bit, and the first decode step that
// sees 512 keys splits.
func TestSplitAttentionDefaults(t *testing.T) {
	m := loadSplitFixture(t, "models/stories260K/stories260K-F32.gguf", 1)
	short := (&splitRun{kv: ggml.F32, prompt: 500, steps: 11, minKeys: splitMinKeys, chunkKeys: splitChunkKeys}).run(t, m)
	off := (&splitRun{kv: ggml.F32, prompt: 500, steps: 11}).run(t, m)
	for i := range 11 {
		e := fixtures.RelRMS(short.logits[i], off.logits[i])
		if e != 0 {
			t.Errorf("step %d (%d keys): logits moved by %.2e below the threshold", i, 501+i, e)
		}
	}
	if short.stats.Heads != 0 {
		t.Errorf("split below %d keys: %+v", splitMinKeys, short.stats)
	}
	long := (&splitRun{kv: ggml.F32, prompt: 500, steps: 20, minKeys: splitMinKeys, chunkKeys: splitChunkKeys}).run(t, m)
	offLong := (&splitRun{kv: ggml.F32, prompt: 500, steps: 20}).run(t, m)
	long.compare(t, "defaults", offLong, 1e-5)
	if want := int64(9 * m.NLayer * m.NHead); long.stats.Heads != want {
		t.Errorf("%+v, want %d heads split (steps with 512..520 keys)", long.stats, want)
	}
	if s := m.NewState(64, 1); s.sp.maxChunks != 0 || len(s.sp.part) != 0 {
		t.Errorf("a 64-token state holds split buffers (%d chunks)", s.sp.maxChunks)
	}
	// Chosen by the network, the same at 1 and 2 threads: on with few heads
	// (bloom's) or grouped-query heads (stories260K), off over 16 or more
	// heads with as many KV heads.
	for _, c := range []struct {
		file    string
		threads int
		on      bool
	}{{"arch/rand-bloom-F32.gguf", 1, true}, {"arch/rand-bloom-F32.gguf", 2, true}, {"models/stories260K/stories260K-F32.gguf", 1, true}} {
		s := loadSplitFixture(t, c.file, c.threads).NewState(1024, 1)
		if on := s.sp.maxChunks == 1024/splitChunkKeys && s.sp.minKeys == splitMinKeys; on != c.on {
			t.Errorf("%s, %d threads: split from %d keys (%d chunks), want on = %v", c.file, c.threads, s.sp.minKeys, s.sp.maxChunks, c.on)
		}
	}
	for _, c := range []struct {
		heads, kv, want int
	}{{32, 32, 0}, {16, 16, 0}, {12, 12, splitMinKeys}, {32, 8, splitMinKeys}, {32, 4, splitMinKeys}} {
		if got := (&Model{Config: Config{NHead: c.heads, NHeadKV: c.kv}}).defaultSplitKeys(); got != c.want {
			t.Errorf("%d heads over %d KV heads: split from %d keys, want %d", c.heads, c.kv, got, c.want)
		}
	}
}

// TestSplitDecodeAllocatesNothing: decode steps on the split path,
// recomputed heads included, allocate nothing.
func TestSplitDecodeAllocatesNothing(t *testing.T) {
	for _, threads := range []int{1, 2} {
		m := loadSplitFixture(t, "models/stories260K/stories260K-F32.gguf", threads)
		for _, kv := range []ggml.Type{ggml.F32, ggml.Q8_0} {
			s := m.NewState(256, 16)
			if err := s.SetKVType(kv); err != nil {
				t.Fatal(err)
			}
			s.SetAttnSplit(1, 16)
			if _, err := s.Forward([]int32{1, 80, 147, 201, 282, 57, 12, 9, 30, 41}, false); err != nil {
				t.Fatal(err)
			}
			n := 0
			allocs := testing.AllocsPerRun(50, func() {
				if n++; n%5 == 0 {
					s.sp.phi[0] -= 1000 // a fallback now and then
				}
				if _, err := s.Forward([]int32{5}, false); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 || s.sp.stats.Fallbacks == 0 {
				t.Errorf("%d threads, %v cache: %v allocations per split decode step (%+v)", threads, kv, allocs, s.sp.stats)
			}
		}
	}
}
