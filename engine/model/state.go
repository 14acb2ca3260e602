package model

import (
	"fmt"
	"math"

	"flowchat/engine/ggml"
)

// State is one sequence being evaluated: its KV cache, its position, and
// every buffer the forward pass needs, sized once so that a decode step
// allocates nothing.
type State struct {
	m        *Model
	nCtx     int
	maxBatch int
	pos      int // tokens in the cache

	kCache, vCache [][]float32 // [layer][rows × kvDim], [layer][rows × vDim]
	kv             *kvQuant    // F16/Q8_0 cache instead of the above (kvcache.go)
	// table maps the sequence's blocks of blockTokens positions to blocks of
	// storage rows (paged.go); nil: the state owns its cache and position j
	// is row j.
	table   []int32
	kvp     *KVPool  // the shared cache table's blocks come from (nil: own cache)
	hashes  []uint64 // prefix-cache chain hash of each full block (prefix.go)
	segs    []Segment
	solo    [1]Segment // segs of a single-sequence Forward
	rowPos  []int      // [maxBatch] position of each batch row in its sequence
	tokBuf  []int32    // [maxBatch] a single-sequence Forward's tokens
	scoreSt int        // stride of a blockScores row group (the longest context)

	x, xn, tmp  []float32 // [maxBatch × nEmbd]
	qkv         []float32 // fused projection output [maxBatch × (q+k+v)]
	q, k, v     []float32 // [maxBatch × qDim|kvDim|vDim]
	attnOut     []float32 // [maxBatch × nHead·headDimV]
	up, gate    []float32 // [maxBatch × nFF(·2 when fused)]
	ffnOut      []float32 // [maxBatch × nEmbd] (parallel blocks; xn otherwise)
	logits      []float32 // [maxBatch × nVocab]
	actBuf      []byte    // quantized activations
	embBuf      []byte    // one token embedding row read with pread (Model.embFile)
	act         ggml.Act  // actBuf prepared for the matrix kernels
	actSrc      *float32  // which buffer act holds, for reuse across Q/K/V
	actType     ggml.Type // weight type act is prepared for
	actT, actN  int
	actTiles    bool        // act holds only the tile layout's operands (ggml.Act.BeginTiles)
	spanPreps   int         // decode steps' inputs of O and FFN down prepared by the workers (spanPrepared), for tests
	attnPrep    *ggml.Act   // set by the driver: attendTokens' heads of a decode row prepare their output there
	attnPrepped bool        // attendTokens did so
	scores      [][]float32 // per worker [nCtx]
	blockScores [][]float32 // per worker [attnBlockRows × nCtx] (attn_block.go; nil when maxBatch is 1)
	blockAttn   bool        // prompt attention in blocks of queries
	ffnRows     int         // batch rows per FFN block (up and gate hold this many)
	ropes       []ropeTable // per batch row
	ropeStorage []float32

	rowAttn []int32      // segments of one row attended together (decode steps of a batch)
	ra      rowsAttnTask // their attention

	mm   matmulTask
	rt   rowsTask // per-row steps (rows.go)
	attn attnTask
	bt   blockTask // prompt attention in blocks of queries (attn_block.go)
	sp   splitAttn // decode attention over chunks of a long context (attn_split.go)
	sq   *seqState // encoder-decoder networks (seqstate.go)

	// Device halves under a placement (devfwd.go): buffers per device, the
	// own cache's device rows, and the memory each owns.
	dev            *devState
	dkv            *devKV
	devMem, dkvMem *memList
	dphi           *devPhi // split decode's unified max per layer and head (devattn.go)
}

// NewState allocates a sequence with a context of nCtx tokens that accepts
// up to maxBatch tokens per Forward call.
func (m *Model) NewState(nCtx, maxBatch int) *State {
	s, _ := m.NewStateKV(nCtx, maxBatch, ggml.F32)
	return s
}

// NewStateKV is NewState with a KV cache of type kv (F32, F16 or Q8_0; see
// SetKVType), allocated as that type from the start: NewState followed by
// SetKVType would first write an F32 cache's pages (peak RSS).
func (m *Model) NewStateKV(nCtx, maxBatch int, kv ggml.Type) (*State, error) {
	if maxBatch < 1 {
		maxBatch = 1
	}
	maxBatch = min(maxBatch, nCtx)
	c := m.Config
	s := &State{m: m, nCtx: nCtx, maxBatch: maxBatch}
	if kv != ggml.F32 && kv != 0 {
		if m.seq != nil {
			return nil, fmt.Errorf("model: %s caches of encoder-decoder networks are not supported", kv)
		}
		q, err := newKVQuant(m, kv, nCtx)
		if err != nil {
			return nil, err
		}
		s.kv = q
	} else {
		s.kCache = make([][]float32, c.NLayer)
		s.vCache = make([][]float32, c.NLayer)
		for i := range s.kCache {
			s.kCache[i] = make([]float32, nCtx*c.kvDim())
			s.vCache[i] = make([]float32, nCtx*c.vDim())
		}
	}
	s = s.withBuffers(maxBatch)
	if m.seq != nil {
		s.sq = newSeqState(m, nCtx)
	}
	s.SetAttnSplit(m.defaultSplitKeys(), splitChunkKeys)
	return s, nil
}

