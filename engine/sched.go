package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"flowchat/engine/ggml"
	"flowchat/engine/model"
	"flowchat/engine/sample"
	"flowchat/engine/tokenizer"
)

// Dynamic batching (Inferflow's section 5): AddQuery puts a query in the
// pool and Infer runs one step for every active query, so a request that
// arrives at step 3 starts at step 3 instead of waiting for a batch to
// end. One step is one forward pass over a mixed batch: the next token of
// every running sequence plus chunks of new prompts, within a budget of
// StepTokens rows (chunked prefill, as SARATHI and DeepSpeed-FastGen's
// Dynamic SplitFuse do): a long new prompt delays the running streams by
// at most one step of StepTokens rows. Decoding is memory-bound on a CPU,
// so a step over 8 sequences reads each weight once instead of 8 times.
//
// The KV cache is paged (model.KVPool): a query is admitted when the pool
// can hold its prompt; its cache then grows a block at a time. When no
// block is left for a running sequence's next token, the most recently
// admitted other sequence is preempted: its blocks go back to the pool and
// it waits at the head of the queue, to be recomputed from its tokens when
// blocks free up (vLLM's recompute preemption). Batch invariance makes the
// recomputed cache bit-identical, so the preempted query's text is the
// same as without preemption. A query never loses tokens it was sent.
//
// Callbacks run on the scheduler's goroutine between steps: they must be
// quick (hand the token to a channel or the GUI's event loop), since every
// stream waits for them.

// Query is one generation request.
type Query struct {
	Prompt    []int32
	Sampling  sample.Params // each query has its own sampler state
	MaxTokens int           // 0: until end of generation or the context is full
	// Ctx caps this query's context below the scheduler's (0: the
	// scheduler's); a full context ends it or shifts it.
	Ctx       int
	IgnoreEOG bool
	// ContextShift keeps a query going when its context is full, as
	// StreamingLLM and llama.cpp's context shift do: the first Keep tokens
	// (attention sinks; 4 when 0) stay, the older half of the rest is
	// dropped, and the kept keys are rotated to their new positions.
	ContextShift bool
	Keep         int

	// OnToken sees each generated token id before its text.
	OnToken func(id int32)
	// OnText receives the generated text as it forms (whole UTF-8
	// characters); returning false stops the query.
	OnText func(text string) bool
	// OnExplain receives each step's sampling explanation before the draw.
	OnExplain func(sample.Explanation)
	// OnLogits sees each step's logits before sampling (read only).
	OnLogits func(logits []float32)
	// OnPrefill reports progress through the prompt (tokens evaluated of
	// those not found in the prefix cache).
	OnPrefill func(done, total int)
	// OnWait is told when the query waits for KV cache blocks, and why.
	OnWait func(reason string)
	// OnShift is told when a context shift dropped tokens.
	OnShift func(dropped int)
	// ExplainOnly evaluates the prompt, calls OnExplain once and ends
	// without drawing a token.
	ExplainOnly bool
	// Spec turns on speculative decoding (speculate.go); nil: none.
	Spec *SpecOptions
	// OnSpec is told after each verification step how many tokens were
	// drafted and how many of them were kept (the step then emitted
	// kept+1 tokens, the last a correction or the bonus token, unless the
	// query ended within them); always before the query ends.
	OnSpec func(drafted, kept int)
}

// SchedOptions size a scheduler.
type SchedOptions struct {
	MaxSeqs     int   // sequences running at once (default 8)
	StepTokens  int   // batch rows per step (default 256)
	Ctx         int   // the longest sequence (default: training context, at most 4096)
	KVBudget    int64 // bytes of KV cache (default: MaxSeqs full contexts, at most half the free RAM)
	BlockTokens int   // positions per KV block (default 16)
}

// SchedStats is a snapshot of the scheduler for status lines and metrics.
type SchedStats struct {
	Running, Waiting   int
	BlocksInUse        int
	Blocks             int
	BlockBytes         int64
	PrefixHitBlocks    int64
	Steps              int64
	PromptTokens       int64 // evaluated
	GenTokens          int64
	Preemptions        int64
	ContextShifts      int64
	Completed, Errored int64
	// Drafted and DraftAccepted count speculative drafts and those kept.
	Drafted, DraftAccepted int64
}

