package model

import (
	"math"

	"flowchat/engine/ggml"
)

// Split attention for decode steps over long contexts (FlashDecoding++'s
// asynchronous softmax with a unified max, on the CPU pool).
//
// One task per (token, head) leaves a decode step with only NHead tasks,
// each walking the whole cache of its KV head: too few to spread over many
// threads, and with grouped-query attention the G query heads of a KV head
// read the same keys and values G times from memory. When a decode step
// sees at least minKeys keys, each head's keys are cut into chunks of
// chunkKeys and (head, chunk) is the task, ordered (KV head, chunk, query
// head of the group) so that a chunk is read once from memory and G−1
// times from cache. Every chunk exponentiates against the same φ (ggml's
// ExpBounded, AttnChunkF32), so one combine per head sums the partials with
// no rescaling: out = Σ acc_c / Σ sum_c.
//
// φ per (layer, head) is the largest score maximum that head has had at
// its split steps so far (each chunk reports its maximum, so tracking it
// costs nothing): a head's maximum moves little from one token to the
// next, and where it alternates between two levels (an attention sink on
// some tokens and not on others: 38 and 1.9 in layer 0 of stories260K) φ
// stays on the upper one. A head whose maximum M is more than phiAbove
// above φ (a partial could overflow) or more than phiBelow below it (the
// largest weights would approach float32's subnormals) is recomputed with
// φ = M, which is the classic exact-max softmax, and M becomes its φ; so is
// a head's first split step, before any φ is known. Both are counted
// (AttnSplitStats).
//
// Softcap, ALiBi, sliding windows and the F16/Q8_0 caches work on the
// split path (the scores are capped and biased before the exponentials);
// prefill batches and encoders keep one task per (token, head), since T·NHead
// tasks are plenty and the row's own keys differ per token.

// Defaults of SetAttnSplit.
const (
	// splitMinKeys: below 512 keys a head's whole cache slice (512 × 64
	// floats of keys and as many of values: 256 KiB) stays in L2 across the
	// heads of its group, and the few chunks would not pay for the combine.
	splitMinKeys = 512
	// splitChunkKeys: a chunk's keys and values (256 × 2 × HeadDim floats:
	// 128 KiB at HeadDim 64) stay in L2 while the group's heads pass.
	splitChunkKeys = 256
	// phiAbove and phiBelow bound, in units of the scores (nats), how far
	// above and below φ the head's maximum M may be. Above: e^32 times a sum
	// over 2^20 keys of values up to 2^30 stays far below float32's 2^128.
	// Below: the largest weight is then at least e^−48 ≈ 2^−69, so the
	// weights that matter (within 2^−24 of it) times values down to 2^−33
	// stay above the subnormals (2^−126).
	phiAbove = 32
	phiBelow = 48
)

// AttnSplitStats counts the split attention's work since the state was made.
type AttnSplitStats struct {
	Heads     int64 // (layer, head) attentions of decode steps on the split path
	Fallbacks int64 // of them recomputed because the maximum left φ's window
	Cold      int64 // of them recomputed because φ was not known yet
}

// splitAttn holds the split path's settings and buffers, sized when the
// state is made (a decode step allocates nothing).
type splitAttn struct {
	minKeys, chunkKeys int
	maxChunks          int       // chunks of the longest context; 0: the path is off
	phi                []float32 // [NLayer × NHead] unified max per head, NaN until known
	part               []float32 // [NHead × maxChunks × HeadDimV] unnormalized chunk outputs
	sum                []float64 // [NHead × maxChunks] Σ e_j of each chunk
	max                []float32 // [NHead × maxChunks] largest score of each chunk
	ok                 []bool    // [NHead × maxChunks] chunk accepted φ
	redo               []int32   // heads to recompute in this layer, [:NHead] capacity
	stats              AttnSplitStats
	task               splitTask
}

// defaultSplitKeys is NewState's threshold: splitMinKeys, or 0 (off) for
// networks with as many KV heads as query heads and at least 16 of them,
// where chunks neither share reads nor are needed to spread the work
// (stories15M's attention at 4096 keys measured ~5% slower split on one
// thread). It depends on the network alone, never on the thread count, so
// a sequence's logits are the same at any number of threads: the split's
// unified-max softmax rounds differently from the classic one.
func (m *Model) defaultSplitKeys() int {
	if m.NHeadKV == m.NHead && m.NHead >= 16 {
		return 0
	}
	return splitMinKeys
}

