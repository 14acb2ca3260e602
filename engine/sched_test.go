package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"flowchat/engine/fixtures"
	"flowchat/engine/sample"
)

// schedModel loads stories260K (a trained model: real text, real EOS).
func schedModel(t testing.TB, threads int) *Model {
	t.Helper()
	m, err := Load(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"), LoadOptions{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// trace is what one query produced: tokens and every step's logits.
type trace struct {
	toks   []int32
	logits [][]float32
	st     Stats
	err    error
}

// traced returns q with callbacks that record into tr.
func traced(q Query, tr *trace) Query {
	q.OnToken = func(id int32) { tr.toks = append(tr.toks, id) }
	q.OnLogits = func(l []float32) { tr.logits = append(tr.logits, append([]float32(nil), l...)) }
	return q
}

// randomQuery is a prompt of 1–60 real-ish tokens with seeded sampling.
func randomQuery(r *rand.Rand, m *Model) Query {
	n := 1 + r.IntN(60)
	p := make([]int32, n)
	p[0] = m.Tok.BOS()
	for i := 1; i < n; i++ {
		p[i] = int32(3 + r.IntN(m.Net.NVocab-3))
	}
	sp := sample.DefaultParams()
	sp.Seed = r.Uint64() % 1000
	if r.IntN(3) == 0 {
		sp.Decoding = "greedy"
	}
	if r.IntN(3) == 0 {
		sp.Mirostat, sp.RepeatPenalty, sp.DRYMultiplier = 2, 1.1, 0.8
	}
	return Query{Prompt: p, Sampling: sp, MaxTokens: 1 + r.IntN(24)}
}

// solo runs q alone on a fresh scheduler.
func solo(t testing.TB, m *Model, q Query) trace {
	t.Helper()
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 1, StepTokens: 512, Ctx: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var tr trace
	h, err := sc.AddQuery(traced(q, &tr))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, sc)
	tr.st, tr.err = h.Wait()
	return tr
}

func drain(t testing.TB, sc *Scheduler) {
	t.Helper()
	for i := 0; ; i++ {
		n, err := sc.Infer()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if i > 100000 {
			t.Fatal("scheduler does not drain")
		}
	}
}

func sameTrace(t testing.TB, what string, got, want trace) {
	t.Helper()
	if got.err != nil || want.err != nil {
		t.Fatalf("%s: errors %v / %v", what, got.err, want.err)
	}
	if fmt.Sprint(got.toks) != fmt.Sprint(want.toks) || got.st.StopReason != want.st.StopReason {
		t.Fatalf("%s: tokens %v (%s), alone %v (%s)", what, got.toks, got.st.StopReason, want.toks, want.st.StopReason)
	}
	if len(got.logits) != len(want.logits) {
		t.Fatalf("%s: %d logit steps, alone %d", what, len(got.logits), len(want.logits))
	}
	for i := range want.logits {
		for j := range want.logits[i] {
			if math.Float32bits(got.logits[i][j]) != math.Float32bits(want.logits[i][j]) {
				t.Fatalf("%s: step %d logit %d: %v, alone %v", what, i, j, got.logits[i][j], want.logits[i][j])
			}
		}
	}
}

// TestSchedulerArrivalAnyStep: queries arriving at random steps into a
// running batch (chunked prompts beside decode rows, 1 and 2 threads)
// produce the same tokens and bit-identical logits as alone, each with its
// own sampler state (seed, mirostat μ, DRY, penalties).
func TestSchedulerArrivalAnyStep(t *testing.T) {
	for _, threads := range []int{1, 2} {
		m := schedModel(t, threads)
		r := rand.New(rand.NewPCG(uint64(threads), 9))
		qs := make([]Query, 10)
		arrive := make([]int, len(qs))
		for i := range qs {
			qs[i], arrive[i] = randomQuery(r, m), r.IntN(12)
		}
		sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 6, StepTokens: 24, Ctx: 256})
		if err != nil {
			t.Fatal(err)
		}
		trs := make([]trace, len(qs))
		hs := make([]*Handle, len(qs))
		for step := 0; step < 12 || sc.Stats().Running+sc.Stats().Waiting > 0; step++ {
			for i := range qs {
				if arrive[i] == step {
					if hs[i], err = sc.AddQuery(traced(qs[i], &trs[i])); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := sc.Infer(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range qs {
			trs[i].st, trs[i].err = hs[i].Wait()
			sameTrace(t, fmt.Sprintf("threads %d query %d", threads, i), trs[i], solo(t, m, qs[i]))
		}
		if n := sc.Pool().InUse(); n != 0 {
			t.Fatalf("%d blocks in use after every query ended", n)
		}
		sc.Close()
	}
}

// TestSchedulerCancel: a query cancelled during its prompt or during its
// decode ends at the next step as "cancelled" with its blocks freed, and
// the query beside it is unaffected.
func TestSchedulerCancel(t *testing.T) {
	m := schedModel(t, 2)
	r := rand.New(rand.NewPCG(3, 4))
	other := randomQuery(r, m)
	other.MaxTokens = 30
	want := solo(t, m, other)
	for _, during := range []string{"prefill", "decode"} {
		sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 4, StepTokens: 8, Ctx: 256})
		if err != nil {
			t.Fatal(err)
		}
		long := Query{Prompt: make([]int32, 100), Sampling: sample.DefaultParams(), MaxTokens: 1000, IgnoreEOG: true}
		for i := range long.Prompt {
			long.Prompt[i] = int32(5 + i)
		}
		var tr, otr trace
		h, _ := sc.AddQuery(traced(long, &tr))
		oh, _ := sc.AddQuery(traced(other, &otr))
		steps := 3 // within the 100-token prompt at 8 rows a step
		if during == "decode" {
			steps = 30
		}
		for range steps {
			sc.Infer()
		}
		if during == "decode" && len(tr.toks) == 0 {
			t.Fatal("long query not decoding yet")
		}
		before := sc.Pool().InUse()
		h.Cancel()
		sc.Infer()
		st, err := h.Wait()
		if err != nil || st.StopReason != "cancelled" {
			t.Fatalf("%s: cancelled query ended %q, %v", during, st.StopReason, err)
		}
		if after := sc.Pool().InUse(); after >= before {
			t.Fatalf("%s: cancel freed nothing (%d blocks before, %d after)", during, before, after)
		}
		drain(t, sc)
		otr.st, otr.err = oh.Wait()
		sameTrace(t, "query beside the cancelled one", otr, want)
		sc.Close()
	}
}

// TestSchedulerBudgetWaits: with KV blocks for one long query, a second
// one waits (and is told), then runs when the first finishes; both equal
// their solo runs.
func TestSchedulerBudgetWaits(t *testing.T) {
	m := schedModel(t, 2)
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randomQuery(r, m), randomQuery(r, m)
	a.Prompt, a.MaxTokens, a.IgnoreEOG = append(a.Prompt, make([]int32, 120-len(a.Prompt))...), 40, true
	b.MaxTokens, b.IgnoreEOG = 10, true
	budget := blockBytes(m, 16) * 12 // 192 positions: a needs 160
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 4, StepTokens: 64, Ctx: 192, KVBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	b.Prompt = append(b.Prompt, make([]int32, 60)...)
	var ta, tb trace
	var waits []string
	ha, _ := sc.AddQuery(traced(a, &ta))
	qb := traced(b, &tb)
	qb.OnWait = func(why string) { waits = append(waits, why) }
	hb, _ := sc.AddQuery(qb)
	drain(t, sc)
	ta.st, ta.err = ha.Wait()
	tb.st, tb.err = hb.Wait()
	if len(waits) == 0 && sc.Stats().Preemptions == 0 {
		t.Fatal("the second query neither waited nor preempted")
	}
	sameTrace(t, "first", ta, solo(t, m, a))
	sameTrace(t, "second", tb, solo(t, m, b))
	if n := sc.Pool().InUse(); n != 0 {
		t.Fatalf("%d blocks leaked", n)
	}
}

// TestSchedulerPreemption: more decoding sequences than blocks: queries
// are preempted and recomputed, and every text is still the solo text.
func TestSchedulerPreemption(t *testing.T) {
	m := schedModel(t, 2)
	r := rand.New(rand.NewPCG(7, 8))
	qs := make([]Query, 5)
	for i := range qs {
		qs[i] = randomQuery(r, m)
		qs[i].Prompt = qs[i].Prompt[:min(len(qs[i].Prompt), 20)]
		qs[i].MaxTokens, qs[i].IgnoreEOG = 60, true
	}
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 5, StepTokens: 64, Ctx: 96, KVBudget: blockBytes(m, 16) * 14})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	trs := make([]trace, len(qs))
	hs := make([]*Handle, len(qs))
	for i := range qs {
		hs[i], _ = sc.AddQuery(traced(qs[i], &trs[i]))
	}
	drain(t, sc)
	if sc.Stats().Preemptions == 0 {
		t.Fatal("no preemption with 5 × 80 positions in 224")
	}
	for i := range qs {
		trs[i].st, trs[i].err = hs[i].Wait()
		sameTrace(t, fmt.Sprintf("query %d", i), trs[i], solo(t, m, qs[i]))
	}
}