// Scheduler runs many queries on one model.
type Scheduler struct {
	m     *Model
	opt   SchedOptions
	pool  *model.KVPool
	batch *model.Batch

	mu      sync.Mutex
	pending []*query      // added since the last step
	wake    chan struct{} // a query was added
	closed  bool
	looping atomic.Bool
	stop    chan struct{}
	stopped chan struct{}

	stepMu  *sync.Mutex // the model's runMu: one forward pass at a time
	waiting []*query
	running []*query
	segs    []model.Segment
	owners  []*query
	stats   SchedStats
	statsMu sync.Mutex

	stepTime time.Duration         // the last step's forward pass
	drafts   map[*Model]*draftPool // draft models' caches (speculate.go)
	priors   map[string]specCtl    // by specKey: the last finished query's controller (under statsMu)
}

// NewScheduler allocates a scheduler for m.
func NewScheduler(m *Model, o SchedOptions) (*Scheduler, error) {
	o = o.withDefaults(m)
	blocks := int(o.KVBudget / blockBytes(m, o.BlockTokens))
	if need := (o.Ctx + o.BlockTokens - 1) / o.BlockTokens; blocks < need {
		return nil, fmt.Errorf("engine: a KV budget of %d MiB holds %d tokens, less than one %d-token context", o.KVBudget>>20, blocks*o.BlockTokens, o.Ctx)
	}
	pool, err := m.Net.NewKVPool(model.PoolOptions{Blocks: blocks, BlockTokens: o.BlockTokens, Ctx: o.Ctx, KVType: m.kvType})
	if err != nil {
		return nil, err
	}
	s := &Scheduler{m: m, opt: o, pool: pool, batch: pool.NewBatch(o.StepTokens + o.MaxSeqs), stepMu: &m.runMu,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	return s, nil
}

func (o SchedOptions) withDefaults(m *Model) SchedOptions {
	if o.MaxSeqs <= 0 {
		o.MaxSeqs = 8
	}
	if o.StepTokens <= 0 {
		// 256 rows: the prompt tiles are as fast as at 512 (weights stay
		// in cache across 64 columns either way), a running stream waits
		// at most one such step for a new prompt, and a long prompt
		// reports its progress (and can be cancelled) every 256 tokens.
		o.StepTokens = 256
	}
	if o.Ctx <= 0 {
		o.Ctx = min(m.Net.NCtxTrain, 4096)
	}
	if o.BlockTokens <= 0 {
		o.BlockTokens = 16
	}
	if o.KVBudget <= 0 {
		full := int64(o.MaxSeqs) * int64(o.Ctx+o.BlockTokens) * blockBytes(m, 1)
		if avail := availableMemory(); avail > 0 {
			full = min(full, max(avail/2, blockBytes(m, o.BlockTokens)*int64(o.Ctx/o.BlockTokens+2)))
		} else { // free memory unknown (not Linux): at most 4 GiB, or one context
			full = min(full, max(4<<30, blockBytes(m, o.BlockTokens)*int64(o.Ctx/o.BlockTokens+2)))
		}
		o.KVBudget = full
	}
	return o
}

// blockBytes is the KV memory of n positions in the model's cache type.
func blockBytes(m *Model, n int) int64 {
	t := m.kvType
	if t != ggml.F16 && t != ggml.Q8_0 {
		t = ggml.F32
	}
	return int64(n) * m.Net.KVBytesPerToken(t)
}

// KVBytesPerToken is the KV cache memory of one position of one sequence.
func (m *Model) KVBytesPerToken() int64 { return blockBytes(m, 1) }

// Options are the scheduler's settings after defaults.
func (s *Scheduler) Options() SchedOptions { return s.opt }

// Pool is the scheduler's KV cache (read it only between steps).
func (s *Scheduler) Pool() *model.KVPool { return s.pool }

// Stats returns a snapshot of the counters.
func (s *Scheduler) Stats() SchedStats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// ErrSchedulerClosed is returned by AddQuery after Close.
var ErrSchedulerClosed = errors.New("engine: scheduler closed")

// AddQuery puts a query in the pool; it starts at the next step.
func (s *Scheduler) AddQuery(q Query) (*Handle, error) {
	if err := s.validate(&q); err != nil {
		return nil, err
	}
	sm, err := sample.New(q.Sampling, s.m.Net.NVocab, sample.WithVocab(s.m.Tok))
	if err != nil {
		return nil, err
	}
	h := &Handle{done: make(chan struct{})}
	qq := &query{Query: q, h: h, sm: sm, dec: s.m.Tok.NewDecoder(), added: time.Now()}
	if q.Spec != nil {
		qq.spec = newSpecState(*q.Spec, s.specPrior(*q.Spec))
	}
	qq.feed, qq.next = q.Prompt, -1
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSchedulerClosed
	}
	s.pending = append(s.pending, qq)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return h, nil
}

