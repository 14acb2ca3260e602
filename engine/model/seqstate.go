package model

import (
	"fmt"

	"flowchat/engine/ggml"
)

// seqState is a State's encoder-decoder part. A sequence is the encoder
// input followed by the decoder tokens generated after the decoder start
// token; the first Forward after NewState, Reset or Truncate takes
// everything kept plus its tokens as a new encoder input (the encoder is
// bidirectional, so any change to it means encoding again) and returns the
// logits of the decoder's first step; later Forwards feed decoder tokens.
type seqState struct {
	seq     []int32 // encoder input, then decoder tokens (start token excluded)
	nEnc    int
	encode  bool        // the next Forward is a new encoder input
	encOut  []float32   // [nEnc × d]
	crossKV [][]float32 // per decoder layer: K rows then V rows of the encoder output
	selfK   [][]float32 // per decoder layer [nCtx+1 × kvDim]
	selfV   [][]float32
	nDec    int    // decoder rows in the self cache (start token included)
	lin     *State // matmul scratch (activation buffer, pool)
	scores  []float32
}

// seqChunk bounds the rows of one matrix product (activation buffer size).
const seqChunk = 64

func newSeqState(m *Model, nCtx int) *seqState {
	c := m.Config
	ss := &seqState{encode: true, scores: make([]float32, nCtx+1)}
	maxCols := max(c.NEmbd, c.NHead*c.HeadDimV)
	for _, l := range append(append([]seqLayer(nil), m.seq.enc...), m.seq.dec...) {
		maxCols = max(maxCols, l.FFN.width())
	}
	ss.lin = &State{m: m, actBuf: make([]byte, seqChunk*maxActRowBytes(maxCols))}
	for range m.seq.dec {
		ss.selfK = append(ss.selfK, make([]float32, (nCtx+1)*c.kvDim()))
		ss.selfV = append(ss.selfV, make([]float32, (nCtx+1)*c.vDim()))
	}
	ss.crossKV = make([][]float32, len(m.seq.dec))
	return ss
}

// linear computes dst = lin(x) for T rows in chunks.
func (ss *seqState) linear(dst []float32, l Linear, x []float32, T int) {
	in, out := l.W.Cols, l.W.Rows
	for t := 0; t < T; t += seqChunk {
		n := min(seqChunk, T-t)
		ss.lin.actSrc = nil // x's contents change between calls
		ss.lin.linear(dst[t*out:(t+n)*out], l, x[t*in:(t+n)*in], n)
	}
}

// seqForward is State.Forward for encoder-decoder networks.
func (s *State) seqForward(tokens []int32, all bool) ([]float32, error) {
	ss, m := s.sq, s.m
	for _, t := range tokens {
		if t < 0 || int(t) >= m.NVocab {
			return nil, errTokenRange(t, m.NVocab)
		}
	}
	if all && !ss.encode && len(tokens) > 1 {
		return nil, errSeqAll
	}
	if ss.encode {
		if len(ss.seq)+len(tokens) > s.nCtx {
			return nil, ErrContextFull
		}
		ss.seq = append(ss.seq[:s.pos], tokens...)
		ss.runEncoder(m, ss.seq)
		ss.nEnc, ss.nDec, ss.encode = len(ss.seq), 0, false
		s.pos = len(ss.seq)
		return ss.decodeStep(m, m.DecoderStart), nil
	}
	if ss.nDec+len(tokens) > s.nCtx {
		return nil, ErrContextFull
	}
	var logits []float32
	for _, t := range tokens {
		ss.seq = append(ss.seq[:s.pos], t)
		s.pos++
		logits = ss.decodeStep(m, t)
	}
	return logits, nil
}

// seqTruncate keeps the first n tokens; the next Forward encodes again.
func (s *State) seqTruncate(n int) {
	s.pos = max(0, min(n, s.pos))
	s.sq.seq = s.sq.seq[:s.pos]
	s.sq.encode = true
}