// TestSchedulerContextShift: a query longer than its context keeps going
// with ContextShift, ends at its token limit, and frees everything; without
// it, it stops at "context".
func TestSchedulerContextShift(t *testing.T) {
	m := schedModel(t, 2)
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 2, Ctx: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	p := sample.DefaultParams()
	p.Seed = 3
	q := Query{Prompt: []int32{m.Tok.BOS(), 400, 401}, Sampling: p, MaxTokens: 200, IgnoreEOG: true, ContextShift: true}
	var shifts []int
	q.OnShift = func(n int) { shifts = append(shifts, n) }
	h, _ := sc.AddQuery(q)
	q.ContextShift = false
	h2, _ := sc.AddQuery(q)
	drain(t, sc)
	st, err := h.Wait()
	if err != nil || st.StopReason != "length" || st.GenTokens != 200 || len(shifts) < 3 || st.Shifted == 0 {
		t.Fatalf("shifting query: %+v, shifts %v, %v", st, shifts, err)
	}
	st2, _ := h2.Wait()
	if st2.StopReason != "context" || st2.GenTokens != 64-3+1 { // the last token drawn is not evaluated
		t.Fatalf("query without shift: %+v", st2)
	}
	if n := sc.Pool().InUse(); n != 0 {
		t.Fatalf("%d blocks leaked", n)
	}
}