// withBuffers sizes the forward pass's buffers for batches of up to
// maxBatch rows (nCtx bounds the attention's score buffers).
func (s *State) withBuffers(maxBatch int) *State {
	m, c, nCtx := s.m, s.m.Config, s.nCtx
	nff, maxCols := 0, c.NEmbd
	for i := range m.Layers {
		f := &m.Layers[i].FFN
		nff = max(nff, f.Up.W.Rows)
		maxCols = max(maxCols, f.width(), c.NHead*c.HeadDimV)
	}
	qkvRows := c.qDim() + c.kvDim() + c.vDim()
	T := maxBatch
	s.x, s.xn = make([]float32, T*c.NEmbd), make([]float32, T*c.NEmbd)
	if m.parallel {
		// x + attn(n(x)) + ffn(n'(x)): the attention's output (tmp) is
		// live while the FFN reads xn and writes ffnOut.
		s.tmp, s.ffnOut = make([]float32, T*c.NEmbd), make([]float32, T*c.NEmbd)
	} else {
		// Sequential blocks: xn is read by the Q/K/V projections before
		// the output projection writes tmp, tmp is added to x before the
		// FFN norm rewrites xn, and each FFN row block's input rows are
		// read (quantized) before its down projection writes them.
		s.tmp, s.ffnOut = s.xn, s.xn
	}
	// The attention's buffers (qkv, q, k, v, attnOut) and the FFN's (up,
	// gate) are never live at once (attention → output projection into
	// tmp → FFN): they are carved from one arena, as llama.cpp's graph
	// allocator reuses one compute buffer. The FFN runs in blocks of
	// ffnRows batch rows sized so that its up and gate fit the
	// attention's part (never below 64 rows: each block reads the FFN's
	// weights once more).
	fused, width := false, 0
	for i := range m.Layers {
		fused = fused || m.Layers[i].Attn.QKV.W != nil
		width = max(width, m.Layers[i].FFN.width())
	}
	attnN := T * (c.qDim() + c.kvDim() + c.vDim() + c.NHead*c.HeadDimV)
	if fused {
		attnN += T * qkvRows
	}
	s.ffnRows = T
	if per := nff + width; per > 0 && T*per > attnN {
		s.ffnRows = min(T, max(64, attnN/per/16*16))
	}
	work := make([]float32, max(attnN, s.ffnRows*(nff+width)))
	carve := func(off *int, n int) []float32 {
		b := work[*off : *off+n : *off+n]
		*off += n
		return b
	}
	var off int
	s.q, s.k, s.v = carve(&off, T*c.qDim()), carve(&off, T*c.kvDim()), carve(&off, T*c.vDim())
	s.attnOut = carve(&off, T*c.NHead*c.HeadDimV)
	if fused {
		s.qkv = carve(&off, T*qkvRows)
	}
	off = 0
	s.up, s.gate = carve(&off, s.ffnRows*nff), carve(&off, s.ffnRows*width)
	s.logits = make([]float32, c.NVocab) // grown on demand when every row is wanted
	if m.embFromFile() {
		s.embBuf = make([]byte, m.TokEmbd.Type.RowSize(m.TokEmbd.Cols))
	}
	in, down := m.actRowBytes(maxCols)
	s.actBuf = make([]byte, max(T*in, s.ffnRows*down))
	s.scores, s.blockScores = attnScratch(m, nCtx, maxBatch > 1)
	s.blockAttn, s.scoreSt = maxBatch > 1, nCtx
	s.allocRows(T)
	half := c.NRot / 2
	s.ropes = make([]ropeTable, T)
	s.ropeStorage = make([]float32, 2*T*half)
	for t := range s.ropes {
		s.ropes[t] = ropeTable{cos: s.ropeStorage[2*t*half : (2*t+1)*half], sin: s.ropeStorage[(2*t+1)*half : (2*t+2)*half]}
	}
	return s
}

// attnScratch allocates the attention's per-worker score buffers for
// contexts of up to nCtx keys (blocks: also the prompt path's blocks of
// query rows).
func attnScratch(m *Model, nCtx int, blocks bool) (scores, blockScores [][]float32) {
	scores = make([][]float32, m.pool.Size())
	for i := range scores {
		scores[i] = make([]float32, nCtx)
	}
	if blocks {
		blockScores = make([][]float32, m.pool.Size())
		for i := range blockScores {
			blockScores[i] = make([]float32, attnBlockRows*nCtx)
		}
	}
	return scores, blockScores
}

