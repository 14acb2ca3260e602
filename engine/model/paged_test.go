package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/ggml"
)

// batchFixtures are the decoder-only fixtures every batch test runs on.
var batchFixtures = []string{
	"models/stories260K/stories260K-F32.gguf",
	"models/stories260K/stories260K-F16.gguf",
	"models/tinystories-656K/TinyStories-656K-Q4_0.gguf",
	"arch/rand-llama-gqa-F32.gguf",
	"arch/rand-llama-gqa-Q8_0.gguf",
	"arch/rand-llama-gqa-Q4_K.gguf",
	"arch/rand-bloom-F32.gguf",
	"arch/rand-gemma-F32.gguf",
	"arch/rand-gpt2-F32.gguf",
	"arch/rand-phi3-F32.gguf",
	"arch/rand-qwen2-F32.gguf",
	"arch/rand-falcon-F32.gguf",
	"arch/rand-stablelm-F32.gguf",
}

// seqPlan is one sequence of a batch test: a prompt, greedy decode steps,
// and the step at which it arrives.
type seqPlan struct {
	prompt []int32
	steps  int
	arrive int
}

// soloRun evaluates a plan alone on a State of its own (the prompt in one
// Forward) and returns the logits of the prompt's last token and of every
// decode step, decoding greedily.
func soloRun(t *testing.T, m *Model, p seqPlan, kv ggml.Type, split int) [][]float32 {
	s := m.NewState(len(p.prompt)+p.steps+1, 256)
	if kv != ggml.F32 {
		if err := s.SetKVType(kv); err != nil {
			t.Fatal(err)
		}
	}
	if split > 0 {
		s.SetAttnSplit(split, 3)
	}
	lg, err := s.Forward(p.prompt, false)
	if err != nil {
		t.Fatal(err)
	}
	out := [][]float32{append([]float32(nil), lg...)}
	for range p.steps {
		if lg, err = s.Forward([]int32{argmax(lg)}, false); err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]float32(nil), lg...))
	}
	return out
}

func randomPlans(r *rand.Rand, n, vocab int) []seqPlan {
	plans := make([]seqPlan, n)
	for i := range plans {
		p := make([]int32, 1+r.IntN(40))
		for j := range p {
			p[j] = int32(r.IntN(vocab))
		}
		plans[i] = seqPlan{prompt: p, steps: 1 + r.IntN(12), arrive: r.IntN(8)}
	}
	return plans
}

// batchRun runs plans through one pool and Batch: arrivals at their step,
// prompts in chunks of random size under a per-step row budget, decode
// rows beside them. It returns each plan's logits as soloRun does.
type batchRun struct {
	budget, blockTokens, split int
	kv                         ggml.Type
}

type liveSeq struct {
	plan   int
	s      *State
	fed    int // prompt tokens evaluated
	next   int32
	logits [][]float32
}