// AttnSplitStats reports the split attention's counters.
func (s *State) AttnSplitStats() AttnSplitStats { return s.sp.stats }

// SetAttnSplit sets when decode steps split attention: from minKeys
// visible keys on, in chunks of chunkKeys; minKeys ≤ 0 turns splitting
// off. NewState sets 512 and 256 (off for one thread without grouped-query
// heads). It allocates; call it between steps.
func (s *State) SetAttnSplit(minKeys, chunkKeys int) {
	m, sp := s.m, &s.sp
	if sp.phi == nil {
		sp.phi = make([]float32, m.NLayer*m.NHead)
		for i := range sp.phi {
			sp.phi[i] = float32(math.NaN())
		}
		sp.redo = make([]int32, 0, m.NHead)
	}
	sp.minKeys, sp.chunkKeys, sp.maxChunks = minKeys, max(chunkKeys, 1), 0
	if minKeys > 0 && minKeys <= s.nCtx {
		sp.maxChunks = (s.nCtx + sp.chunkKeys - 1) / sp.chunkKeys
	}
	n := m.NHead * sp.maxChunks
	sp.part = make([]float32, n*m.HeadDimV)
	sp.sum, sp.max, sp.ok = make([]float64, n), make([]float32, n), make([]bool, n)
}

// attendRows computes the attention of the T rows of q (at positions
// s.pos…) into out: prompt rows in blocks of queries where that path
// applies, a decode row (T == 1, not prompt) split over chunks of a long
// context, else per (token, head).
func (s *State) attendRows(l, T int, q, out []float32, prompt bool) {
	switch {
	case s.attendBlocks(l, T, q, out):
	case prompt:
		s.attendTokens(l, T, q, out)
	default:
		s.attend(l, T, q, out)
	}
}

// attend computes the attention of the T rows of q into out: split over
// chunks for a decode row over a long context, else per (token, head).
func (s *State) attend(l, T int, q, out []float32) {
	if T == 1 && s.m.causal && s.splitAttend(l, q, out) {
		return
	}
	s.attendTokens(l, T, q, out)
}

// attendTokens computes the attention one task per (token, head).
func (s *State) attendTokens(l, T int, q, out []float32) {
	s.attn = attnTask{s: s, l: l, T: T, q: q, out: out}
	if T == 1 && s.attnPrep != nil {
		s.attn.prep, s.attnPrepped = s.attnPrep, true
	}
	s.m.pool.Run(&s.attn, T*s.m.NHead)
}

// splitAttend runs one decode row's attention over chunks when the context
// is long enough, and reports whether it did.
func (s *State) splitAttend(l int, q, out []float32) bool {
	m, sp := s.m, &s.sp
	p := s.pos
	first, ok := s.splits(l)
	if !ok {
		return false
	}
	keys := p + 1 - first
	chunks := (keys + sp.chunkKeys - 1) / sp.chunkKeys
	sp.task = splitTask{s: s, l: l, first: first, n: p + 1, chunks: chunks, q: q}
	m.pool.Run(&sp.task, m.NHead*chunks)
	sp.redo = sp.redo[:0]
	for h := range m.NHead {
		if !sp.combine(m, l, h, chunks, out, false) {
			sp.redo = append(sp.redo, int32(h))
		}
	}
	if len(sp.redo) == 0 {
		return true
	}
	sp.task.redo = true
	m.pool.Run(&sp.task, len(sp.redo)*chunks)
	for _, h := range sp.redo {
		sp.combine(m, l, int(h), chunks, out, true)
	}
	return true
}

// splits reports whether a decode row of layer l at the state's position
// takes the split path, and the first key it sees.
func (s *State) splits(l int) (first int, ok bool) {
	m, sp, p := s.m, &s.sp, s.pos
	if m.slidingLayer(l) {
		first = max(0, p-m.SlidingWindow+1)
	}
	return first, m.causal && sp.maxChunks > 0 && p+1-first >= sp.minKeys
}