// allocRows sizes the per-row bookkeeping of a batch of T rows.
func (s *State) allocRows(T int) {
	s.rowPos, s.tokBuf = make([]int, T), make([]int32, T)
}

// maxActRowBytes bounds the bytes of one activation row of n elements in
// any vec-dot type (float32 is the largest).
func maxActRowBytes(n int) int { return 4*n + 64 }

// actRowBytes bounds the bytes of one quantized activation row (State.actBuf)
// for the model's matrices: the largest row of their vec-dot types (F32
// activations are read in place and need none), for the inputs of every
// matrix but the FFN's down projection (batches of up to maxBatch rows) and
// for those of the down projections (blocks of ffnRows). A network whose
// matrices are not all known here (maxCols is the widest input) gets the
// bound of any type; prepare grows the buffer should a matrix still need
// more.
func (m *Model) actRowBytes(maxCols int) (in, down int) {
	if len(m.Layers) == 0 || m.seq != nil {
		return maxActRowBytes(maxCols), maxActRowBytes(maxCols)
	}
	row := func(n *int, l Linear) {
		if l.W != nil {
			if vt := l.W.Type.VecDotType(); vt != ggml.F32 {
				*n = max(*n, vt.RowSize(l.W.Cols))
			}
		}
	}
	for i := range m.Layers {
		a, f := &m.Layers[i].Attn, &m.Layers[i].FFN
		for _, l := range []Linear{a.Q, a.K, a.V, a.QKV, a.O, f.Gate, f.Up} {
			row(&in, l)
		}
		row(&down, f.Down)
	}
	row(&in, m.Output)
	return in, down
}

// Pos is the number of tokens in the cache.
func (s *State) Pos() int { return s.pos }

// Ctx is the context size.
func (s *State) Ctx() int { return s.nCtx }

// Reset empties the cache.
func (s *State) Reset() { s.Truncate(0) }

// Truncate drops cached tokens after the first n (for regenerate / edit).
func (s *State) Truncate(n int) {
	if s.sq != nil {
		s.seqTruncate(n)
		return
	}
	if s.kvp != nil {
		s.truncatePaged(max(0, min(n, s.pos)))
		return
	}
	if n < s.pos {
		s.pos = max(n, 0)
	}
}

// Forward evaluates tokens at the next positions and returns their logits:
// [len(tokens) × NVocab] when all is true, else the last token's [NVocab].
// The slice is reused by the next call. A sequence of a KVPool goes
// through a Batch instead.
func (s *State) Forward(tokens []int32, all bool) ([]float32, error) {
	if s.sq != nil {
		return s.seqForward(tokens, all)
	}
	if s.kvp != nil || s.x == nil {
		return nil, errPagedForward
	}
	if s.pos+len(tokens) > s.nCtx {
		return nil, fmt.Errorf("%w (%d tokens + %d new > %d)", ErrContextFull, s.pos, len(tokens), s.nCtx)
	}
	if err := checkTokens(tokens, s.m.NVocab); err != nil {
		return nil, err
	}
	var out []float32
	for len(tokens) > 0 {
		n := min(len(tokens), s.maxBatch)
		last := n == len(tokens)
		want := LogitsNone
		if all {
			want = LogitsAll
		} else if last {
			want = LogitsLast
		}
		// A copy: tokens stored in s would escape, and a caller's
		// []int32{tok} would then allocate every decode step.
		s.solo[0] = Segment{Seq: s, Tokens: s.tokBuf[:copy(s.tokBuf, tokens[:n])], Logits: want}
		logits, err := s.forwardSegs(s.solo[:])
		if err != nil {
			return nil, err
		}
		if all {
			out = append(out, logits...)
		} else if last {
			out = logits
		}
		tokens = tokens[n:]
	}
	return out, nil
}

func checkTokens(tokens []int32, vocab int) error {
	for _, t := range tokens {
		if t < 0 || int(t) >= vocab {
			return errTokenRange(t, vocab)
		}
	}
	return nil
}

// forwardSegs runs the segments' tokens through the network as one batch
// of rows (every segment's rows in order) and returns the logits the
// segments ask for, in segment order. Each segment's sequence must have
// room for its tokens (storage reserved, for paged sequences).
func (s *State) forwardSegs(segs []Segment) ([]float32, error) {
	m := s.m
	T := s.layoutRows(segs)
	s.embedRows(T)
	if m.useRope {
		for t := 0; t < T; t++ {
			s.ropes[t].fill(s.rowPos[t], m.RopeTheta, m.RopeFreqScale)
		}
	}
	if m.off != nil {
		return s.forwardPlaced(segs, T)
	}
	for l := range m.Layers {
		s.layer(l, T)
	}
	for i := range segs {
		segs[i].Seq.pos += len(segs[i].Tokens)
	}
	return s.outputRows(T), nil
}