// TestSchedulerSoak: random queries and random cancels from several
// goroutines against the running loop, bounded in time. At the end no
// block is in use and every query that finished equals its solo run.
func TestSchedulerSoak(t *testing.T) {
	m := schedModel(t, 2)
	sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 6, StepTokens: 32, Ctx: 128, KVBudget: blockBytes(m, 16) * 30})
	if err != nil {
		t.Fatal(err)
	}
	sc.Start()
	defer sc.Close()
	type job struct {
		q  Query
		tr *trace
		h  *Handle
	}
	r := rand.New(rand.NewPCG(11, 12))
	deadline := time.Now().Add(3 * time.Second)
	var jobs []job
	for i := 0; i < 60 && time.Now().Before(deadline); i++ {
		j := job{q: randomQuery(r, m), tr: &trace{}}
		if j.h, err = sc.AddQuery(traced(j.q, j.tr)); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
		if r.IntN(4) == 0 {
			jobs[r.IntN(len(jobs))].h.Cancel()
		}
		time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
	}
	checked := 0
	for _, j := range jobs {
		st, err := j.h.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if st.StopReason == "cancelled" {
			continue
		}
		j.tr.st = st
		sameTrace(t, "soak query", *j.tr, solo(t, m, j.q))
		checked++
	}
	if checked == 0 {
		t.Fatal("every query was cancelled")
	}
	if _, err := sc.Infer(); err != nil {
		t.Fatal(err)
	}
	if n := sc.Pool().InUse(); n != 0 {
		t.Fatalf("%d blocks leaked after %d queries", n, len(jobs))
	}
}

