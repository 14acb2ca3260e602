package model

import "flowchat/engine/ggml"

// A decode step's feed-forward block at more than one thread took three
// passes of the pool: gate and up, the gated activation in spans (each
// preparing its part of the down projection's input), down. gluFused
// makes the first two one: each task multiplies the same chunk of rows of
// up and of gate, applies the activation to that chunk and prepares it
// for down, so a token hands work to the pool once less per layer (22
// times for TinyLlama) and pays one tail less; at 16 threads each pass
// costs the caller a hand-off and the threads a wait for the slowest.
// The products, the activation and the preparation are the same calls on
// the same values as the three-pass path, so the bits are the same
// (TestSpanPrepared).

// gluFusable reports whether a decode step's FFN f can run as one pass:
// the activation split over the pool (spanSplit), and gate and up two
// matrices of one type and shape without biases.
func (s *State) gluFusable(f *FFN) bool {
	g, u := f.Gate.W, f.Up.W
	return s.spanSplit(f) && g != nil && !f.FusedGate && u != nil &&
		g.Type == u.Type && g.Cols == u.Cols && g.Rows == f.width() && u.Rows == f.width() &&
		g.Rows4 == u.Rows4 && f.Gate.B == nil && f.Up.B == nil
}

// gluFused computes the gated activation of the one row xn into h (up
// into up) in one pass of the pool, with the down projection's input
// prepared in s.act where the spans can do it (spanPrepared).
func (s *State) gluFused(f *FFN, xn, up, h []float32) {
	w, nff := f.Up.W, f.width()
	n := w.Cols
	// The input goes to an Act of its own: s.act receives down's while
	// the pass runs. The same calls as prepare's for one row.
	xq := ggml.F32Bytes(xn[:n])
	if typ := w.Type.VecDotType(); typ != ggml.F32 {
		size := typ.RowSize(n)
		if len(s.actInBuf) < size {
			s.actInBuf = make([]byte, size)
		}
		xq = s.actInBuf[:size]
	}
	if w.Rows4 {
		s.actIn.BeginTiles(w.Type, n, xq, 1)
	} else {
		s.actIn.Begin(w.Type, n, xq, 1)
	}
	s.actIn.FillFrom(xn[:n], 0, 1)
	prep := s.spanPrepared(f.Down.W, h, nff)
	// A task covers a chunk of each matrix: half matmulTask's chunk, in
	// whole blocks of 32 (FillSpan; also whole groups of 16 rows).
	c := chunkRows(nff, 1, s.m.pool.Size(), w.Type.RowSize(n))
	c = max(32, (c/2+31)/32*32)
	s.gt = gluTask{s: s, f: f, up: up, h: h, chunk: c, prep: prep}
	s.m.pool.Run(&s.gt, (nff+c-1)/c)
	s.gt = gluTask{}
	if prep {
		s.actSrc, s.actType, s.actT, s.actN, s.actTiles = &h[0], f.Down.W.Type, 1, nff, true
		s.spanPreps++
	}
	s.gluPasses++
}

// gluTask is gluFused's pass: task i takes rows [i·chunk, (i+1)·chunk) of
// up and gate.
type gluTask struct {
	s     *State
	f     *FFN
	up, h []float32
	chunk int
	prep  bool
}

func (g *gluTask) Run(i, worker int) {
	nff := g.f.width()
	r0 := i * g.chunk
	r1 := min(r0+g.chunk, nff)
	mulRows(g.f.Up.W, r0, r1, &g.s.actIn, g.up, nff)
	mulRows(g.f.Gate.W, r0, r1, &g.s.actIn, g.h, nff)
	g.s.gluSpan(g.f, g.up, g.h, r0, r1)
	if g.prep {
		g.s.act.FillSpan(g.h[r0:r1], 0, r0, r1)
	}
}

// mulRows computes rows [r0, r1) of w times the one column of a into
// dst[r0:r1] (matmulTask's call for a chunk).
func mulRows(w *Weight, r0, r1 int, a *ggml.Act, dst []float32, ldd int) {
	rs := w.Type.RowSize(w.Cols)
	if w.Rows4 {
		ggml.MatMulActRows4(w.Type, w.Cols, w.Data[r0*rs:r1*rs], r1-r0, a, dst[r0:], ldd)
		return
	}
	ggml.MatMulAct(w.Type, w.Cols, w.Data[r0*rs:r1*rs], r1-r0, a, dst[r0:], ldd)
}