// layoutRows assigns the segments' tokens to batch rows and returns the
// number of rows.
func (s *State) layoutRows(segs []Segment) int {
	s.segs = segs
	T := 0
	for i := range segs {
		g := &segs[i]
		g.row0 = T
		for j := range g.Tokens {
			s.rowPos[T+j] = g.Seq.pos + j
		}
		T += len(g.Tokens)
	}
	s.actSrc = nil // x's rows are new
	return T
}

// outputRows computes the logits of the rows the segments want into
// s.logits (rows gathered in order, normalized and projected).
func (s *State) outputRows(T int) []float32 {
	m, d := s.m, s.m.NEmbd
	rows := 0
	for i := range s.segs {
		g := &s.segs[i]
		n := len(g.Tokens)
		switch g.Logits {
		case LogitsLast:
			copy(s.xn[rows*d:(rows+1)*d], s.x[(g.row0+n-1)*d:(g.row0+n)*d])
			rows++
		case LogitsAll:
			copy(s.xn[rows*d:(rows+n)*d], s.x[g.row0*d:(g.row0+n)*d])
			rows += n
		}
	}
	if rows == 0 {
		return nil
	}
	x := s.xn[:rows*d]
	s.normRows(m.OutNorm, x, x, d)
	if len(s.logits) < rows*m.NVocab {
		s.logits = make([]float32, rows*m.NVocab)
	}
	s.linear(s.logits, m.Output, x, rows)
	if c := m.FinalSoftcap; c > 0 {
		softcap(s.logits[:rows*m.NVocab], c)
	}
	return s.logits[:rows*m.NVocab]
}

// embedRows writes the input rows of the batch laid out by layoutRows.
func (s *State) embedRows(T int) {
	for i := range s.segs {
		g := &s.segs[i]
		for j, tok := range g.Tokens {
			s.embedRow(g.row0+j, tok)
		}
	}
}

// embedRow writes token tok's input row at batch row t (position
// s.rowPos[t]).
func (s *State) embedRow(t int, tok int32) {
	m, d, p := s.m, s.m.NEmbd, s.rowPos[t]
	row := s.x[t*d : (t+1)*d]
	src := m.TokEmbd.Row(int(tok))
	if m.embFromFile() && len(s.embBuf) >= len(src) {
		// pread: no page of the mapping becomes resident (FromGGUFHugePages).
		if n, err := m.embFile.ReadAt(s.embBuf[:len(src)], m.embOff+int64(tok)*int64(len(src))); n == len(src) && err == nil {
			src = s.embBuf[:len(src)]
		}
	}
	ggml.DequantizeRow(m.TokEmbd.Type, src, row)
	if m.embdScale != 1 {
		for i := range row {
			row[i] *= m.embdScale
		}
	}
	if m.TypeEmbd != nil {
		ggml.DequantizeRow(m.TypeEmbd.Type, m.TypeEmbd.Row(0), s.tmp[:d])
		add(row, s.tmp[:d])
	}
	if m.sinusoidal {
		sinusoid(s.tmp[:d], p)
		add(row, s.tmp[:d])
	}
	if m.PosEmbd != nil {
		pp := min(p, m.PosEmbd.Rows-1)
		ggml.DequantizeRow(m.PosEmbd.Type, m.PosEmbd.Row(pp), s.tmp[:d])
		add(row, s.tmp[:d])
	}
	if m.EmbdNorm != nil {
		m.EmbdNorm.Forward(row, row)
	}
}

// layer runs block l over the batch in s.x.
func (s *State) layer(l, T int) {
	m, d := s.m, s.m.NEmbd
	L := &m.Layers[l]
	x, xn := s.x[:T*d], s.xn[:T*d]
	s.normRows(L.AttnNorm, xn, x, d)
	s.attention(l, T, xn)
	attnOut := s.tmp[:T*d]
	if L.PostAttnNorm != nil {
		s.normRows(L.PostAttnNorm, attnOut, attnOut, d)
	}
	if m.parallel {
		// x + attn(n(x)) + ffn(n'(x)), n' = ffn_norm when present.
		if L.FFNNorm != nil {
			s.normRows(L.FFNNorm, xn, x, d)
		}
		s.ffn(L, T, xn, s.ffnOut[:T*d])
		add(x, attnOut)
		add(x, s.ffnOut[:T*d])
		return
	}
	add(x, attnOut)
	if L.AttnOutNorm != nil {
		s.normRows(L.AttnOutNorm, x, x, d)
	}
	s.normRows(L.FFNNorm, xn, x, d)
	out := s.ffnOut[:T*d]
	s.ffn(L, T, xn, out)
	if L.PostFFNNorm != nil {
		s.normRows(L.PostFFNNorm, out, out, d)
	}
	add(x, out)
	if L.OutNorm != nil {
		s.normRows(L.OutNorm, x, x, d)
	}
}

