package engine

import (
	"errors"
	"fmt"
	"time"

	"flowchat/engine/model"
)

// Infer runs one step: it takes new queries, drops cancelled ones, admits
// waiting ones while the KV cache has room, and runs one forward pass
// over the next token of every decoding query and prompt chunks of the
// others within StepTokens rows. It returns the number of queries still
// waiting or running.
func (s *Scheduler) Infer() (int, error) {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	s.takePending()
	s.reap()
	s.admit()
	s.plan()
	if len(s.segs) == 0 {
		return s.count(), nil
	}
	t0 := time.Now()
	lg, err := s.batch.Forward(s.segs)
	s.stepTime = time.Since(t0)
	if err != nil {
		for _, q := range s.owners {
			s.finish(q, "error", err)
		}
		s.compact()
		return s.count(), err
	}
	s.dispatch(lg)
	s.compact()
	s.statsMu.Lock()
	s.stats.Steps++
	s.statsMu.Unlock()
	return s.count(), nil
}

func (s *Scheduler) takePending() {
	s.mu.Lock()
	s.waiting = append(s.waiting, s.pending...)
	s.pending = s.pending[:0]
	s.mu.Unlock()
}

// count is the number of queries in the scheduler (stepMu held).
func (s *Scheduler) count() int {
	s.mu.Lock()
	n := len(s.pending)
	s.mu.Unlock()
	n += len(s.waiting) + len(s.running)
	s.statsMu.Lock()
	s.stats.Running, s.stats.Waiting = len(s.running), n-len(s.running)
	s.stats.BlocksInUse, s.stats.Blocks = s.pool.InUse(), s.pool.Blocks()
	s.stats.BlockBytes, s.stats.PrefixHitBlocks = s.pool.BlockBytes(), s.pool.PrefixHits()
	s.statsMu.Unlock()
	return n
}

// reap ends cancelled queries, freeing their blocks at once.
func (s *Scheduler) reap() {
	for _, list := range [][]*query{s.waiting, s.running} {
		for _, q := range list {
			if q.h.cancelled.Load() {
				s.finish(q, "cancelled", nil)
			}
		}
	}
	s.compact()
}

// admit moves waiting queries to running, first come first served, while
// there are seats and the pool holds the part of the prompt that is not in
// the prefix cache: its blocks are reserved at once, so a prompt never
// stalls halfway (decode rows take blocks as they go, preempting when
// none is left).
func (s *Scheduler) admit() {
	for len(s.waiting) > 0 && len(s.running) < s.opt.MaxSeqs {
		q := s.waiting[0]
		seq := s.pool.NewSeq()
		cached := seq.AdoptPrefix(q.feed)
		if err := seq.Reserve(len(q.feed) - cached); err != nil {
			seq.Release()
			if !q.waited && q.OnWait != nil {
				q.OnWait(fmt.Sprintf("waiting for KV cache (%d free blocks of %d tokens): %v", s.pool.Available(), s.pool.BlockTokens(), err))
			}
			q.waited = true
			return
		}
		q.seq, q.fed, q.waited = seq, cached, false
		q.tokens = append(q.tokens[:0], q.feed[:cached]...)
		if !q.resume {
			q.st.CachedTokens = cached
		}
		if !q.accepted {
			for _, t := range q.Prompt {
				q.sm.Accept(t)
			}
			q.accepted = true
		}
		s.waiting = s.waiting[1:]
		s.running = append(s.running, q)
	}
}

// plan fills s.segs: decode rows first (a running stream is never held
// back by a prompt), then prompt chunks in admission order within the
// step's row budget.
func (s *Scheduler) plan() {
	s.segs, s.owners = s.segs[:0], s.owners[:0]
	rows := 0
	for i := 0; i < len(s.running); i++ {
		q := s.running[i]
		if q.done() || q.fed < len(q.feed) || q.next < 0 || rows == s.opt.StepTokens {
			continue
		}
		if q.spec != nil {
			toks := s.speculate(q, s.opt.StepTokens-rows)
			if toks == nil {
				continue
			}
			s.add(q, model.Segment{Seq: q.seq, Tokens: toks, Logits: model.LogitsAll})
			rows += len(toks)
			continue
		}
		if !s.room(q) {
			continue
		}
		q.one[0] = q.next
		s.add(q, model.Segment{Seq: q.seq, Tokens: q.one[:], Logits: model.LogitsLast})
		rows++
	}
	for _, q := range s.running {
		if q.done() || q.fed == len(q.feed) || rows == s.opt.StepTokens {
			continue
		}
		n := min(len(q.feed)-q.fed, s.opt.StepTokens-rows)
		if n = s.fit(q, n); n == 0 {
			continue
		}
		want := model.LogitsNone
		if q.fed+n == len(q.feed) && !q.resume {
			want = model.LogitsLast
		}
		s.add(q, model.Segment{Seq: q.seq, Tokens: q.feed[q.fed : q.fed+n], Logits: want, Prompt: true})
		rows += n
	}
	s.compact()
}