// embedRow writes token tok's input row at position pos.
func (ss *seqState) embedRow(m *Model, dst []float32, tok int32, pos int) {
	ggml.DequantizeRow(m.TokEmbd.Type, m.TokEmbd.Row(int(tok)), dst)
	if m.embdScale != 1 {
		for i := range dst {
			dst[i] *= m.embdScale
		}
	}
	if m.seq.posEmbd != nil {
		pe := make([]float32, len(dst))
		m.seq.posEmbd(pe, pos)
		add(dst, pe)
	}
}

func (ss *seqState) runEncoder(m *Model, tokens []int32) {
	T, d, c := len(tokens), m.NEmbd, m.Config
	x := make([]float32, T*d)
	for t, tok := range tokens {
		ss.embedRow(m, x[t*d:(t+1)*d], tok, t)
	}
	h := make([]float32, T*d)
	sq := m.seq
	for _, l := range sq.enc {
		sq.blockIn(l.Self.Norm, h, x, d)
		k, v := make([]float32, T*c.kvDim()), make([]float32, T*c.vDim())
		ss.linear(k, l.Self.K, h, T)
		ss.linear(v, l.Self.V, h, T)
		ss.attention(m, x, h, T, &l.Self, k, v, T, 0, sq.encRel, true)
		sq.blockOut(l.Self.Norm, x, d)
		sq.blockIn(l.FFNNorm, h, x, d)
		ss.ffnAdd(m, x, h, T, &l.FFN)
		sq.blockOut(l.FFNNorm, x, d)
	}
	normRows(m.seq.encNorm, x, x, d)
	ss.encOut = x
	for i, l := range m.seq.dec {
		kv := make([]float32, T*(c.kvDim()+c.vDim()))
		ss.linear(kv[:T*c.kvDim()], l.Cross.K, x, T)
		ss.linear(kv[T*c.kvDim():], l.Cross.V, x, T)
		ss.crossKV[i] = kv
	}
}

// decodeStep runs one decoder token at decoder position nDec and returns
// the logits.
func (ss *seqState) decodeStep(m *Model, tok int32) []float32 {
	d, c, p := m.NEmbd, m.Config, ss.nDec
	x, h := make([]float32, d), make([]float32, d)
	ss.embedRow(m, x, tok, p)
	sq := m.seq
	for i, l := range sq.dec {
		sq.blockIn(l.Self.Norm, h, x, d)
		ss.linear(ss.selfK[i][p*c.kvDim():(p+1)*c.kvDim()], l.Self.K, h, 1)
		ss.linear(ss.selfV[i][p*c.vDim():(p+1)*c.vDim()], l.Self.V, h, 1)
		ss.attention(m, x, h, 1, &l.Self, ss.selfK[i], ss.selfV[i], p+1, p, sq.decRel, false)
		sq.blockOut(l.Self.Norm, x, d)
		sq.blockIn(l.Cross.Norm, h, x, d)
		kv := ss.crossKV[i]
		ss.attention(m, x, h, 1, &l.Cross, kv[:ss.nEnc*c.kvDim()], kv[ss.nEnc*c.kvDim():], ss.nEnc, -1, nil, true)
		sq.blockOut(l.Cross.Norm, x, d)
		sq.blockIn(l.FFNNorm, h, x, d)
		ss.ffnAdd(m, x, h, 1, &l.FFN)
		sq.blockOut(l.FFNNorm, x, d)
	}
	ss.nDec++
	normRows(m.seq.decNorm, x, x, d)
	if m.seq.outScale != 1 {
		for i := range x {
			x[i] *= m.seq.outScale
		}
	}
	logits := make([]float32, m.NVocab)
	ss.linear(logits, m.Output, x, 1)
	return logits
}

// blockIn writes a sub-block's input rows into h: norm(x) before the
// block in pre-norm networks, x itself in post-norm ones.
func (sq *seq2seq) blockIn(n *Norm, h, x []float32, d int) {
	if sq.postNorm {
		copy(h, x)
		return
	}
	normRows(n, h, x, d)
}

