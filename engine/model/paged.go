package model

import (
	"errors"
	"fmt"

	"flowchat/engine/ggml"
)

// Many sequences in one forward pass, over a paged KV cache (vLLM's
// PagedAttention idea on the CPU).
//
// A KVPool holds the keys and values of every sequence in fixed blocks of
// BlockTokens positions: per layer, one array of Blocks·BlockTokens rows.
// A sequence (a State made by KVPool.NewSeq) owns no cache; its table maps
// its logical blocks to pool blocks, so memory goes to tokens in use, not
// to sequences × the longest context. Blocks are reference-counted:
// sequences forked from one prompt and sequences that found their prompt's
// prefix in the prefix cache (prefix.go) share them, and a write into a
// shared block copies it first.
//
// A Batch runs Segments — each a sequence and the tokens it adds in this
// step, a decode token or a chunk of a prompt — as one batch of rows:
// norms and matrix products over all rows (each weight read once for all
// sequences), attention per sequence over its own cache. Every kernel of a
// row is bit-identical whatever the batch's width (ggml's tile, strip and
// row kernels agree bit for bit), and attention over a paged cache walks
// each run of consecutive storage rows with the same kernels in the same
// key order, so a sequence's logits do not depend on the batch it ran in,
// on how its prompt was cut into chunks, or on where its blocks lie.

// Logits says which rows of a segment get logits.
type Logits uint8

const (
	LogitsNone Logits = iota
	LogitsLast        // the segment's last row
	LogitsAll         // every row (speculative verification, perplexity)
)

// Segment is one sequence's tokens in a batch.
type Segment struct {
	Seq    *State
	Tokens []int32
	Logits Logits
	// Prompt marks prompt rows: a one-token prompt chunk keeps the
	// per-token attention instead of a decode step's split attention, so
	// the numbers do not depend on where the chunks were cut.
	Prompt bool
	row0   int // first batch row (set by the forward pass)
}

var (
	errPagedForward = errors.New("model: a paged sequence runs through a Batch")
	// ErrNoKVBlocks is returned when the pool has too few free blocks for
	// a reservation (the caller waits or preempts; nothing is evicted but
	// unreferenced prefix-cache blocks).
	ErrNoKVBlocks = errors.New("model: KV cache blocks exhausted")
)

// row is the storage row of position j.
func (s *State) row(j int) int {
	if s.table == nil {
		return j
	}
	b := s.kvp.blockTokens
	return int(s.table[j/b])*b + j%b
}

// run returns the storage row r of position j and the number n of
// positions from j (up to hi) whose rows follow it consecutively.
func (s *State) run(j, hi int) (r, n int) {
	if s.table == nil {
		return j, hi - j
	}
	b := s.kvp.blockTokens
	lb := j / b
	r = int(s.table[lb])*b + j%b
	end := min(hi, (lb+1)*b)
	for end < hi && s.table[lb+1] == s.table[lb]+1 {
		lb++
		end = min(hi, (lb+1)*b)
	}
	return r, end - j
}

// PoolOptions size a KVPool.
type PoolOptions struct {
	Blocks      int       // blocks in the pool
	BlockTokens int       // positions per block (default 16)
	Ctx         int       // the longest sequence, in tokens
	KVType      ggml.Type // F32 (default), F16 or Q8_0
}

// KVPool is the paged KV cache shared by many sequences, and the scratch
// their attention uses. Not safe for concurrent use: one goroutine
// schedules and runs the batches.
type KVPool struct {
	m           *Model
	blockTokens int
	blocks      int
	nCtx        int
	kCache      [][]float32 // [layer][blocks·blockTokens × kvDim]
	vCache      [][]float32
	kv          *kvQuant
	scores      [][]float32 // per worker (attention scratch of every sequence)
	blockScores [][]float32
	ref         []int32 // sequences holding each block
	free        []int32 // blocks with no reference and no prefix-cache entry
	prefix      prefixCache
	dkv         *devKV   // the device half under a placement (devfwd.go)
	dkvMem      *memList // its memory
}