// TestSessionsStreamAtOnce: two sessions of one model generate at the
// same time through the shared scheduler, each equal to its run alone.
func TestSessionsStreamAtOnce(t *testing.T) {
	m := schedModel(t, 2)
	p := sample.DefaultParams()
	p.Seed = 42
	prompts := [][]int32{{m.Tok.BOS(), 300, 301, 302}, {m.Tok.BOS(), 500, 20}}
	gen := func(s *Session, prompt []int32, started chan<- struct{}) []int32 {
		var out []int32
		_, err := s.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: 40, Sampling: p, IgnoreEOG: true,
			OnToken: func(id int32) {
				if len(out) == 0 && started != nil {
					close(started)
				}
				out = append(out, id)
			}})
		if err != nil {
			t.Error(err)
		}
		return out
	}
	want := [][]int32{gen(m.NewSession(0), prompts[0], nil), gen(m.NewSession(0), prompts[1], nil)}
	got := make([][]int32, 2)
	started := make(chan struct{})
	done := make(chan struct{})
	go func() { got[0] = gen(m.NewSession(0), prompts[0], started); close(done) }()
	<-started
	got[1] = gen(m.NewSession(0), prompts[1], nil)
	<-done
	for i := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("session %d: %v, alone %v", i, got[i], want[i])
		}
	}
	if st := m.sched.Stats(); st.Steps == 0 {
		t.Fatal("scheduler ran no step")
	}
}

// FuzzScheduler drives a small scheduler with random operations (add a
// query, cancel one, step) and checks that nothing panics, that every
// query ends once the scheduler drains, and that no block leaks.
func FuzzScheduler(f *testing.F) {
	f.Add([]byte{0, 0, 2, 2, 1, 2, 2, 2})
	f.Add([]byte{0, 5, 0, 9, 0, 200, 2, 1, 1, 2, 0, 7, 2, 2, 2})
	m := schedModel(f, 1)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		sc, err := NewScheduler(m, SchedOptions{MaxSeqs: 3, StepTokens: 16, Ctx: 64, KVBudget: blockBytes(m, 16) * 6})
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		var hs []*Handle
		for i := 0; i < len(ops); i++ {
			switch ops[i] % 3 {
			case 0: // add: the next byte sizes the prompt and the limit
				n := 1
				if i+1 < len(ops) {
					i++
					n = int(ops[i])
				}
				p := make([]int32, 1+n%70)
				for j := range p {
					p[j] = int32(1 + (j*31+n)%(m.Net.NVocab-1))
				}
				sp := sample.DefaultParams()
				sp.Seed = uint64(n)
				q := Query{Prompt: p, Sampling: sp, MaxTokens: n % 40, IgnoreEOG: n%2 == 0, ContextShift: n%3 == 0}
				if q.MaxTokens == 0 && q.ContextShift { // else it never ends
					q.MaxTokens = 150
				}
				h, err := sc.AddQuery(q)
				if err == nil {
					hs = append(hs, h)
				} else if len(p) < 64 {
					t.Fatalf("prompt of %d tokens refused: %v", len(p), err)
				}
			case 1:
				if len(hs) > 0 {
					hs[int(ops[i])%len(hs)].Cancel()
				}
			case 2:
				if _, err := sc.Infer(); err != nil {
					t.Fatal(err)
				}
			}
		}
		drain(t, sc)
		for _, h := range hs {
			select {
			case <-h.Done():
			default:
				t.Fatal("a query did not end after the scheduler drained")
			}
		}
		if n := sc.Pool().InUse(); n != 0 {
			t.Fatalf("%d blocks leaked", n)
		}
	})
}

// TestKVBudgetBoundsContext: a --kv-budget smaller than the default
// context gives a scheduler whose context fits it (not a silent fall back
// to one sequence at a time), and sessions are capped to it.
func TestKVBudgetBoundsContext(t *testing.T) {
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	probe, err := Load(path, LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	per := probe.KVBytesPerToken()
	probe.Close()
	m, err := Load(path, LoadOptions{Threads: 1, Sched: SchedOptions{KVBudget: 200 * per}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sc, err := m.Scheduler()
	if err != nil {
		t.Fatal(err)
	}
	if c := sc.Options().Ctx; c != 192 {
		t.Fatalf("scheduler context %d, want 192 (200 tokens of budget in blocks of 16)", c)
	}
	if s := m.NewSession(4096); s.Ctx() != 192 {
		t.Fatalf("session context %d", s.Ctx())
	}
}
