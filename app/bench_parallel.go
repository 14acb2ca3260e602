package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"flowchat/engine"
	"flowchat/engine/model"
)

// Parallel throughput, as llama.cpp's llama-batched-bench measures it:
// P sequences, each with a prompt of n_prompt tokens (evaluated together,
// in batches of up to 512 rows) and then n_gen decode steps in lockstep,
// one batch of P rows per step, on the engine's paged KV cache. tps is
// aggregate tokens/s over all sequences (P·n / time). Tokens are random
// ids, fed without sampling, so the figure is the engine's.

// benchResult is one test, with the fields of llama-bench's -o json that
// apply and the parallel count.
type benchResult struct {
	Model     string    `json:"model_filename"`
	Type      string    `json:"model_type"`
	Size      int64     `json:"model_size"`
	Params    int64     `json:"model_n_params"`
	Backend   string    `json:"backends"`
	Threads   int       `json:"n_threads"`
	Test      string    `json:"test"`
	NPrompt   int       `json:"n_prompt"`
	NGen      int       `json:"n_gen"`
	Parallel  int       `json:"parallel"`
	TPS       float64   `json:"tps"`
	AvgTS     float64   `json:"avg_ts"`
	StddevTS  float64   `json:"stddev_ts"`
	SamplesTS []float64 `json:"samples_ts"`
	KVType    string    `json:"type_kv"`
	Date      string    `json:"test_time"`
}

func newBenchResult(m *engine.Model, threads int, test string, np, ng, par int, ts []float64, kv string) benchResult {
	med, sd := medianStd(ts)
	var sum float64
	for _, t := range ts {
		sum += t
	}
	return benchResult{Model: filepath.Base(m.Path), Type: m.Info.Quant, Size: m.Info.FileSize, Params: m.Info.Params,
		Backend: "CPU", Threads: threads, Test: test, NPrompt: np, NGen: ng, Parallel: par, TPS: med,
		AvgTS: sum / float64(len(ts)), StddevTS: sd, SamplesTS: ts, KVType: kv, Date: time.Now().UTC().Format(time.RFC3339)}
}

// benchParallel returns a run of P sequences: the prompts (np tokens each,
// when np > 0) and then ng lockstep decode steps (when ng > 0). It
// measures the prompts when ng is 0, else the decode steps.
func benchParallel(m *engine.Model, par, np, ng int) (func() float64, error) {
	const block = 16
	ctx := np + ng + 1
	blocks := par * ((ctx+block-1)/block + 1)
	pool, err := m.Net.NewKVPool(model.PoolOptions{Blocks: blocks, BlockTokens: block, Ctx: ctx, KVType: m.KVType()})
	if err != nil {
		return nil, err
	}
	b := pool.NewBatch(max(512, par))
	seqs := make([]*model.State, par)
	for i := range seqs {
		seqs[i] = pool.NewSeq()
	}
	prompt, gen := randomTokens(m, np), randomTokens(m, ng)
	segs := make([]model.Segment, 0, par)
	step := func(tok []int32) error {
		segs = segs[:0]
		for _, s := range seqs {
			if err := s.Reserve(len(tok)); err != nil {
				return err
			}
			segs = append(segs, model.Segment{Seq: s, Tokens: tok, Logits: model.LogitsLast, Prompt: len(tok) > 1})
		}
		_, err := b.Forward(segs)
		return err
	}
	return func() float64 {
		for _, s := range seqs {
			s.Release()
		}
		runtime.GC()
		t0 := time.Now()
		if err := prefillAll(b, seqs, prompt); err != nil {
			return 0
		}
		if ng == 0 {
			return float64(par*np) / time.Since(t0).Seconds()
		}
		t0 = time.Now()
		for i := range gen {
			if step(gen[i:i+1]) != nil {
				return 0
			}
		}
		return float64(par*ng) / time.Since(t0).Seconds()
	}, nil
}

// prefillAll evaluates prompt on every sequence in batches of up to
// MaxRows rows (whole prompts side by side, long ones in chunks).
func prefillAll(b *model.Batch, seqs []*model.State, prompt []int32) error {
	if len(prompt) == 0 {
		return nil
	}
	var segs []model.Segment
	rows := 0
	flush := func() error {
		_, err := b.Forward(segs)
		segs, rows = segs[:0], 0
		return err
	}
	for _, s := range seqs {
		for done := 0; done < len(prompt); {
			n := min(len(prompt)-done, b.MaxRows()-rows)
			if err := s.Reserve(n); err != nil {
				return err
			}
			segs = append(segs, model.Segment{Seq: s, Tokens: prompt[done : done+n], Logits: model.LogitsLast, Prompt: true})
			rows, done = rows+n, done+n
			if rows == b.MaxRows() {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if rows > 0 {
		return flush()
	}
	return nil
}

// runParallelBench measures every (threads, parallel, pp/tg) test and
// prints a table or llama-bench style JSON.
func runParallelBench(mf modelFlags, ths, pars, pps, tgs []int, reps int, format string, stdout io.Writer) error {
	var results []benchResult
	for _, th := range ths {
		mf.threads = th
		m, err := mf.load()
		if err != nil {
			return err
		}
		for _, par := range pars {
			for _, t := range parallelTests(pps, tgs) {
				run, err := benchParallel(m, par, t[0], t[1])
				if err != nil {
					m.Close()
					return err
				}
				name := fmt.Sprintf("pp%d", t[0])
				if t[1] > 0 {
					name = fmt.Sprintf("tg%d", t[1])
					if t[0] > 0 {
						name = fmt.Sprintf("pp%d+tg%d", t[0], t[1])
					}
				}
				r := newBenchResult(m, th, name, t[0], t[1], par, benchRepeat(reps, run), mf.kvType)
				results = append(results, r)
				if format != "json" {
					printParallelRow(stdout, r, len(results) == 1)
				}
			}
		}
		m.Close()
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return nil
}

// parallelTests pairs the lengths: each prompt length alone, each
// generation length after the first prompt length (0: none).
func parallelTests(pps, tgs []int) [][2]int {
	var out [][2]int
	for _, p := range pps {
		if p > 0 {
			out = append(out, [2]int{p, 0})
		}
	}
	for _, g := range tgs {
		if g > 0 {
			out = append(out, [2]int{0, g})
		}
	}
	return out
}

func printParallelRow(w io.Writer, r benchResult, header bool) {
	if header {
		fmt.Fprintln(w, "| model | threads | parallel | test | aggregate t/s (median) | ± stdev | per sequence t/s |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	}
	fmt.Fprintf(w, "| %s %s | %d | %d | %s | %.2f | %.2f | %.2f |\n", strings.TrimSuffix(r.Model, ".gguf"), r.Type,
		r.Threads, r.Parallel, r.Test, r.TPS, r.StddevTS, r.TPS/float64(r.Parallel))
}
