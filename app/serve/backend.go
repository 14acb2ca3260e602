package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"flowchat/engine"
)

// Backend runs generations and embeddings for the server. It is the one
// seam between HTTP and the engine: today ModelBackend time-slices a pool
// of sessions over one model; a dynamic-batching scheduler can implement
// the same three methods without the handlers changing.
type Backend interface {
	// Generate runs one completion of prompt. Text and token ids reach the
	// caller through opt's callbacks; returning false from OnPiece stops
	// it. It returns ErrBusy without starting when the queue is full.
	Generate(ctx context.Context, prompt []int32, opt engine.GenerateOptions) (engine.Stats, error)
	// Embed returns the pooled embedding of text and its token count.
	Embed(ctx context.Context, text string) ([]float32, int, error)
	// Load reports how busy the backend is, for /metrics.
	Load() Load
}

// Load is a snapshot of a backend's occupancy.
type Load struct {
	Slots    int // sequences that can run at once
	Running  int // sequences running now
	Queued   int // requests waiting for a slot
	KVTokens int // tokens held in the slots' KV caches
}

// ErrBusy is returned when every slot is taken and the queue is full; the
// server answers 503 with Retry-After.
var ErrBusy = errors.New("serve: every slot is busy and the queue is full")

// ModelBackend serves one engine.Model from a fixed pool of Sessions.
//
// The model's forward pass is not reentrant (its worker pool's Run must
// not be called concurrently, see engine/parallel and engine/model.Model),
// so at most one session computes at a time: turn is held for every
// forward pass and handed on, first come first served, after each prefill
// chunk and each generated token. Concurrent requests therefore interleave
// token by token instead of waiting for whole completions; total
// throughput is that of one sequence until the batching scheduler lands.
type ModelBackend struct {
	m        *engine.Model
	turn     turnLock
	slots    chan *slot // free slots
	nSlots   int
	maxQueue int
	queued   atomic.Int64
	running  atomic.Int64

	mu  sync.Mutex // guards every slot's history
	all []*slot
}

// slot is one session and what its KV cache holds, used to route a
// request to the session that can reuse the longest prefix.
type slot struct {
	sess    *engine.Session
	history []int32 // guarded by ModelBackend.mu
}

// NewModelBackend makes parallel sessions of nCtx tokens each (0 = the
// model's default); at most maxQueue requests wait for a free one.
func NewModelBackend(m *engine.Model, parallel, nCtx, maxQueue int) *ModelBackend {
	parallel = max(parallel, 1)
	b := &ModelBackend{m: m, slots: make(chan *slot, parallel), nSlots: parallel, maxQueue: maxQueue}
	for range parallel {
		s := &slot{sess: m.NewSession(nCtx)}
		b.all = append(b.all, s)
		b.slots <- s
	}
	return b
}

// Ctx is the context size of every slot, in tokens.
func (b *ModelBackend) Ctx() int { return b.all[0].sess.Ctx() }

// Generate implements Backend.
func (b *ModelBackend) Generate(ctx context.Context, prompt []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	s, err := b.acquire(ctx, prompt)
	if err != nil {
		return engine.Stats{}, err
	}
	defer b.release(s)
	b.running.Add(1)
	defer b.running.Add(-1)
	hist := append([]int32(nil), prompt...)
	opt.OnPrefill = chainPrefill(opt.OnPrefill, b.turn.Yield)
	opt.OnToken = chainToken(opt.OnToken, func(id int32) {
		hist = append(hist, id)
		b.turn.Yield()
	})
	b.turn.Lock()
	st, err := s.sess.Generate(ctx, prompt, opt)
	b.turn.Unlock()
	b.setHistory(s, hist)
	return st, err
}

func chainPrefill(f func(done, total int), yield func()) func(done, total int) {
	return func(done, total int) {
		if f != nil {
			f(done, total)
		}
		yield()
	}
}

func chainToken(f func(int32), then func(int32)) func(int32) {
	return func(id int32) {
		if f != nil {
			f(id)
		}
		then(id)
	}
}

// acquire takes the free slot whose cache shares the longest prefix with
// prompt, waiting for one when all are busy.
func (b *ModelBackend) acquire(ctx context.Context, prompt []int32) (*slot, error) {
	var s *slot
	select {
	case s = <-b.slots:
	default:
		if int(b.queued.Add(1)) > b.maxQueue {
			b.queued.Add(-1)
			return nil, ErrBusy
		}
		defer b.queued.Add(-1)
		select {
		case s = <-b.slots:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.bestOf(s, prompt), nil
}

// bestOf swaps s for another free slot whose history shares a longer
// prefix with prompt, when one is free right now.
func (b *ModelBackend) bestOf(s *slot, prompt []int32) *slot {
	for range len(b.slots) {
		var o *slot
		select {
		case o = <-b.slots:
		default:
			return s
		}
		if b.prefix(o, prompt) > b.prefix(s, prompt) {
			s, o = o, s
		}
		b.slots <- o
	}
	return s
}

func (b *ModelBackend) prefix(s *slot, prompt []int32) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for n < len(s.history) && n < len(prompt) && s.history[n] == prompt[n] {
		n++
	}
	return n
}

func (b *ModelBackend) setHistory(s *slot, h []int32) {
	b.mu.Lock()
	s.history = h
	b.mu.Unlock()
}

func (b *ModelBackend) release(s *slot) { b.slots <- s }

// Embed implements Backend. The encoder runs under the same turn as
// generation because it uses the same worker pool.
func (b *ModelBackend) Embed(ctx context.Context, text string) ([]float32, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	b.turn.Lock()
	defer b.turn.Unlock()
	e, err := b.m.Embed(text)
	if err != nil {
		return nil, 0, err
	}
	return e.Pooled, len(e.Tokens), nil
}

// Load implements Backend.
func (b *ModelBackend) Load() Load {
	l := Load{Slots: b.nSlots, Running: int(b.running.Load()), Queued: int(b.queued.Load())}
	b.mu.Lock()
	for _, s := range b.all {
		l.KVTokens += len(s.history)
	}
	b.mu.Unlock()
	return l
}

// turnLock is a first-come-first-served mutex. sync.Mutex lets the
// goroutine that just unlocked take the lock straight back, which would
// let one stream starve the others between its tokens.
type turnLock struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
}

func (l *turnLock) Lock() {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	<-ch // Unlock handed the lock over, still held
}

func (l *turnLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiters) == 0 {
		l.held = false
		return
	}
	ch := l.waiters[0]
	l.waiters = l.waiters[1:]
	close(ch)
}

// Yield lets every goroutine already waiting take its turn first; it is
// free when nobody waits.
func (l *turnLock) Yield() {
	l.mu.Lock()
	waiting := len(l.waiters) > 0
	l.mu.Unlock()
	if waiting {
		l.Unlock()
		l.Lock()
	}
}