func (br batchRun) run(t *testing.T, m *Model, plans []seqPlan, r *rand.Rand) [][][]float32 {
	ctx := 0
	for _, p := range plans {
		ctx = max(ctx, len(p.prompt)+p.steps+1)
	}
	pool, err := m.NewKVPool(PoolOptions{Blocks: 4 * len(plans) * (ctx/br.blockTokens + 2), BlockTokens: br.blockTokens, Ctx: ctx, KVType: br.kv})
	if err != nil {
		t.Fatal(err)
	}
	b := pool.NewBatch(br.budget)
	out := make([][][]float32, len(plans))
	var live []*liveSeq
	var segs []Segment
	var owners []*liveSeq
	for step, done := 0, 0; done < len(plans); step++ {
		for i, p := range plans {
			if p.arrive == step {
				s := pool.NewSeq()
				if br.split > 0 {
					s.SetAttnSplit(br.split, 3)
				}
				live = append(live, &liveSeq{plan: i, s: s})
			}
		}
		segs, owners = segs[:0], owners[:0]
		rows := 0
		for _, q := range live { // decode rows first
			if q.fed == len(plans[q.plan].prompt) && rows < br.budget {
				segs = append(segs, Segment{Seq: q.s, Tokens: []int32{q.next}, Logits: LogitsLast})
				owners = append(owners, q)
				rows++
			}
		}
		for _, q := range live { // then prompt chunks of random size
			pr := plans[q.plan].prompt
			if q.fed == len(pr) || rows == br.budget {
				continue
			}
			n := min(1+r.IntN(9), len(pr)-q.fed, br.budget-rows)
			want := LogitsNone
			if q.fed+n == len(pr) {
				want = LogitsLast
			}
			segs = append(segs, Segment{Seq: q.s, Tokens: pr[q.fed : q.fed+n], Logits: want, Prompt: true})
			owners = append(owners, q)
			rows += n
		}
		r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i]; owners[i], owners[j] = owners[j], owners[i] })
		for _, g := range segs {
			if err := g.Seq.Reserve(len(g.Tokens)); err != nil {
				t.Fatal(err)
			}
		}
		lg, err := b.Forward(segs)
		if err != nil {
			t.Fatal(err)
		}
		row := 0
		for i, g := range segs {
			q := owners[i]
			if g.Prompt {
				q.fed += len(g.Tokens)
			}
			if g.Logits == LogitsNone {
				continue
			}
			l := append([]float32(nil), lg[row*m.NVocab:(row+1)*m.NVocab]...)
			row++
			q.logits = append(q.logits, l)
			q.next = argmax(l)
		}
		kept := live[:0]
		for _, q := range live {
			if len(q.logits) == plans[q.plan].steps+1 {
				out[q.plan] = q.logits
				q.s.Release()
				done++
				continue
			}
			kept = append(kept, q)
		}
		live = kept
	}
	if pool.InUse() != 0 {
		t.Fatalf("%d blocks still in use after every sequence was released", pool.InUse())
	}
	return out
}

func sameLogits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d logit rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("%s: step %d logit %d: batched %v, alone %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestBatchInvariance: every sequence's logits are bit-identical whether
// it runs alone or in a batch of others, arriving at random steps, with
// its prompt cut into random chunks, its cache in scattered blocks, at 1
// and 2 threads, on every decoder fixture, for float and Q8_0 caches and
// with decode attention split over chunks.
func TestBatchInvariance(t *testing.T) {
	for fi, file := range batchFixtures {
		for _, threads := range []int{1, 2} {
			m := loadSplitFixture(t, file, threads)
			for ci, br := range []batchRun{
				{budget: 24, blockTokens: 4, kv: ggml.F32},
				{budget: 7, blockTokens: 16, kv: ggml.F32, split: 6},
				{budget: 16, blockTokens: 8, kv: ggml.Q8_0},
			} {
				if br.kv == ggml.Q8_0 && m.kvDim()%32 != 0 {
					continue
				}
				t.Run(fmt.Sprintf("%s/t%d/%d", file, threads, ci), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(fi), uint64(threads*10+ci)))
					plans := randomPlans(r, 6, m.NVocab)
					got := br.run(t, m, plans, r)
					for i, p := range plans {
						sameLogits(t, fmt.Sprintf("sequence %d", i), got[i], soloRun(t, m, p, br.kv, br.split))
					}
				})
			}
		}
	}
}

// poolFixture loads stories260K with a pool of blocks of 8 positions.
func poolFixture(t *testing.T, blocks int) (*Model, *KVPool, *Batch) {
	m := loadSplitFixture(t, "models/stories260K/stories260K-F32.gguf", 2)
	p, err := m.NewKVPool(PoolOptions{Blocks: blocks, BlockTokens: 8, Ctx: 128})
	if err != nil {
		t.Fatal(err)
	}
	return m, p, p.NewBatch(64)
}

// feed evaluates tokens on s alone and returns the last logits (a copy).
func feed(t *testing.T, b *Batch, s *State, tokens []int32) []float32 {
	t.Helper()
	if err := s.Reserve(len(tokens)); err != nil {
		t.Fatal(err)
	}
	lg, err := b.Forward([]Segment{{Seq: s, Tokens: tokens, Logits: LogitsLast, Prompt: len(tokens) > 1}})
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), lg...)
}

