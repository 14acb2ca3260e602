package main

import (
	"fmt"
	"io"
	"sort"
	"time"

	"flowchat/engine"
	"flowchat/engine/sample"
)

// runServingBench measures the scheduler as a server uses it (issue 12's
// serving figures): time to first token of new queries while 8 others
// stream, and the longest pause of those streams; a second chat turn's
// prefill over a 1,000-token history with and without the prefix cache;
// the KV memory of 16 sequences of mixed lengths against contiguous
// caches of the same context.
func runServingBench(mf modelFlags, threads int, w io.Writer) error {
	mf.threads = threads
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Fprintf(w, "model %s (%s), %d threads\n\n", m.Info.Name, m.Info.Quant, threads)
	if err := benchTTFT(m, w); err != nil {
		return err
	}
	if err := benchPrefix(m, w); err != nil {
		return err
	}
	return benchKVMemory(m, w)
}

func greedyQuery(m *engine.Model, n, maxTokens int, seed uint64) engine.Query {
	p := sample.DefaultParams()
	p.Decoding = "greedy"
	ids := randomTokensSeed(m, n, seed)
	return engine.Query{Prompt: ids, Sampling: p, MaxTokens: maxTokens, IgnoreEOG: true}
}

// stepsUntil runs Infer until done is closed.
func stepsUntil(sc *engine.Scheduler, done <-chan struct{}) error {
	for {
		select {
		case <-done:
			return nil
		default:
		}
		if _, err := sc.Infer(); err != nil {
			return err
		}
	}
}

