package model

import "flowchat/engine/ggml"

// Prompt attention in blocks of queries. With T > 1 new tokens every query
// of a head reads the same keys and values; a task of blockTask covers
// attnBlockRows consecutive queries of one head, so that the tiled kernels
// (ggml.DotsTileF32, ggml.AccumulateTileF32) load each key and value row
// once per pair of queries and reduce eight scores at once. Each score and
// each output element is computed exactly as attnTask computes it (same
// dot-product order, same softmax, values added in key order), so the two
// paths agree bit for bit.
//
// The block path covers the float32 cache, causal or not, with sliding
// windows (the keys every query of a block sees are tiled, the others go
// row by row), softcapping and ALiBi. F16/Q8_0 caches (the keys are
// decoded row by row) keep the per-token attnTask, as does decode (T == 1:
// attn_split.go).

// attnBlockRows is the number of queries of one task.
const attnBlockRows = 4

// blockTask computes one (block of queries, head) pair per index.
type blockTask struct {
	s      *State
	l, T   int
	blocks int // per head
	q, out []float32
	calls  int // layers run through the block path (tests)
}

// attendBlocks runs the block path when it applies and reports whether it
// did.
func (s *State) attendBlocks(l, T int, q, out []float32) bool {
	m := s.m
	if T < 2 || s.kv != nil || s.blockScores == nil || !s.blockAttn {
		return false
	}
	blocks := (T + attnBlockRows - 1) / attnBlockRows
	s.bt = blockTask{s: s, l: l, T: T, blocks: blocks, q: q, out: out, calls: s.bt.calls + 1}
	m.pool.Run(&s.bt, blocks*m.NHead)
	return true
}

func (b *blockTask) Run(i, worker int) {
	s, m := b.s, b.s.m
	// Heads vary fastest: neighbouring tasks (often on the other thread)
	// share the rows of q and out, the last blocks (the most keys) come last.
	blk, h := i/m.NHead, i%m.NHead
	hd, hdv := m.HeadDim, m.HeadDimV
	kvh := h / (m.NHead / m.NHeadKV)
	t0 := blk * attnBlockRows
	rows := min(attnBlockRows, b.T-t0)
	// Row r sees keys [lo(r), hi(r)): from 0, or from the start of its
	// window on sliding-window layers, to its own position (causal) or to
	// the end of the batch. Both ends grow with r, so keys [cl, ch) are
	// seen by every row of the block (when cl < ch); the keys before and
	// after that run go row by row. Scores are kept at their key's index.
	sliding := m.slidingLayer(b.l)
	lo := func(r int) int {
		if !sliding {
			return 0
		}
		return max(0, s.pos+t0+r-m.SlidingWindow+1)
	}
	hi := func(r int) int {
		if !m.causal {
			return s.pos + b.T
		}
		return s.pos + t0 + r + 1
	}
	cl, ch := lo(rows-1), hi(0)
	common := cl < ch
	sc, ss := s.blockScores[worker], s.scoreSt
	qs, kvd := m.NHead*hd, m.kvDim()
	q := b.q[t0*qs+h*hd:]
	if common {
		for j := cl; j < ch; {
			r, n := s.run(j, ch)
			ggml.DotsTileF32(q, qs, rows, s.kCache[b.l][r*kvd+kvh*hd:], kvd, n, hd, sc[j:], ss)
			j += n
		}
	}
	for r := 0; r < rows; r++ {
		l, n := lo(r), hi(r)
		qr, sr := q[r*qs:r*qs+hd], sc[r*ss:(r+1)*ss]
		switch {
		case !common:
			s.scoreKeys(b.l, kvh, l, qr, sr[l:n], worker)
		default:
			if l < cl {
				s.scoreKeys(b.l, kvh, l, qr, sr[l:cl], worker)
			}
			if n > ch {
				s.scoreKeys(b.l, kvh, ch, qr, sr[ch:n], worker)
			}
		}
		row := sr[l:n]
		m.adjustScores(row, h, s.pos+t0+r, l)
		softmax(row)
	}
	// Values in key order: the run before the common keys, the common
	// keys (tiled), the run after.
	os := m.NHead * hdv
	out := b.out[t0*os+h*hdv:]
	for r := 0; r < rows; r++ {
		or, sr := out[r*os:r*os+hdv], sc[r*ss:(r+1)*ss]
		clear(or)
		if l := lo(r); !common {
			s.accValues(b.l, kvh, l, sr[l:hi(r)], or)
		} else if l < cl {
			s.accValues(b.l, kvh, l, sr[l:cl], or)
		}
	}
	if !common {
		return
	}
	s.accValueTile(b.l, kvh, cl, ch, sc, ss, rows, out, os)
	for r := 0; r < rows; r++ {
		if n := hi(r); n > ch {
			s.accValues(b.l, kvh, ch, sc[r*ss+ch:r*ss+n], out[r*os:r*os+hdv])
		}
	}
}

// accValueTile adds the values of keys [cl, ch) of KV head kvh, weighted
// by each of rows score rows (sc, stride ss, indexed by key), to the rows
// of out (stride os): ggml.AccumulateTileF32 per run of consecutive
// storage rows, in key order.
func (s *State) accValueTile(l, kvh, cl, ch int, sc []float32, ss, rows int, out []float32, os int) {
	vd, hdv := s.m.vDim(), s.m.HeadDimV
	for j := cl; j < ch; {
		r, n := s.run(j, ch)
		ggml.AccumulateTileF32(out, os, sc[j:], ss, rows, s.vCache[l][r*vd+kvh*hdv:], vd, n, hdv)
		j += n
	}
}

// SetBlockAttention turns the prompt attention's block path on (the
// default) or off; both compute the same numbers.
func (s *State) SetBlockAttention(on bool) { s.blockAttn = on }