func tokensOf(n int, seed uint64, vocab int) []int32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.IntN(vocab))
	}
	return out
}

// TestPrefixCacheSharing: a second sequence whose prompt starts with a
// released sequence's tokens adopts their whole blocks, evaluates only the
// rest, and gets the logits of a full evaluation.
func TestPrefixCacheSharing(t *testing.T) {
	m, p, b := poolFixture(t, 64)
	first := tokensOf(37, 1, m.NVocab)
	a := p.NewSeq()
	feed(t, b, a, first)
	a.Register(first)
	a.Release()
	if p.InUse() != 0 {
		t.Fatalf("released sequence left %d blocks in use", p.InUse())
	}
	second := append(append([]int32(nil), first...), tokensOf(9, 2, m.NVocab)...)
	s := p.NewSeq()
	got := s.AdoptPrefix(second)
	if got != 32 { // whole blocks of 8 within the first 37 tokens
		t.Fatalf("adopted %d positions, want 32", got)
	}
	if p.PrefixHits() != 4 {
		t.Fatalf("%d prefix hits, want 4", p.PrefixHits())
	}
	lg := feed(t, b, s, second[got:])
	want := soloRun(t, m, seqPlan{prompt: second}, ggml.F32, 0)[0]
	sameLogits(t, "adopted prefix", [][]float32{lg}, [][]float32{want})
	// A prompt that differs inside the second block adopts only the first.
	third := append([]int32(nil), second...)
	third[12]++
	if n := p.NewSeq().AdoptPrefix(third); n != 8 {
		t.Fatalf("diverging prompt adopted %d positions, want 8", n)
	}
}

// TestForkCopyOnWrite: two sequences forked after a prompt that ends
// inside a block share it until each writes; each then matches a solo run
// of its own tokens, and the shared prompt blocks are unchanged.
func TestForkCopyOnWrite(t *testing.T) {
	m, p, b := poolFixture(t, 64)
	prompt := tokensOf(21, 3, m.NVocab) // 2 whole blocks and 5 positions
	a := p.NewSeq()
	lg := feed(t, b, a, prompt)
	f := a.Fork()
	if p.InUse() != 3 {
		t.Fatalf("fork: %d blocks in use, want 3 shared", p.InUse())
	}
	ta, tf := argmax(lg), (argmax(lg)+1)%int32(m.NVocab)
	if err := a.Reserve(1); err != nil {
		t.Fatal(err)
	}
	if err := f.Reserve(1); err != nil {
		t.Fatal(err)
	}
	if p.InUse() != 4 || a.table[2] == f.table[2] || a.table[1] != f.table[1] {
		t.Fatalf("after the first writes: %d blocks in use, tables %v and %v", p.InUse(), a.table, f.table)
	}
	out, err := b.Forward([]Segment{{Seq: a, Tokens: []int32{ta}, Logits: LogitsLast}, {Seq: f, Tokens: []int32{tf}, Logits: LogitsLast}})
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range []int32{ta, tf} {
		want := soloRun(t, m, seqPlan{prompt: append(append([]int32(nil), prompt...), tok)}, ggml.F32, 0)[0]
		sameLogits(t, fmt.Sprintf("fork %d", i), [][]float32{out[i*m.NVocab : (i+1)*m.NVocab]}, [][]float32{want})
	}
	a.Release()
	f.Release()
	if p.InUse() != 0 {
		t.Fatalf("%d blocks leaked", p.InUse())
	}
}