// benchTTFT: 8 streams of 32-token prompts decode; 12 new queries with
// 256-token prompts arrive one after another. For each: time from
// AddQuery to its first token. For the streams: the most steps and the
// longest time between two of their tokens.
func benchTTFT(m *engine.Model, w io.Writer) error {
	sc, err := engine.NewScheduler(m, engine.SchedOptions{MaxSeqs: 9, StepTokens: 512, Ctx: 2048})
	if err != nil {
		return err
	}
	defer sc.Close()
	type stream struct {
		lastStep int64
		last     time.Time
		maxSteps int64
		maxGap   time.Duration
	}
	streams := make([]*stream, 8)
	var hs []*engine.Handle
	for i := range streams {
		st := &stream{}
		streams[i] = st
		q := greedyQuery(m, 32, 100000, uint64(i))
		q.OnToken = func(int32) {
			now, step := time.Now(), sc.Stats().Steps
			if !st.last.IsZero() {
				st.maxSteps = max(st.maxSteps, step-st.lastStep)
				st.maxGap = max(st.maxGap, now.Sub(st.last))
			}
			st.last, st.lastStep = now, step
		}
		h, err := sc.AddQuery(q)
		if err != nil {
			return err
		}
		hs = append(hs, h)
	}
	for range 20 { // every stream decoding
		if _, err := sc.Infer(); err != nil {
			return err
		}
	}
	var ttft []time.Duration
	steps0, t0 := sc.Stats().Steps, time.Now()
	for i := range 12 {
		first := make(chan struct{})
		q := greedyQuery(m, 256, 1, uint64(100+i))
		var once bool
		q.OnToken = func(int32) {
			if !once {
				once = true
				close(first)
			}
		}
		start := time.Now()
		h, err := sc.AddQuery(q)
		if err != nil {
			return err
		}
		if err := stepsUntil(sc, first); err != nil {
			return err
		}
		ttft = append(ttft, time.Since(start))
		h.Wait()
		for range 3 { // decode-only steps between arrivals
			sc.Infer()
		}
	}
	stepTime := time.Since(t0) / time.Duration(max(1, sc.Stats().Steps-steps0))
	for _, h := range hs {
		h.Cancel()
	}
	sc.Infer()
	var maxSteps int64
	var maxGap time.Duration
	for _, st := range streams {
		maxSteps, maxGap = max(maxSteps, st.maxSteps), max(maxGap, st.maxGap)
	}
	sort.Slice(ttft, func(i, j int) bool { return ttft[i] < ttft[j] })
	fmt.Fprintf(w, "time to first token, 256-token prompt, while 8 streams decode (12 queries): min %v, median %v, p90 %v, max %v\n",
		ms(ttft[0]), ms(ttft[len(ttft)/2]), ms(ttft[len(ttft)*9/10]), ms(ttft[len(ttft)-1]))
	fmt.Fprintf(w, "streams: at most %d step(s) between two tokens; longest gap %v (mean step %v)\n\n", maxSteps, ms(maxGap), ms(stepTime))
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// benchPrefix: a chat turn over a 1,000-token history, then the next turn
// (history + reply + 24 new tokens): its prefill with the prefix cache,
// and on a fresh scheduler without it.
func benchPrefix(m *engine.Model, w io.Writer) error {
	first := greedyQuery(m, 1000, 16, 7)
	var reply []int32
	first.OnToken = func(id int32) { reply = append(reply, id) }
	var warm, cold engine.Stats
	for i := range 2 { // 0: after the first turn; 1: a fresh scheduler
		sc, err := engine.NewScheduler(m, engine.SchedOptions{MaxSeqs: 2, Ctx: 2048})
		if err != nil {
			return err
		}
		if i == 0 {
			reply = reply[:0]
			h, _ := sc.AddQuery(first)
			stepsUntil(sc, h.Done())
		}
		next := greedyQuery(m, 0, 1, 0)
		next.Prompt = append(append(append([]int32(nil), first.Prompt...), reply...), randomTokensSeed(m, 24, 8)...)
		h, err := sc.AddQuery(next)
		if err != nil {
			return err
		}
		stepsUntil(sc, h.Done())
		st, _ := h.Wait()
		if i == 0 {
			warm = st
		} else {
			cold = st
		}
		sc.Close()
	}
	fmt.Fprintf(w, "second chat turn (%d-token prompt): prefix cache %v (%d evaluated, %d cached); without it %v (%d evaluated): %.1fx\n\n",
		warm.PromptTokens+warm.CachedTokens, ms(warm.PromptTime), warm.PromptTokens, warm.CachedTokens,
		ms(cold.PromptTime), cold.PromptTokens, cold.PromptTime.Seconds()/warm.PromptTime.Seconds())
	return nil
}

// benchKVMemory: 16 sequences with prompts of 64…2,000 tokens, all
// resident at once; KV memory in use against 16 contiguous caches of the
// same 2,048-token context.
func benchKVMemory(m *engine.Model, w io.Writer) error {
	const ctx = 2048
	sc, err := engine.NewScheduler(m, engine.SchedOptions{MaxSeqs: 16, Ctx: ctx, KVBudget: 17 * ctx * m.KVBytesPerToken()})
	if err != nil {
		return err
	}
	defer sc.Close()
	total := 0
	var hs []*engine.Handle
	for i := range 16 {
		n := 64 + (i*i*7919)%1937
		total += n
		h, err := sc.AddQuery(greedyQuery(m, n, 4, uint64(200+i)))
		if err != nil {
			return err
		}
		hs = append(hs, h)
	}
	peak := 0
	for {
		n, err := sc.Infer()
		if err != nil {
			return err
		}
		peak = max(peak, sc.Stats().BlocksInUse)
		if n == 0 {
			break
		}
	}
	st := sc.Stats()
	paged := int64(peak) * st.BlockBytes
	contiguous := 16 * int64(ctx) * st.BlockBytes / int64(sc.Pool().BlockTokens())
	fmt.Fprintf(w, "KV memory, 16 sequences of %d tokens in all (64…2,000 each): paged %s at peak (%d blocks of %d tokens), contiguous %s (16 × %d): %.1f%%\n",
		total+16*4, humanBytes(paged), peak, sc.Pool().BlockTokens(), humanBytes(contiguous), ctx, 100*float64(paged)/float64(contiguous))
	return nil
}
