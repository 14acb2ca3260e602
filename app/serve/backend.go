package serve

import (
	"context"
	"errors"
	"sync/atomic"

	"flowchat/engine"
)

// Backend runs generations and embeddings for the server. It is the one
// seam between HTTP and the engine: ModelBackend runs every request on the
// engine's dynamic-batching scheduler; tests plug in scripted backends.
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
	KVTokens int // positions held in the KV cache
	// The scheduler's paged KV cache: blocks in use and in all, blocks
	// found in the prefix cache, preemptions (zero without a scheduler).
	KVBlocks, KVBlocksTotal      int
	PrefixHitBlocks, Preemptions int64
}

// ErrBusy is returned when every slot is taken and the queue is full; the
// server answers 503 with Retry-After.
var ErrBusy = errors.New("serve: every slot is busy and the queue is full")

// ModelBackend serves one engine.Model through the engine's scheduler:
// every request is a session of its own, and the scheduler batches all
// of them into one forward pass per step (dynamic batching, chunked
// prefill, a paged KV cache whose prefix cache finds a request's shared
// prefix wherever an earlier request left it). The backend only bounds
// admission: at most `parallel` requests generate at once (the
// scheduler's seats, set at load with the same number) and at most
// maxQueue wait for a seat; beyond that a request gets ErrBusy.
type ModelBackend struct {
	m        *engine.Model
	nCtx     int
	slots    chan struct{} // a token per seat
	nSlots   int
	maxQueue int
	queued   atomic.Int64
	running  atomic.Int64
}

// NewModelBackend serves m with parallel requests at once, each with a
// context of nCtx tokens (0 = the model's default); at most maxQueue
// requests wait for a seat.
func NewModelBackend(m *engine.Model, parallel, nCtx, maxQueue int) *ModelBackend {
	parallel = max(parallel, 1)
	b := &ModelBackend{m: m, nCtx: m.NewSession(nCtx).Ctx(), slots: make(chan struct{}, parallel), nSlots: parallel, maxQueue: maxQueue}
	for range parallel {
		b.slots <- struct{}{}
	}
	return b
}

// Ctx is the context size of every request, in tokens.
func (b *ModelBackend) Ctx() int { return b.nCtx }

// Generate implements Backend.
func (b *ModelBackend) Generate(ctx context.Context, prompt []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	if err := b.acquire(ctx); err != nil {
		return engine.Stats{}, err
	}
	defer b.release()
	b.running.Add(1)
	defer b.running.Add(-1)
	return b.m.NewSession(b.nCtx).Generate(ctx, prompt, opt)
}

// acquire takes a seat, waiting in the queue when all are taken.
func (b *ModelBackend) acquire(ctx context.Context) error {
	select {
	case <-b.slots:
		return nil
	default:
	}
	if int(b.queued.Add(1)) > b.maxQueue {
		b.queued.Add(-1)
		return ErrBusy
	}
	defer b.queued.Add(-1)
	select {
	case <-b.slots:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *ModelBackend) release() { b.slots <- struct{}{} }

// Embed implements Backend (engine.Model.Embed takes the model's run
// lock, so it runs between the scheduler's steps).
func (b *ModelBackend) Embed(ctx context.Context, text string) ([]float32, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	e, err := b.m.Embed(text)
	if err != nil {
		return nil, 0, err
	}
	return e.Pooled, len(e.Tokens), nil
}

// Load implements Backend: the seats, and the scheduler's KV cache.
func (b *ModelBackend) Load() Load {
	l := Load{Slots: b.nSlots, Running: int(b.running.Load()), Queued: int(b.queued.Load())}
	if sc, err := b.m.Scheduler(); err == nil {
		st := sc.Stats()
		l.KVTokens = st.BlocksInUse * sc.Pool().BlockTokens()
		l.KVBlocks, l.KVBlocksTotal = st.BlocksInUse, st.Blocks
		l.PrefixHitBlocks, l.Preemptions = st.PrefixHitBlocks, st.Preemptions
	}
	return l
}