// blockOut normalizes the residual sum x in place after a sub-block of a
// post-norm network (LN(x + block(x))); pre-norm networks leave it.
func (sq *seq2seq) blockOut(n *Norm, x []float32, d int) {
	if sq.postNorm {
		normRows(n, x, x, d)
	}
}

// attention adds a.O(attend(a.Q(h), k, v)) to x for T query rows at
// positions qPos0+t (qPos0 < 0: cross attention, no positions) over n
// keys; rel is the relative position bias table, bidirectional or causal.
func (ss *seqState) attention(m *Model, x, h []float32, T int, a *seqAttn, k, v []float32, n, qPos0 int, rel *Weight, bidir bool) {
	c := m.Config
	q := make([]float32, T*c.qDim())
	ss.linear(q, a.Q, h, T)
	out := make([]float32, T*c.NHead*c.HeadDimV)
	var bias []float32
	if rel != nil {
		bias = rel.Floats() // [buckets × n_head]
	}
	maxDist := c.RelMaxDistance
	if maxDist == 0 {
		maxDist = 128
	}
	group := c.NHead / c.NHeadKV
	for t := 0; t < T; t++ {
		qp := qPos0 + t
		if qPos0 < 0 {
			qp = 0
		}
		for hd := 0; hd < c.NHead; hd++ {
			kvh := hd / group
			qv := q[(t*c.NHead+hd)*c.HeadDim : (t*c.NHead+hd+1)*c.HeadDim]
			nk := n
			if !bidir {
				nk = qp + 1
			}
			sc := ss.scores[:nk]
			for j := range sc {
				sc[j] = dot(qv, k[j*c.kvDim()+kvh*c.HeadDim:j*c.kvDim()+(kvh+1)*c.HeadDim]) * m.attnScale
				if bias != nil {
					sc[j] += bias[relBucket(j, qp, c.RelBuckets, maxDist, bidir)*c.NHead+hd]
				}
			}
			softmax(sc)
			o := out[(t*c.NHead+hd)*c.HeadDimV : (t*c.NHead+hd+1)*c.HeadDimV]
			for j, w := range sc {
				axpy(o, w, v[j*c.vDim()+kvh*c.HeadDimV:j*c.vDim()+(kvh+1)*c.HeadDimV])
			}
		}
	}
	y := make([]float32, T*c.NEmbd)
	ss.linear(y, a.O, out, T)
	add(x, y)
}

// ffnAdd adds the feed-forward block of the T rows of h to x.
func (ss *seqState) ffnAdd(m *Model, x, h []float32, T int, f *FFN) {
	nff := f.width()
	up := make([]float32, T*f.Up.W.Rows)
	ss.linear(up, f.Up, h, T)
	g := make([]float32, T*nff)
	switch {
	case m.silu && f.FusedGate:
		for t := 0; t < T; t++ {
			ggml.SiLUMul(g[t*nff:(t+1)*nff], up[t*2*nff:t*2*nff+nff], up[t*2*nff+nff:(t+1)*2*nff])
		}
	case m.silu && f.Gate.W != nil:
		ss.linear(g, f.Gate, h, T)
		ggml.SiLUMul(g, g, up)
	case f.FusedGate:
		for t := 0; t < T; t++ {
			for i := 0; i < nff; i++ {
				g[t*nff+i] = m.act(up[t*2*nff+i]) * up[t*2*nff+nff+i]
			}
		}
	case f.Gate.W != nil:
		ss.linear(g, f.Gate, h, T)
		for i := range g {
			g[i] = m.act(g[i]) * up[i]
		}
	default:
		for i := range g {
			g[i] = m.act(up[i])
		}
	}
	y := make([]float32, T*m.NEmbd)
	ss.linear(y, f.Down, g, T)
	add(x, y)
}

func errTokenRange(t int32, n int) error {
	return fmt.Errorf("token id %d outside the vocabulary (%d)", t, n)
}
