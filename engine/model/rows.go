package model

import "flowchat/engine/ggml"

// Per-row steps of the forward pass (norms, the gated activation,
// activation quantization) split over the worker pool for long prompts:
// at 2 threads a step left on one thread costs twice its share (Amdahl),
// and for a 512-token prompt these steps are several percent of the work.
// Decode and short batches run them inline.

// minParallelRows is the batch below which per-row steps stay inline;
// minParallelSpan the FFN width from which decode splits its one row.
const (
	minParallelRows = 8
	minParallelSpan = 1024
)

type rowOp uint8

const (
	opNorm  rowOp = iota // dst = norm(src) per row of d
	opGLU                // h = act(gate)·up per row (FFN)
	opQuant              // quantize rows of x and prepare them in s.act
)

// rowsTask is one per-row step over rows [0, T), per rows per index.
type rowsTask struct {
	s      *State
	op     rowOp
	T, per int
	span   bool // opGLU of one row: index i is elements [i·per, (i+1)·per)

	norm     *Norm // opNorm
	dst, src []float32
	d        int

	ffn   *FFN // opGLU
	up, h []float32
	prep  bool // opGLU with span: each span also prepares s.act (spanPrepared)

	x []float32 // opQuant: the rows prepare was given, into s.actBuf
}

func (r *rowsTask) Run(i, worker int) {
	if r.span {
		i0, i1 := i*r.per, min((i+1)*r.per, r.ffn.width())
		r.s.gluSpan(r.ffn, r.up, r.h, i0, i1)
		if r.prep {
			r.s.act.FillSpan(r.h[i0:i1], 0, i0, i1)
		}
		return
	}
	t0 := i * r.per
	t1 := min(t0+r.per, r.T)
	switch r.op {
	case opNorm:
		for t := t0; t < t1; t++ {
			r.norm.Forward(r.dst[t*r.d:(t+1)*r.d], r.src[t*r.d:(t+1)*r.d])
		}
	case opGLU:
		r.s.gluRows(r.ffn, r.up, r.h, t0, t1)
	case opQuant:
		r.s.act.FillFrom(r.x, t0, t1) // quantizes into s.actBuf (prepare's Begin), then prepares
	}
}

// eachRow runs s.rt over its T rows: inline for short batches or one
// thread, else in ranges over the pool.
func (s *State) eachRow() {
	r, threads := &s.rt, s.m.pool.Size()
	if r.op == opGLU && r.T == 1 && s.spanSplit(r.ffn) {
		// Decode: split the one row (SiLU's exp is ~10 ns a value), in
		// whole blocks of 32 where the spans prepare the next product's
		// input.
		nff := r.ffn.width()
		r.span, r.per = true, (nff+2*threads-1)/(2*threads)
		if r.prep {
			r.per = (r.per + 31) / 32 * 32
		}
		s.m.pool.Run(r, (nff+r.per-1)/r.per)
		return
	}
	r.prep = false
	if r.T < minParallelRows || threads == 1 {
		r.per = r.T
		r.Run(0, 0)
		return
	}
	r.per = max(1, (r.T+4*threads-1)/(4*threads))
	s.m.pool.Run(r, (r.T+r.per-1)/r.per)
}

// spanSplit reports whether a decode step's gated activation of f runs
// split in spans over the pool.
func (s *State) spanSplit(f *FFN) bool {
	return s.m.pool.Size() > 1 && f.width() >= minParallelSpan
}

// normRows applies n to the T rows of d in src, into dst; a nil norm
// copies.
func (s *State) normRows(n *Norm, dst, src []float32, d int) {
	if n == nil {
		copy(dst, src)
		return
	}
	s.rt = rowsTask{s: s, op: opNorm, T: len(src) / d, norm: n, dst: dst, src: src, d: d}
	s.eachRow()
}

// gluSpan computes elements [i0, i1) of the gated activation of the one
// row of a decode step (see gluRows).
func (s *State) gluSpan(f *FFN, up, h []float32, i0, i1 int) {
	nff := f.width()
	row := h[i0:i1]
	switch {
	case s.m.silu && f.FusedGate:
		ggml.SiLUMul(row, up[i0:i1], up[nff+i0:nff+i1])
	case s.m.silu && f.Gate.W != nil:
		ggml.SiLUMul(row, row, up[i0:i1])
	case f.FusedGate:
		copy(row, up[i0:i1])
		s.m.activateRow(row)
		mulInto(row, up[nff+i0:nff+i1])
	case f.Gate.W != nil:
		s.m.activateRow(row)
		mulInto(row, up[i0:i1])
	default:
		copy(row, up[i0:i1])
		s.m.activateRow(row)
	}
}

// gluRows computes the gated activation of FFN f for rows [t0, t1): up
// holds the up projection (for a fused gate, [gate; up] per row), h the
// gate projection on entry and the result on exit. SiLU goes through the
// fused ggml.SiLUMul (the scalar path's results up to rare 1-ulp
// double-rounding cases).
func (s *State) gluRows(f *FFN, up, h []float32, t0, t1 int) {
	nff := f.width()
	for t := t0; t < t1; t++ {
		row := h[t*nff : (t+1)*nff]
		switch {
		case s.m.silu && f.FusedGate:
			ggml.SiLUMul(row, up[t*2*nff:t*2*nff+nff], up[t*2*nff+nff:(t+1)*2*nff])
		case s.m.silu && f.Gate.W != nil:
			ggml.SiLUMul(row, row, up[t*nff:(t+1)*nff])
		case f.FusedGate:
			copy(row, up[t*2*nff:t*2*nff+nff])
			s.m.activateRow(row)
			mulInto(row, up[t*2*nff+nff:(t+1)*2*nff])
		case f.Gate.W != nil:
			s.m.activateRow(row)
			mulInto(row, up[t*nff:(t+1)*nff])
		default:
			copy(row, up[t*nff:(t+1)*nff])
			s.m.activateRow(row)
		}
	}
}