func (s *Scheduler) validate(q *Query) error {
	switch {
	case len(q.Prompt) == 0:
		return errors.New("empty prompt")
	case len(q.Prompt) >= s.opt.Ctx:
		return fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", ErrContextFull, len(q.Prompt), s.opt.Ctx)
	case q.MaxTokens < 0:
		return fmt.Errorf("max tokens %d is negative", q.MaxTokens)
	}
	for _, t := range q.Prompt {
		if t < 0 || int(t) >= s.m.Net.NVocab {
			return fmt.Errorf("token id %d outside the vocabulary (%d)", t, s.m.Net.NVocab)
		}
	}
	if q.Ctx <= 0 || q.Ctx > s.opt.Ctx {
		q.Ctx = s.opt.Ctx
	}
	if len(q.Prompt) >= q.Ctx {
		return fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", ErrContextFull, len(q.Prompt), q.Ctx)
	}
	if q.Spec != nil {
		if q.ExplainOnly {
			q.Spec = nil
		} else {
			o := *q.Spec
			if err := o.check(q.Sampling); err != nil {
				return err
			}
			q.Spec = &o
		}
	}
	if q.Keep <= 0 {
		q.Keep = 4
	}
	q.Keep = min(q.Keep, q.Ctx/4)
	return nil
}

// Handle follows one query.
type Handle struct {
	cancelled atomic.Bool
	done      chan struct{}
	stats     Stats
	err       error
}

// Cancel stops the query at the next step boundary and frees its cache.
func (h *Handle) Cancel() { h.cancelled.Store(true) }

// Done is closed when the query has ended.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Wait blocks until the query ends and returns its statistics.
func (h *Handle) Wait() (Stats, error) {
	<-h.done
	return h.stats, h.err
}

// query is a Query in the scheduler.
type query struct {
	Query
	h        *Handle
	sm       *sample.Sampler
	dec      *tokenizer.Decoder
	seq      *model.State
	tokens   []int32 // what the cache holds, in order
	feed     []int32 // tokens still to evaluate before the next draw
	fed      int     // of feed, evaluated
	resume   bool    // feed is a preempted query's tokens: no draw at its end
	next     int32   // drawn, not yet evaluated (-1: none)
	one      [1]int32
	waited   bool
	ended    bool
	flushed  bool
	accepted bool       // the prompt went into the sampler's history
	spec     *specState // speculative decoding, nil when off

	st      Stats
	added   time.Time
	started time.Time // first step with rows of this query
	first   time.Time // first token drawn
}

func (q *query) done() bool { return q.ended }

// draw samples q's next token from logits and reports whether it drew one.
func (s *Scheduler) draw(q *query, logits []float32) bool {
	now := time.Now()
	if q.first.IsZero() {
		q.first = now
		q.st.PromptTime = now.Sub(q.started)
		q.st.QueueTime = q.started.Sub(q.added)
	}
	if q.OnLogits != nil {
		q.OnLogits(logits)
	}
	if q.OnExplain != nil {
		q.OnExplain(q.sm.Explain(logits))
	}
	if q.ExplainOnly {
		s.finish(q, "explained", nil)
		return false
	}
	return s.emit(q, q.sm.Sample(logits), true)
}