// normRows applies n to each row; a nil norm copies.
func normRows(n *Norm, dst, src []float32, d int) {
	if n == nil {
		copy(dst, src)
		return
	}
	for i := 0; i < len(src); i += d {
		n.Forward(dst[i:i+d], src[i:i+d])
	}
}

// attention projects xn to Q/K/V, appends K/V to the cache, attends, and
// writes the output projection into s.tmp.
func (s *State) attention(l, T int, xn []float32) {
	m, c := s.m, s.m.Config
	a := &m.Layers[l].Attn
	s.actSrc = nil // the arena's buffers change roles (withBuffers): no reuse across blocks
	q, k, v := s.q[:T*c.qDim()], s.k[:T*c.kvDim()], s.v[:T*c.vDim()]
	if a.QKV.W != nil {
		rows := c.qDim() + c.kvDim() + c.vDim()
		qkv := s.qkv[:T*rows]
		s.linear(qkv, a.QKV, xn, T)
		for t := 0; t < T; t++ {
			r := qkv[t*rows : (t+1)*rows]
			copy(q[t*c.qDim():(t+1)*c.qDim()], r[:c.qDim()])
			copy(k[t*c.kvDim():(t+1)*c.kvDim()], r[c.qDim():c.qDim()+c.kvDim()])
			copy(v[t*c.vDim():(t+1)*c.vDim()], r[c.qDim()+c.kvDim():])
		}
	} else {
		s.linears(xn, T, a.Q, q, a.K, k, a.V, v)
	}
	s.prepareQK(a, T, q, k)
	out := s.attnOut[:T*c.NHead*c.HeadDimV]
	qd, kd, vd, od := c.qDim(), c.kvDim(), c.vDim(), c.NHead*c.HeadDimV
	s.rowAttn = s.rowAttn[:0]
	var headPrep *State // the one decode row's sequence, when its heads prepare out for O
	if T == 1 && len(s.segs) == 1 && c.HeadDimV%32 == 0 && s.spanPrepared(a.O.W, out, od) {
		headPrep = s.segs[0].Seq
		headPrep.attnPrep, headPrep.attnPrepped = &s.act, false
	}
	for i := range s.segs {
		g := &s.segs[i]
		r0, r1 := g.row0, g.row0+len(g.Tokens)
		g.Seq.storeKV(l, k[r0*kd:r1*kd], v[r0*vd:r1*vd])
		if _, split := g.Seq.splits(l); r1-r0 == 1 && (g.Prompt || !split) && len(s.segs) > 1 {
			s.rowAttn = append(s.rowAttn, int32(i)) // one pool pass for all of them, below
			continue
		}
		g.Seq.attendRows(l, r1-r0, q[r0*qd:r1*qd], out[r0*od:r1*od], g.Prompt)
	}
	if len(s.rowAttn) > 0 {
		s.ra = rowsAttnTask{d: s, l: l, q: q, out: out}
		m.pool.Run(&s.ra, len(s.rowAttn)*m.NHead)
	}
	if headPrep != nil {
		if headPrep.attnPrepped { // else a split attention ran: prepare finds act unfilled and fills it
			s.actSrc, s.actType, s.actT, s.actN, s.actTiles = &out[0], a.O.W.Type, 1, od, true
			s.spanPreps++
		}
		headPrep.attnPrep, headPrep.attnPrepped = nil, false
	}
	s.linear(s.tmp[:T*c.NEmbd], a.O, out, T)
}

// prepareQK applies per-head norms and RoPE to the new rows of Q and K.
func (s *State) prepareQK(a *Attention, T int, q, k []float32) {
	m, hd := s.m, s.m.HeadDim
	for t := 0; t < T; t++ {
		for h := 0; h < m.NHead; h++ {
			s.headPrep(a.QNorm, q[(t*m.NHead+h)*hd:(t*m.NHead+h+1)*hd], t)
		}
		for h := 0; h < m.NHeadKV; h++ {
			s.headPrep(a.KNorm, k[(t*m.NHeadKV+h)*hd:(t*m.NHeadKV+h+1)*hd], t)
		}
	}
}

func (s *State) headPrep(n *Norm, x []float32, t int) {
	if n != nil {
		n.Forward(x, x)
	}
	if s.m.useRope {
		rope(x[:s.m.NRot], &s.ropes[t], s.m.ropeHalf)
	}
}