// TestPoolExhaustionAndEviction: a reservation larger than the free
// blocks fails whole with ErrNoKVBlocks and changes nothing; unreferenced
// prefix-cache blocks are evicted oldest first when the free list is empty.
func TestPoolExhaustionAndEviction(t *testing.T) {
	m, p, b := poolFixture(t, 8)
	a := p.NewSeq()
	toks := tokensOf(40, 4, m.NVocab) // 5 blocks
	feed(t, b, a, toks)
	a.Register(toks)
	s := p.NewSeq()
	if err := s.Reserve(32); !errors.Is(err, ErrNoKVBlocks) {
		t.Fatalf("reserve 4 blocks of 3 free: %v", err)
	}
	if p.InUse() != 5 || s.Blocks() != 0 {
		t.Fatalf("a failed reservation changed the pool: %d in use, %d held", p.InUse(), s.Blocks())
	}
	a.Release() // 5 cached blocks on the LRU list, 3 free
	if p.Available() != 8 {
		t.Fatalf("available %d, want 8", p.Available())
	}
	if err := s.Reserve(40); err != nil { // 3 free + the 2 oldest cached
		t.Fatal(err)
	}
	// The first two blocks were evicted, so nothing of toks is found.
	if n := p.NewSeq().AdoptPrefix(toks); n != 0 {
		t.Fatalf("adopted %d positions of an evicted prefix", n)
	}
	s.Release()
}

// TestTruncateThenWriteKeepsCache: truncating into a cached whole block
// and writing there must not change what the prefix cache hands out.
func TestTruncateThenWriteKeepsCache(t *testing.T) {
	m, p, b := poolFixture(t, 32)
	toks := tokensOf(24, 5, m.NVocab)
	a := p.NewSeq()
	feed(t, b, a, toks)
	a.Register(toks)
	c := p.NewSeq()
	if n := c.AdoptPrefix(append(append([]int32(nil), toks...), 1)); n != 24 {
		t.Fatalf("adopted %d, want 24", n)
	}
	a.Truncate(12) // inside the second block, which c shares
	feed(t, b, a, tokensOf(5, 6, m.NVocab))
	lg := feed(t, b, c, []int32{1})
	want := soloRun(t, m, seqPlan{prompt: append(append([]int32(nil), toks...), 1)}, ggml.F32, 0)[0]
	sameLogits(t, "shared block after the other sequence rewrote its copy", [][]float32{lg}, [][]float32{want})
}

// TestBatchDecodeAllocatesNothing: a batch step of several sequences'
// decode rows allocates nothing (reservations inside a block included).
func TestBatchDecodeAllocatesNothing(t *testing.T) {
	m, p, b := poolFixture(t, 64)
	seqs := make([]*State, 4)
	segs := make([]Segment, len(seqs))
	tok := []int32{5}
	for i := range seqs {
		seqs[i] = p.NewSeq()
		feed(t, b, seqs[i], tokensOf(3+i, uint64(i), m.NVocab))
		segs[i] = Segment{Seq: seqs[i], Tokens: tok, Logits: LogitsLast}
	}
	allocs := testing.AllocsPerRun(20, func() {
		for _, s := range seqs {
			if err := s.Reserve(1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Forward(segs); err != nil {
			t.Fatal(err)
		}
	})
	// Reserve appends to a table with capacity for the whole context.
	if allocs != 0 {
		t.Fatalf("%v allocations per batch decode step", allocs)
	}
}

// TestThreadInvariance: with NewState's default attention split, a
// sequence of more than 512 keys (where decode steps may split their
// attention) has bit-identical logits at 1 and 2 threads, on every
// decoder fixture: the split is chosen by the network, not the threads.
func TestThreadInvariance(t *testing.T) {
	if testing.Short() {
		t.Skip("600-token contexts on 13 fixtures")
	}
	for _, file := range batchFixtures {
		var ref [][]float32
		for _, threads := range []int{1, 2} {
			m := loadSplitFixture(t, file, threads)
			s := m.NewState(640, 256)
			prompt := tokensOf(560, 7, m.NVocab)
			lg, err := s.Forward(prompt, false)
			if err != nil {
				t.Fatal(err)
			}
			got := [][]float32{append([]float32(nil), lg...)}
			for range 6 {
				tok := int32(0)
				for i, v := range lg {
					if v > lg[tok] {
						tok = int32(i)
					}
				}
				if lg, err = s.Forward([]int32{tok}, false); err != nil {
					t.Fatal(err)
				}
				got = append(got, append([]float32(nil), lg...))
			}
			if threads == 1 {
				ref = got
				continue
			}
			sameLogits(t, file+" at 2 threads against 1", got, ref)
		}
	}
}