// NewKVPool allocates a pool. The decoder-only networks' self-attention
// is paged; encoder-decoder and encoder-only networks are not.
func (m *Model) NewKVPool(o PoolOptions) (*KVPool, error) {
	if m.seq != nil || !m.causal {
		return nil, fmt.Errorf("model: %s networks do not run in batches of sequences", m.Spec.Network.Type)
	}
	if o.BlockTokens <= 0 {
		o.BlockTokens = 16
	}
	if o.Blocks <= 0 || o.Ctx <= 0 {
		return nil, fmt.Errorf("model: a KV pool needs blocks and a context (got %d blocks, %d tokens)", o.Blocks, o.Ctx)
	}
	c := m.Config
	p := &KVPool{m: m, blockTokens: o.BlockTokens, blocks: o.Blocks, nCtx: o.Ctx}
	rows := o.Blocks * o.BlockTokens
	switch o.KVType {
	case ggml.F32:
		for range c.NLayer {
			p.kCache = append(p.kCache, make([]float32, rows*c.kvDim()))
			p.vCache = append(p.vCache, make([]float32, rows*c.vDim()))
		}
	default:
		q, err := newKVQuant(m, o.KVType, rows)
		if err != nil {
			return nil, err
		}
		p.kv = q
	}
	p.scores, p.blockScores = attnScratch(m, o.Ctx, true)
	p.ref = make([]int32, o.Blocks)
	p.free = make([]int32, o.Blocks)
	for i := range p.free {
		p.free[i] = int32(o.Blocks - 1 - i) // pop from the end: block 0 first
	}
	p.prefix.init(o.Blocks, o.BlockTokens)
	return p, nil
}

// BlockTokens is the number of positions per block.
func (p *KVPool) BlockTokens() int { return p.blockTokens }

// Blocks is the pool's size in blocks.
func (p *KVPool) Blocks() int { return p.blocks }

// Ctx is the longest sequence the pool serves.
func (p *KVPool) Ctx() int { return p.nCtx }

// Available is the number of blocks a reservation can get: free ones and
// unreferenced prefix-cache blocks (evicted oldest first).
func (p *KVPool) Available() int { return len(p.free) + p.prefix.lruLen }

// InUse is the number of blocks some sequence holds.
func (p *KVPool) InUse() int { return p.blocks - p.Available() }

// BlockBytes is the memory of one block: keys and values of every layer.
func (p *KVPool) BlockBytes() int64 { return int64(p.blockTokens) * p.m.KVBytesPerToken(p.kvType()) }

// kvType is the pool's cache element type: F32, F16 or Q8_0.
func (p *KVPool) kvType() ggml.Type {
	if p.kv != nil {
		return p.kv.typ
	}
	return ggml.F32
}

// KVBytesPerToken is the KV cache memory of one position of one sequence
// in a cache of element type t (F32, F16 or Q8_0): keys and values of
// every layer, in whole rows of t.
func (m *Model) KVBytesPerToken(t ggml.Type) int64 {
	c := m.Config
	return int64(c.NLayer) * int64(t.RowSize(c.kvDim())+t.RowSize(c.vDim()))
}

// NewSeq returns an empty sequence of the pool, with a context of up to
// the pool's Ctx tokens.
func (p *KVPool) NewSeq() *State {
	s := &State{m: p.m, nCtx: p.nCtx, kvp: p, table: make([]int32, 0, (p.nCtx+p.blockTokens-1)/p.blockTokens)}
	s.kCache, s.vCache, s.kv = p.kCache, p.vCache, p.kv
	s.scores, s.blockScores, s.scoreSt, s.blockAttn = p.scores, p.blockScores, p.nCtx, true
	s.SetAttnSplit(p.m.defaultSplitKeys(), splitChunkKeys)
	return s
}

// alloc takes a block: a free one, else the least recently used
// unreferenced prefix-cache block (its entry dropped).
func (p *KVPool) alloc() int32 {
	var b int32
	if n := len(p.free); n > 0 {
		b, p.free = p.free[n-1], p.free[:n-1]
	} else {
		b = p.prefix.evict()
	}
	p.ref[b] = 1
	return b
}

// release drops one reference to block b; an unreferenced block returns to
// the free list, or to the prefix cache's LRU list when it has an entry.
func (p *KVPool) release(b int32) {
	p.ref[b]--
	if p.ref[b] > 0 {
		return
	}
	if p.prefix.cached(b) {
		p.prefix.pushLRU(b)
		return
	}
	p.free = append(p.free, b)
}

// Reserve makes room for n more tokens after the sequence's position:
// blocks for the new positions, and a private copy of the block the first
// of them is written into when another sequence shares it or the prefix
// cache holds it. It takes all the blocks or none (ErrNoKVBlocks).
func (s *State) Reserve(n int) error {
	p := s.kvp
	if s.pos+n > s.nCtx {
		return fmt.Errorf("%w (%d tokens + %d new > %d)", ErrContextFull, s.pos, n, s.nCtx)
	}
	b := p.blockTokens
	need := (s.pos+n+b-1)/b - len(s.table)
	cow := s.pos%b != 0 && !p.writable(s.table[s.pos/b])
	if cow {
		need++
	}
	if need > p.Available() {
		return fmt.Errorf("%w: %d needed, %d available", ErrNoKVBlocks, need, p.Available())
	}
	if cow {
		s.copyBlock(s.pos / b)
	} else if s.pos%b != 0 {
		p.prefix.forget(s.table[s.pos/b]) // a lone partial block leaves the cache before it changes
	}
	for len(s.table)*b < s.pos+n {
		s.table = append(s.table, p.alloc())
	}
	return nil
}