// attnTask computes one (token, head) pair per index.
type attnTask struct {
	s      *State
	l, T   int
	q, out []float32
	// prep, for one decode row, is the output projection's activation:
	// each head quantizes and prepares its output there as it finishes it
	// (ggml.Act.FillSpan, the same bytes as the caller's pass after).
	prep *ggml.Act
}

func (a *attnTask) Run(i, worker int) {
	a.run(i, worker)
	if a.prep != nil {
		hdv := a.s.m.HeadDimV
		h := i % a.s.m.NHead
		a.prep.FillSpan(a.out[h*hdv:(h+1)*hdv], 0, h*hdv, (h+1)*hdv)
	}
}

func (a *attnTask) run(i, worker int) {
	s, m := a.s, a.s.m
	t, h := i/m.NHead, i%m.NHead
	hd, hdv := m.HeadDim, m.HeadDimV
	kvh := h / (m.NHead / m.NHeadKV)
	p := s.pos + t // this token's position
	n := p + 1
	if !m.causal {
		n = s.pos + a.T
	}
	// Keys [first, n) are visible: all of them, or the last SlidingWindow
	// positions on sliding-window layers.
	first := 0
	if m.slidingLayer(a.l) {
		first = max(0, p-m.SlidingWindow+1)
	}
	q := a.q[(t*m.NHead+h)*hd : (t*m.NHead+h+1)*hd]
	scores := s.scores[worker][first:n]
	s.scoreKeys(a.l, kvh, first, q, scores, worker)
	m.adjustScores(scores, h, p, first)
	softmax(scores)
	out := a.out[(t*m.NHead+h)*hdv : (t*m.NHead+h+1)*hdv]
	clear(out)
	if s.kv == nil {
		s.accValues(a.l, kvh, first, scores, out)
		return
	}
	for j, w := range scores {
		axpy(out, w, s.value(a.l, first+j, kvh, worker))
	}
}

// rowsAttnTask computes the attention of the one-row segments listed in
// d.rowAttn, one task per (segment, head): a batch's decode rows share one
// hand-off to the pool instead of one per sequence. Each task is attnTask's
// work for that sequence, row and head, so the numbers are the same.
type rowsAttnTask struct {
	d      *State
	l      int
	q, out []float32 // the batch's rows
}

func (r *rowsAttnTask) Run(i, worker int) {
	m := r.d.m
	g := &r.d.segs[r.d.rowAttn[i/m.NHead]]
	qd, od := m.qDim(), m.NHead*m.HeadDimV
	at := attnTask{s: g.Seq, l: r.l, T: 1, q: r.q[g.row0*qd : (g.row0+1)*qd], out: r.out[g.row0*od : (g.row0+1)*od]}
	at.Run(i%m.NHead, worker)
}

// scoreKeys puts q·k for keys [first, first+len(scores)) of KV head kvh
// of layer l into scores.
func (s *State) scoreKeys(l, kvh, first int, q, scores []float32, worker int) {
	m := s.m
	if s.kv == nil { // float32 cache: the vector kernels walk it in place
		kd := m.kvDim()
		for j, hi := first, first+len(scores); j < hi; {
			r, n := s.run(j, hi)
			ggml.DotsF32(q, s.kCache[l][r*kd+kvh*m.HeadDim:], kd, scores[j-first:j-first+n])
			j += n
		}
		return
	}
	for j := range scores {
		ggml.DotsF32(q, s.key(l, first+j, kvh, worker), 0, scores[j:j+1])
	}
}

// adjustScores scales, soft-caps and ALiBi-biases the raw scores of head h
// for the query at position p; scores[j] belongs to key first+j.
func (m *Model) adjustScores(scores []float32, h, p, first int) {
	ggml.Scale(scores, m.attnScale)
	if c := m.AttnSoftcap; c > 0 {
		softcap(scores, c)
	}
	if m.alibi != nil {
		slope := m.alibi[h]
		for j := range scores {
			scores[j] -= slope * float32(absInt(p-first-j))
		}
	}
}

