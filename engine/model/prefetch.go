package model

import (
	"os"
	"strconv"

	"flowchat/engine/parallel"
)

// Prefetching the next matrix pass.
//
// A decode step is a chain of pool passes over the weights (Q/K/V, the
// output projection, gate/up, down, per layer, then the head), with the
// caller's serial work between them (norms, activation quantization,
// RoPE) and each pass's tail, where the first threads done wait for the
// last. Through both, the memory bus idles: at 16 threads on the AMX host,
// TinyLlama Q4_0 generation spent ~15% of a token there, about its whole
// gap to the read probe (docs/PERFORMANCE.md, issue 18, sitting 16). So a
// worker whose own share of a pass is done prefetches into L2 the start of
// the share it will own in the next pass (the same split: chunkRows and
// parallel.Share), and the next pass begins on lines already on their way.
//
// The next pass is known statically: linkPasses chains each pass's first
// weight to the weights of the pass that decode runs after it, in the
// order State.layer runs them.

// pfNextBytes is how much of its next share a worker prefetches
// (FLOWCHAT_PFNEXT, bytes; 0 turns it off).
var pfNextBytes = envInt("FLOWCHAT_PFNEXT", 32<<10)

// maxPrefetchT is the widest batch whose passes prefetch the next one:
// decode and small batched decode steps, which stream the weights; prompt
// batches are bound by arithmetic.
const maxPrefetchT = 16

// tracePasses, when set (tests), sees each matrix pass before it runs.
var tracePasses func(*matmulTask)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// linkPasses sets each matrix pass's next (Weight.next) in the order a
// decoder's step runs them: per layer the attention's input projections
// (QKV, or Q with K and V where they share its type and width, else each
// alone), the output projection, the FFN's input (up, with gate where
// separate and alike), down; then the head, whose next is the first layer
// again (the next token).
func (m *Model) linkPasses() {
	var passes [][]*Weight
	group := func(ls ...Linear) { // one linears call: alike ones share a pass
		var first []*Weight
		var rest [][]*Weight
		for _, l := range ls {
			switch {
			case l.W == nil:
			case first == nil:
				first = []*Weight{l.W}
			case l.W.Type == first[0].Type && l.W.Cols == first[0].Cols:
				first = append(first, l.W)
			default:
				rest = append(rest, []*Weight{l.W})
			}
		}
		if first != nil {
			passes = append(passes, first)
			passes = append(passes, rest...)
		}
	}
	for i := range m.Layers {
		a, f := &m.Layers[i].Attn, &m.Layers[i].FFN
		if a.QKV.W != nil {
			group(a.QKV)
		} else {
			group(a.Q, a.K, a.V)
		}
		group(a.O)
		if f.Gate.W != nil && !f.FusedGate {
			group(f.Up, f.Gate)
		} else {
			group(f.Up)
		}
		group(f.Down)
	}
	group(m.Output)
	for i, p := range passes {
		if len(passes) > 1 {
			p[0].next = passes[(i+1)%len(passes)]
		}
	}
}

// nextShare returns the first bytes (pfNextBytes at most) of the rows
// that worker owns in the pass over next, split as matmulTask splits it
// for T rows of input on threads goroutines; nil when it owns none.
func nextShare(next []*Weight, T, threads, worker int) []byte {
	var nx matmulTask
	for _, w := range next {
		nx.addPart(w, T, threads)
	}
	lo, hi := parallel.Share(nx.tasks, threads, worker)
	if lo >= hi {
		return nil
	}
	p, r0, r1 := nx.span(lo)
	if q, _, e := nx.span(hi - 1); q == p { // else the share runs to p's end, then on into the next part
		r1 = e
	} else {
		r1 = p.w.Rows
	}
	w := p.w
	rs := w.Type.RowSize(w.Cols)
	b0, b1 := r0*rs, min(r1*rs, r0*rs+pfNextBytes, len(w.Data))
	if b0 >= b1 {
		return nil
	}
	return w.Data[b0:b1:b1]
}