// writable reports whether block b may be written in place: one holder
// and no prefix-cache entry (an entry is dropped instead of copied when its
// block has only this holder: see Reserve).
func (p *KVPool) writable(b int32) bool { return p.ref[b] == 1 }

// copyBlock gives the sequence a private copy of its logical block lb.
func (s *State) copyBlock(lb int) {
	p := s.kvp
	old := s.table[lb]
	nb := p.alloc()
	p.copyRows(int(nb)*p.blockTokens, int(old)*p.blockTokens, p.blockTokens)
	s.table[lb] = nb
	p.release(old)
}

// copyRows copies n storage rows of every layer from src to dst.
func (p *KVPool) copyRows(dst, src, n int) {
	c := p.m.Config
	p.copyDevRows(dst, src, n)
	if p.kv != nil {
		q := p.kv
		for l := range q.k {
			copy(q.k[l][dst*q.kRow:(dst+n)*q.kRow], q.k[l][src*q.kRow:(src+n)*q.kRow])
			copy(q.v[l][dst*q.vRow:(dst+n)*q.vRow], q.v[l][src*q.vRow:(src+n)*q.vRow])
		}
		return
	}
	kd, vd := c.kvDim(), c.vDim()
	for l := range p.kCache {
		copy(p.kCache[l][dst*kd:(dst+n)*kd], p.kCache[l][src*kd:(src+n)*kd])
		copy(p.vCache[l][dst*vd:(dst+n)*vd], p.vCache[l][src*vd:(src+n)*vd])
	}
}

// Release returns every block of the sequence to the pool and empties it.
func (s *State) Release() {
	if s.kvp == nil {
		s.Truncate(0)
		return
	}
	for _, b := range s.table {
		s.kvp.release(b)
	}
	s.table, s.pos = s.table[:0], 0
	s.prefixReset()
}

// Blocks is the number of pool blocks the sequence holds.
func (s *State) Blocks() int { return len(s.table) }

// truncatePaged keeps the first n positions and releases the blocks past
// them.
func (s *State) truncatePaged(n int) {
	p, b := s.kvp, s.kvp.blockTokens
	keep := (n + b - 1) / b
	for _, blk := range s.table[keep:] {
		p.release(blk)
	}
	s.table = s.table[:keep]
	s.pos = n
	s.prefixTruncate(n)
}

// Fork returns a new sequence of the pool that shares every block of s
// (the n choices of one prompt); the first write into a shared partial
// block copies it (Reserve).
func (s *State) Fork() *State {
	f := s.kvp.NewSeq()
	f.table = append(f.table, s.table...)
	for _, b := range s.table {
		s.kvp.ref[b]++
	}
	f.pos = s.pos
	copy(f.sp.phi, s.sp.phi)
	f.forkDevPhi(s)
	f.prefixCopy(s)
	return f
}

// Batch runs segments of many sequences of a pool as one forward pass.
type Batch struct {
	d *State // buffers for the batch's rows; no cache of its own
}

// NewBatch allocates the buffers of batches of up to maxRows rows.
func (p *KVPool) NewBatch(maxRows int) *Batch {
	d := &State{m: p.m, nCtx: p.nCtx, maxBatch: maxRows}
	d = d.withBuffers(max(maxRows, 1))
	return &Batch{d: d}
}

// MaxRows is the most rows one Forward takes.
func (b *Batch) MaxRows() int { return b.d.maxBatch }

// Forward runs the segments and returns the logits they ask for, in
// segment order ([rows × NVocab], reused by the next call). Every
// sequence must hold a reservation for its tokens (State.Reserve); a
// sequence appears in at most one segment.
func (b *Batch) Forward(segs []Segment) ([]float32, error) {
	T := 0
	for i := range segs {
		g := &segs[i]
		if g.Seq.kvp == nil || len(g.Tokens) == 0 {
			return nil, errors.New("model: a batch segment needs a pool sequence and tokens")
		}
		if len(g.Seq.table)*g.Seq.kvp.blockTokens < g.Seq.pos+len(g.Tokens) {
			return nil, fmt.Errorf("model: segment %d has no reservation for its %d tokens", i, len(g.Tokens))
		}
		if err := checkTokens(g.Tokens, b.d.m.NVocab); err != nil {
			return nil, err
		}
		T += len(g.Tokens)
	}
	if T > b.d.maxBatch {
		return nil, fmt.Errorf("model: a batch of %d rows exceeds its %d", T, b.d.maxBatch)
	}
	if T == 0 {
		return nil, nil
	}
	return b.d.forwardSegs(segs)
}