// accValues adds Σ_j w[j]·v_j to out for the values of KV head kvh of
// layer l at positions [first, first+len(w)) of a float32 cache, in key
// order (one ggml.AccumulateRows per run of consecutive storage rows, which
// adds in the same order as one call over all of them).
func (s *State) accValues(l, kvh, first int, w, out []float32) {
	vd, hdv := s.m.vDim(), s.m.HeadDimV
	for j, hi := first, first+len(w); j < hi; {
		r, n := s.run(j, hi)
		ggml.AccumulateRows(out, w[j-first:j-first+n], s.vCache[l][r*vd+kvh*hdv:], vd)
		j += n
	}
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ffn computes the feed-forward block of the T rows of xn into out, in
// blocks of s.ffnRows rows (withBuffers). out may be xn: a block's rows of
// xn are read before its rows of out are written.
func (s *State) ffn(L *Layer, T int, xn, out []float32) {
	f := &L.FFN
	in, od := f.Up.W.Cols, f.Down.W.Rows
	for t0 := 0; t0 < T; t0 += s.ffnRows {
		n := min(s.ffnRows, T-t0)
		s.ffnBlock(f, n, xn[t0*in:(t0+n)*in], out[t0*od:(t0+n)*od])
	}
}

func (s *State) ffnBlock(f *FFN, T int, xn, out []float32) {
	nff := f.width()
	s.actSrc = nil // the arena's buffers change roles (withBuffers): no reuse across blocks
	up := s.up[:T*f.Up.W.Rows]
	h := s.gate[:T*nff]
	if f.Gate.W != nil && !f.FusedGate {
		s.linears(xn, T, f.Up, up, f.Gate, h, Linear{}, nil)
	} else {
		s.linear(up, f.Up, xn, T)
	}
	s.rt = rowsTask{s: s, op: opGLU, T: T, ffn: f, up: up, h: h}
	if T == 1 && s.spanSplit(f) {
		s.rt.prep = s.spanPrepared(f.Down.W, h, nff)
	}
	s.eachRow()
	if s.rt.prep {
		s.actSrc, s.actType, s.actT, s.actN, s.actTiles = &h[0], f.Down.W.Type, 1, nff, true
		s.spanPreps++
	}
	s.linear(out, f.Down, h, T)
}

// activateRow applies the activation to one row in place. (SiLU through
// ggml.ExpGGML in groups of 8, as ggml_vec_silu_f32 is written, matched
// llama.cpp's logits less well than a correctly rounded expf, so SiLU uses
// the latter.)
func (m *Model) activateRow(row []float32) {
	for i, v := range row {
		row[i] = m.act(v)
	}
}

func mulInto(dst, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] *= x[i]
	}
}

// linear computes dst[t] = W·x[t] + B for T rows.
func (s *State) linear(dst []float32, lin Linear, x []float32, T int) {
	s.linears(x, T, lin, dst, Linear{}, nil, Linear{}, nil)
}

// linears computes up to three linear maps of the same input in one pass
// of the pool (Q, K, V; gate and up): one hand-off and one tail instead of
// three. A map with a nil weight is skipped; maps whose weight type differs
// from the first one's run on their own, since the activations are
// prepared per weight type.
func (s *State) linears(x []float32, T int, l0 Linear, d0 []float32, l1 Linear, d1 []float32, l2 Linear, d2 []float32) {
	maps := [3]struct {
		l Linear
		d []float32
	}{{l0, d0}, {l1, d1}, {l2, d2}}
	s.mm = matmulTask{act: &s.act}
	tiles := true
	for _, p := range maps {
		if p.l.W != nil && p.l.W.Type == l0.W.Type && p.l.W.Cols == l0.W.Cols {
			s.mm.add(p.l.W, p.d, T, s.m.pool.Size())
			tiles = tiles && p.l.W.Rows4
		}
	}
	s.prepare(x, T, l0.W.Cols, l0.W.Type, tiles)
	s.m.pool.Run(&s.mm, s.mm.tasks)
	for _, p := range maps[1:] {
		if p.l.W != nil && (p.l.W.Type != l0.W.Type || p.l.W.Cols != l0.W.Cols) {
			s.linear(p.d, p.l, x, T) // after the pass: it reuses s.mm
		}
	}
	for _, p := range maps {
		if p.l.W != nil && p.l.B != nil {
			rows := p.l.W.Rows
			for t := 0; t < T; t++ {
				add(p.d[t*rows:(t+1)*rows], p.l.B)
			}
		}
	}
}

// prepare quantizes T rows of n floats to the vec-dot type of weights of
// type wt and prepares them for the matrix kernels, reusing the previous
// result when the same rows are asked for again (Q, K and V share one
// input). tiles: only matrices interleaved by InterleaveRows4 will take
// them (ggml.Act.BeginTiles).
func (s *State) prepare(x []float32, T, n int, wt ggml.Type, tiles bool) {
	if s.actSrc == &x[0] && s.actType == wt && s.actT == T && s.actN == n && (tiles || !s.actTiles) {
		return
	}
	s.beginAct(x, T, n, wt, tiles)
	s.rt = rowsTask{s: s, op: opQuant, T: T, x: x}
	s.eachRow()
	s.actSrc, s.actType, s.actT, s.actN, s.actTiles = &x[0], wt, T, n, tiles
}