func (s *Scheduler) add(q *query, g model.Segment) {
	if q.started.IsZero() {
		q.started = time.Now()
	}
	s.segs = append(s.segs, g)
	s.owners = append(s.owners, q)
}

// room reserves a block position for q's next token, preempting the most
// recently admitted other query while the pool has no block for it.
func (s *Scheduler) room(q *query) bool {
	for {
		err := q.seq.Reserve(1)
		if err == nil {
			return true
		}
		if !errors.Is(err, model.ErrNoKVBlocks) || !s.preemptOther(q) {
			s.finish(q, "error", err)
			return false
		}
	}
}

// fit reserves room for up to n prompt tokens of q and returns how many
// it got (0 when the pool has no block for even one).
func (s *Scheduler) fit(q *query, n int) int {
	for ; n > 0; n = min(n-1, s.pool.Available()*s.pool.BlockTokens()) {
		if q.seq.Reserve(n) == nil {
			return n
		}
	}
	return 0
}

// preemptOther sends the most recently admitted running query other than
// q back to the head of the queue, releasing its blocks; it will be
// recomputed from its tokens. It reports false when there is none.
func (s *Scheduler) preemptOther(q *query) bool {
	for i := len(s.running) - 1; i >= 0; i-- {
		v := s.running[i]
		if v == q || v.done() {
			continue
		}
		for j, o := range s.owners { // it may already have rows in this step
			if o == v {
				s.owners[j] = nil
			}
		}
		v.seq.Release()
		v.seq = nil
		if v.next >= 0 { // decoding: recompute the cache, then decode v.next
			v.feed, v.resume = append([]int32(nil), v.tokens...), true
		} // else still in its prompt: evaluate it again from the start
		v.fed, v.tokens = 0, v.tokens[:0]
		s.running = append(s.running[:i], s.running[i+1:]...)
		s.waiting = append([]*query{v}, s.waiting...)
		if v.OnWait != nil {
			v.OnWait("preempted: the KV cache is full; it resumes when blocks free up")
		}
		s.statsMu.Lock()
		s.stats.Preemptions++
		s.statsMu.Unlock()
		return true
	}
	return false
}

// compact drops finished queries from running and segments of preempted
// or finished ones.
func (s *Scheduler) compact() {
	kept := s.running[:0]
	for _, q := range s.running {
		if !q.done() {
			kept = append(kept, q)
		}
	}
	clear(s.running[len(kept):])
	s.running = kept
	segs, owners := s.segs[:0], s.owners[:0]
	for i, q := range s.owners {
		if q != nil && !q.done() {
			segs, owners = append(segs, s.segs[i]), append(owners, q)
		}
	}
	s.segs, s.owners = segs, owners
	waiting := s.waiting[:0]
	for _, q := range s.waiting {
		if !q.done() {
			waiting = append(waiting, q)
		}
	}
	s.waiting = waiting
}

// dispatch books the evaluated tokens and draws the next token of every
// segment that asked for logits.
func (s *Scheduler) dispatch(lg []float32) {
	V, row := s.m.Net.NVocab, 0
	var prompt, gen int64
	for i, g := range s.segs {
		q := s.owners[i]
		q.tokens = append(q.tokens, g.Tokens...)
		if g.Prompt {
			q.fed += len(g.Tokens)
			if !q.resume {
				prompt += int64(len(g.Tokens))
				q.st.PromptTokens += len(g.Tokens)
				if q.OnPrefill != nil {
					q.OnPrefill(q.fed-q.st.CachedTokens, len(q.feed)-q.st.CachedTokens)
				}
			} else if q.fed == len(q.feed) {
				q.resume = false // recomputed: decode q.next as before
			}
		} else {
			q.next = -1
		}
		if q.spec != nil && !g.Prompt {
			gen += s.verify(q, lg[row*V:(row+len(g.Tokens))*V])
			row += len(g.Tokens)
			if q.seq != nil {
				q.seq.Register(q.tokens)
			}
			continue
		}
		q.seq.Register(q.tokens)
		if g.Logits == model.LogitsNone {
			continue
		}
		if s.draw(q, lg[row*V:(row+1)*V]) {
			gen++
		}
		row++
	}
	s.statsMu.Lock()
	s.stats.PromptTokens += prompt
	s.stats.GenTokens += gen
	s.statsMu.Unlock()
}