// combine writes head h's output, Σ_c acc_c / Σ_c sum_c. Unless force, it
// writes nothing and reports false when a chunk refused φ or the head's
// maximum M fell more than phiBelow below φ; φ then becomes M (the head is
// recomputed against it), else max(φ, M).
func (sp *splitAttn) combine(m *Model, l, h, chunks int, out []float32, force bool) bool {
	c0 := h * sp.maxChunks
	maxv, ok := float32(math.Inf(-1)), true
	for c := c0; c < c0+chunks; c++ {
		maxv = max(maxv, sp.max[c])
		ok = ok && sp.ok[c]
	}
	phi := &sp.phi[l*m.NHead+h]
	if !force {
		sp.stats.Heads++
		if !ok || !(maxv-*phi >= -phiBelow) {
			if math.IsNaN(float64(*phi)) {
				sp.stats.Cold++
			} else {
				sp.stats.Fallbacks++
			}
			*phi = maxv
			return false
		}
		*phi = max(*phi, maxv)
	}
	hdv := m.HeadDimV
	o := out[h*hdv : (h+1)*hdv]
	clear(o)
	var sum float64
	for c := c0; c < c0+chunks; c++ {
		if !sp.ok[c] { // only when forced: a NaN score
			sum = math.NaN()
			continue
		}
		sum += sp.sum[c]
		add(o, sp.part[c*hdv:(c+1)*hdv])
	}
	ggml.Scale(o, float32(1/sum))
	return true
}

// splitTask computes one (head, chunk) pair per index: in the first pass
// every head, ordered (KV head, chunk, head of the group); when redo, the
// heads in redo, against their exact maximum.
type splitTask struct {
	s                   *State
	l, first, n, chunks int // keys [first, n) in chunks
	q                   []float32
	redo                bool
}

func (t *splitTask) Run(i, worker int) {
	s, m, sp := t.s, t.s.m, &t.s.sp
	var h, c int
	if t.redo {
		h, c = int(sp.redo[i/t.chunks]), i%t.chunks
	} else {
		g := m.NHead / m.NHeadKV
		c = i / g % t.chunks
		h = i/(g*t.chunks)*g + i%g
	}
	lo := t.first + c*sp.chunkKeys
	hi := min(lo+sp.chunkKeys, t.n)
	phi, bound := sp.phi[t.l*m.NHead+h], float32(phiAbove)
	if t.redo {
		bound = float32(math.Inf(1))
	}
	j := h*sp.maxChunks + c
	part := sp.part[j*m.HeadDimV : (j+1)*m.HeadDimV]
	q := t.q[h*m.HeadDim : (h+1)*m.HeadDim]
	scores := s.scores[worker][:hi-lo]
	sp.sum[j], sp.max[j], sp.ok[j] = s.attnChunk(t.l, h, lo, q, scores, phi, bound, part, worker)
}

// attnChunk computes keys [lo, lo+len(scores)) of head h against φ into
// part (ggml.AttnChunkF32 with the scores capped and biased as attnTask
// does them).
func (s *State) attnChunk(l, h, lo int, q, scores []float32, phi, bound float32, part []float32, worker int) (float64, float32, bool) {
	m := s.m
	kvh := h / (m.NHead / m.NHeadKV)
	hd, hdv := m.HeadDim, m.HeadDimV
	plain := m.AttnSoftcap == 0 && m.alibi == nil
	if r, n := s.run(lo, lo+len(scores)); s.kv == nil && plain && n == len(scores) {
		return ggml.AttnChunkF32(q, s.kCache[l][r*m.kvDim()+kvh*hd:], m.kvDim(), s.vCache[l][r*m.vDim()+kvh*hdv:], m.vDim(),
			m.attnScale, phi, bound, scores, part)
	}
	// The steps of AttnChunkF32 one by one (the same operations: a paged
	// chunk spans several runs of storage rows).
	s.scoreKeys(l, kvh, lo, q, scores, worker)
	m.adjustScores(scores, h, s.pos, lo)
	sum, maxv, ok := ggml.ExpBounded(scores, phi, bound)
	if !ok {
		return sum, maxv, ok
	}
	clear(part)
	if s.kv == nil {
		s.accValues(l, kvh, lo, scores, part)
	} else {
		for j, w := range scores {
			axpy(part, w, s.value(l, lo+j, kvh, worker))
		}
	}
	return sum, maxv, ok
}