// beginAct sizes s.actBuf for T rows of n values quantized for weights of
// type wt and begins s.act over them (prepare's first half).
func (s *State) beginAct(x []float32, T, n int, wt ggml.Type, tiles bool) {
	typ := wt.VecDotType()
	stride := typ.RowSize(n)
	xq := ggml.F32Bytes(x[:T*n])
	if typ != ggml.F32 {
		if len(s.actBuf) < T*stride { // a matrix actRowBytes did not know
			s.actBuf = make([]byte, T*stride)
		}
		xq = s.actBuf[:T*stride]
	}
	if tiles {
		s.act.BeginTiles(wt, n, xq, T)
	} else {
		s.act.Begin(wt, n, xq, T)
	}
}

// spanPrepared begins s.act for x, one decode row of n values that the
// workers compute in parts (the gated activation's spans, the attention's
// heads), as the input of w, when those parts can quantize and prepare it
// as they finish it (ggml.Act.FillSpan): in each worker's cache, where the
// caller would otherwise read every line from the other cores' before the
// product. It reports whether they can; the caller then records x as
// prepared, and prepare finds it so.
func (s *State) spanPrepared(w *Weight, x []float32, n int) bool {
	if w == nil || !w.Rows4 || w.Cols != n || n%32 != 0 {
		return false
	}
	s.beginAct(x, 1, n, w.Type, true)
	s.actSrc = nil // act no longer holds what prepare recorded
	return s.act.Blockwise()
}

// chunkRows picks how many weight rows one task covers: enough tasks for
// load balance, and for batches small enough chunks that a chunk of weights
// stays in cache while every token of the batch passes over it. rowBytes
// is the size of one weight row.
func chunkRows(rows, T, threads, rowBytes int) int {
	if threads == 1 && T == 1 {
		return rows
	}
	// Decode: small tasks (~16 per thread) keep the tail, where one thread
	// waits for the other's last task, short; but not below minTaskBytes of
	// weights, or claiming a task costs as much as running it (the
	// 288-wide matrices of stories15M).
	per := 4
	if T == 1 {
		per = 16
	}
	c := (rows + per*threads - 1) / (per * threads)
	if T == 1 {
		c = max(c, (minTaskBytes+rowBytes-1)/max(rowBytes, 1))
	} else {
		c = min(c, 64)
	}
	c = max(16, (c+15)/16*16)
	return min(c, rows)
}

// minTaskBytes is the least weight data a decode task covers. It was 48
// KiB while every task added to the pool's one shared counter; since a
// claim touches only the claimer's own line (parallel.Pool), 16 KiB.
// TinyLlama at 2 threads never reaches it (its tasks are 80+ rows); at 16
// threads it set the tasks of Q, K and V to 48 rows (~7.5 µs at 6.4 GB/s a
// thread, about 3 a thread, so the tail averaged half a task), 16 now.
// stories15M Q4_0 tg256 at 2 threads, five alternations: median 1963
// against 1879 t/s with 48 KiB (same VM, within its noise).
const minTaskBytes = 16 << 10

// matmulTask multiplies chunks of weight rows by every batch row, for up
// to three matrices of the same input and weight type: task i belongs to
// the last part whose first task is ≤ i.
type matmulTask struct {
	act   *ggml.Act
	parts [3]mmPart
	n     int // parts in use
	tasks int // tasks of all parts
}

type mmPart struct {
	w            *Weight
	dst          []float32 // [T × rows]
	chunk, first int
}

// add appends a matrix with its output to the task.
func (mt *matmulTask) add(w *Weight, dst []float32, T, threads int) {
	c := chunkRows(w.Rows, T, threads, w.Type.RowSize(w.Cols))
	mt.parts[mt.n] = mmPart{w: w, dst: dst[:T*w.Rows], chunk: c, first: mt.tasks}
	mt.n++
	mt.tasks += (w.Rows + c - 1) / c
}

func (mt *matmulTask) Run(i, worker int) {
	p := &mt.parts[0]
	for k := 1; k < mt.n && i >= mt.parts[k].first; k++ {
		p = &mt.parts[k]
	}
	w, rows := p.w, p.w.Rows
	r0 := (i - p.first) * p.chunk
	r1 := min(r0+p.chunk, rows)
	rs := w.Type.RowSize(w.Cols)
	if w.Rows4 { // chunks start on groups of 4 rows (chunkRows: multiples of 16)
		ggml.MatMulActRows4(w.Type, w.Cols, w.Data[r0*rs:r1*rs], r1-r0, mt.act, p.dst[r0:], rows)
		return
	}
	ggml.MatMulAct(w.Type, w.Cols, w.Data[r0*rs:r1*rs], r1-r0, mt.act, p.dst[r0:], rows)
}

func sqrt64(x float64) float64 { return math.Sqrt(x) }