// emit keeps tok as q's next token: the sampler's history, end of
// generation, the callbacks, the token and context limits (the context
// when checkCtx; speculation checks it after its rollback). It reports
// whether a token was generated.
func (s *Scheduler) emit(q *query, tok int32, checkCtx bool) bool {
	q.sm.Accept(tok)
	if !q.IgnoreEOG && s.m.Tok.IsEOG(tok) {
		s.finish(q, "eog", nil)
		return false
	}
	q.st.GenTokens++
	if q.OnToken != nil {
		q.OnToken(tok)
	}
	if text := q.dec.Add(tok); text != "" && q.OnText != nil && !q.OnText(text) {
		q.flushed = true
		s.finish(q, "stopped", nil)
		return true
	}
	switch {
	case q.MaxTokens > 0 && q.st.GenTokens >= q.MaxTokens:
		s.finish(q, "length", nil)
	case checkCtx && q.seq.Pos() >= q.Ctx && !s.shift(q):
		s.finish(q, "context", nil)
	default:
		q.next = tok
	}
	return true
}

// shift makes room in a full context when the query asked for it.
func (s *Scheduler) shift(q *query) bool {
	if !q.ContextShift || !s.m.Net.CanShift() {
		return false
	}
	discard := (q.seq.Pos() - q.Keep) / 2
	if discard <= 0 || q.seq.Shift(q.Keep, discard) != nil {
		return false
	}
	q.tokens = append(q.tokens[:q.Keep], q.tokens[q.Keep+discard:]...)
	q.st.Shifted += discard
	if q.OnShift != nil {
		q.OnShift(discard)
	}
	s.statsMu.Lock()
	s.stats.ContextShifts++
	s.statsMu.Unlock()
	return true
}

// finish ends q: the decoder's last text, its blocks back to the pool,
// its statistics to the handle.
func (s *Scheduler) finish(q *query, reason string, err error) {
	if q.ended {
		return
	}
	s.bookWalk(q) // a verification walk this query ends in
	q.ended = true
	if !q.flushed && err == nil && reason != "cancelled" {
		if text := q.dec.Flush(); text != "" && q.OnText != nil {
			q.OnText(text)
		}
	}
	if q.seq != nil {
		q.seq.Release()
		q.seq = nil
	}
	if q.spec != nil {
		s.keepPrior(q.spec)
	}
	if q.spec != nil && q.spec.d != nil {
		q.spec.d.release()
		q.spec.d = nil
	}
	if q.spec != nil && q.spec.disabled != "" {
		q.st.SpecNote = "speculation stopped: " + q.spec.disabled
	}
	if !q.first.IsZero() {
		q.st.GenTime = time.Since(q.first)
	}
	q.st.StopReason = reason
	q.h.stats, q.h.err = q.st, err
	s.statsMu.Lock()
	if err != nil {
		s.stats.Errored++
	} else {
		s.stats.Completed++
	}
	s.statsMu.Unlock()
	close(q.h.done)
}

// Start runs Infer on a goroutine of its own while any query is active,
// and sleeps otherwise, until Close.
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.looping.CompareAndSwap(false, true) {
		go s.run()
	}
}

func (s *Scheduler) run() {
	defer close(s.stopped)
	for {
		n, _ := s.Infer()
		if n > 0 {
			select {
			case <-s.stop:
				return
			default:
			}
			continue
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
	}
}

// Close stops the loop; queries still active end as cancelled.
func (s *Scheduler) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	if s.looping.Load() {
		<-s.stopped
	}
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	s.takePending()
	for _, list := range [][]*query{s.waiting, s.running} {
		for _, q := range list {
			s.finish(q, "cancelled", nil)
		}
	}
	s.compact()
}
