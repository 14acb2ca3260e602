package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"flowchat/engine"
	"flowchat/engine/ggml"
)

func init() {
	register(command{name: "bench", summary: "measure prompt processing and generation speed (llama-bench style)", run: cmdBench})
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stdout, stderr)
	model := fs.String("model", "", "model file (GGUF); default: the bundled demo model")
	fs.StringVar(model, "m", "", "shorthand for --model")
	pp := fs.String("p", "512", "prompt lengths to test, comma-separated (0 = skip)")
	tg := fs.String("n", "128", "generation lengths to test, comma-separated (0 = skip)")
	threads := fs.String("t", strconv.Itoa(runtime.NumCPU()), "thread counts to test, comma-separated")
	reps := fs.Int("r", 5, "repetitions per test (the median is reported)")
	useMmap := fs.Bool("mmap", false, "read weights from the file mapping instead of huge pages")
	quantType := fs.String("quant", "", "re-quantize the weights at load (as run --quant)")
	kvType := fs.String("kv-type", "", "KV cache type: F32, F16 or Q8_0 (default: F32 on the CPU, F16 when layers are offloaded to a GPU)")
	suite := fs.String("suite", "", "run a benchmark suite instead of one model: issue6 (its shapes and file types, written by synth), issue18 (three shapes × F16/Q8_0/Q4_0/Q4_K_M/Q6_K, for --llama-bench side by side) or smoke")
	report := fs.String("report", "", "with --suite: replace the marked results section of this markdown file (docs/PERFORMANCE.md)")
	dir := fs.String("dir", "", "with --suite: where the synthetic models are written (default: the XDG cache dir)")
	only := fs.String("only", "", "with --suite: only the files whose \"shape/type\" contains this text (e.g. tinyllama, Q4_0)")
	keep := fs.Bool("keep", false, "with --suite: keep the synthetic models after measuring them")
	llamaBench := fs.String("llama-bench", "", "with --suite: also run this llama-bench (llama.cpp) on the same files, side by side")
	llamaArgs := fs.String("llama-bench-args", "", "with --llama-bench: extra arguments for it (e.g. \"-fa 1\")")
	quietWait := fs.Duration("quiet-wait", 60*time.Second, "with --suite: wait up to this long before each file for the CPUs to be idle")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured runs to this file (go tool pprof)")
	parallel := fs.String("parallel", "", "sequences at once, comma-separated (e.g. 1,2,4,8,16): aggregate throughput of a batch of sequences, as llama-batched-bench")
	format := fs.String("o", "md", "output format: md (a table) or json (llama-bench's -o json objects, with parallel)")
	url := fs.String("url", "", "measure an OpenAI-compatible server at this base URL instead (flowchat serve, llama-server): --clients streams of greedy /v1/completions, -n tokens each")
	clients := fs.Int("clients", 8, "with --url: streams at once")
	requests := fs.Int("requests", 64, "with --url: requests in all")
	apiKey := fs.String("api-key", "", "with --url: the server's API key")
	mf := modelFlags{}
	mf.registerSpec(fs)
	mf.gpu.register(fs)
	specRounds := fs.Int("spec-rounds", 10, "with a drafter flag (--draft ngram, --draft-model, --draft-quant, --draft-layers): rounds of one plain and one speculative generation of -n tokens, alternated, with their ratio")
	specPrompt := fs.String("prompt", specBenchPrompt, "with a drafter flag: the prompt of each generation (a round number is put in front)")
	specTemp := fs.Float64("temp", 0, "with a drafter flag: sampling temperature (0: greedy)")
	vsRead := fs.Bool("vs-read", false, "with -n: put a pass of the memory read probe (make bench's bandwidth figure) before each generation run and after the last, and report each run's weight stream (GB/s) against the mean of the probes on either side of it (Linux; the probe's 1 GiB counts in the peak RSS printed)")
	serving := fs.Bool("serving", false, "measure the scheduler: time to first token while 8 queries stream, the prefix cache on a second chat turn, KV memory of 16 sequences")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	pps, err1 := parseInts(*pp)
	tgs, err2 := parseInts(*tg)
	ths, err3 := parseInts(*threads)
	if err1 != nil || err2 != nil || err3 != nil || *reps < 1 {
		return fmt.Errorf("%w: -p, -n, -t take comma-separated integers; -r ≥ 1", errUsage)
	}
	mf.model, mf.mmap, mf.quant, mf.kvType = *model, *useMmap, *quantType, *kvType
	kv, err := parseKVType(*kvType)
	if err != nil {
		return err
	}
	gpuLayers := mf.gpu.layers != "" && mf.gpu.layers != "0"
	if *kvType == "" && gpuLayers {
		kv = ggml.F16 // the device cache's default, as modelFlags.load sets it
	}
	if gpuLayers && (*suite != "" || *url != "") {
		return fmt.Errorf("%w: --gpu-layers measures one --model (not --suite or --url)", errUsage)
	}
	if *format != "md" && *format != "json" {
		return fmt.Errorf("%w: -o %q: want md or json", errUsage, *format)
	}
	if *url != "" {
		return runURLBench(*url, *apiKey, *clients, *requests, tgs[0], stdout)
	}
	if mf.sd.on() {
		if *specRounds < 1 || *specTemp < 0 || tgs[0] < 1 {
			return fmt.Errorf("%w: --spec-rounds ≥ 1, --temp ≥ 0 and -n ≥ 1 with a drafter", errUsage)
		}
		mf.threads = ths[0]
		m, err := mf.load()
		if err != nil {
			return err
		}
		defer m.Close()
		return specBench{prompt: *specPrompt, n: tgs[0], rounds: *specRounds, temp: *specTemp, seed: 1}.run(m, stdout)
	}
	if *serving {
		return runServingBench(mf, ths[0], stdout)
	}
	if *parallel != "" || *format == "json" {
		if *parallel == "" {
			*parallel = "1"
		}
		pars, err := parseInts(*parallel)
		if err != nil || slices.Contains(pars, 0) {
			return fmt.Errorf("%w: --parallel takes comma-separated counts ≥ 1", errUsage)
		}
		return runParallelBench(mf, ths, pars, pps, tgs, *reps, *format, stdout)
	}
	if *suite != "" {
		if !flagSet(fs, "t") {
			ths = []int{1, 2}
		}
		return runBenchSuite(suiteOptions{name: *suite, dir: *dir, report: *report, only: *only, threads: ths,
			reps: *reps, keep: *keep, quietWait: *quietWait, kv: kv, llama: *llamaBench, llamaArgs: *llamaArgs}, stdout, stderr)
	}
	var probe *readProbe
	var tokBytes int64
	if *vsRead {
		if _, tokBytes, err = weightBytes(*model); err != nil {
			return fmt.Errorf("--vs-read needs a GGUF --model (to count the bytes a token reads): %w", err)
		}
		if probe, err = newReadProbe(); err != nil {
			return fmt.Errorf("--vs-read: %w", err)
		}
		defer probe.Close()
	}
	var loads, serial, shares []string
	var fileSize int64
	for _, th := range ths {
		mf.threads = th
		t0 := time.Now()
		m, err := mf.load()
		if err != nil {
			return err
		}
		if loads == nil { // the header once a model has loaded, never above an error
			fmt.Fprintln(stdout, "| model | size | params | backend | threads | test | t/s (median) | ± stdev |")
			fmt.Fprintln(stdout, "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
		}
		loads = append(loads, fmt.Sprintf("%.2f s (%d threads)", time.Since(t0).Seconds(), th))
		fileSize = m.Info.FileSize
		backend := m.Placement() // "CPU", or what runs on which GPU
		row := func(test string, ts []float64) {
			med, sd := medianStd(ts)
			fmt.Fprintf(stdout, "| %s %s | %s | %s | %s | %d | %s | %.2f | %.2f |\n",
				strings.TrimSuffix(filepath.Base(m.Path), ".gguf"), m.Info.Quant, humanBytes(m.Info.FileSize), humanCount(m.Info.Params), backend, th, test, med, sd)
		}
		// Each test's State dies with measure's frame, so the next test's
		// FreeOSMemory returns it (a closure left in this frame's slots
		// would keep it live).
		for _, n := range pps {
			if n > 0 {
				row("pp"+strconv.Itoa(n), measure(*reps, func() func() float64 { return benchPrompt(m, n, kv) }))
			}
		}
		for _, n := range tgs {
			if n > 0 {
				var g gapCount
				gen := func() func() float64 { return benchGen(m, n, kv, &g) }
				if probe != nil {
					ts, share := measureVsRead(*reps, probe, th, tokBytes, gen)
					row("tg"+strconv.Itoa(n), ts)
					shares = append(shares, fmt.Sprintf("tg%d at %d threads %s", n, th, share))
				} else {
					row("tg"+strconv.Itoa(n), measure(*reps, gen))
				}
				if g.tokens > 0 {
					serial = append(serial, g.String(n, th))
				}
			}
		}
		m.Close()
	}
	fmt.Fprintf(stdout, "\nload: %s; peak RSS %s; file %s; %s kernels\n", strings.Join(loads, ", "), peakRSS(), humanBytes(fileSize), ggml.Kernels())
	if len(serial) > 0 {
		fmt.Fprintf(stdout, "serial part of a generated token (the caller's time between the worker pool's passes, where the other threads wait): %s\n", strings.Join(serial, "; "))
	}
	if len(shares) > 0 {
		fmt.Fprintf(stdout, "weights streamed per generated token %s against the read probe (each run over the mean of the probe passes before and after it): %s\n", humanBytes(tokBytes), strings.Join(shares, "; "))
	}
	return nil
}

// measureVsRead is measure with a read-probe round (probe.Round at th
// goroutines) after the warm-up and after each run: it returns the runs'
// t/s and a summary of each run's weight stream (t/s × tokBytes) as a share
// of the mean of the probe rounds on either side of it. Pairing them so
// puts the machine's drift (±10–20% within minutes on the small VMs) on
// both sides of the division; make bench's single figure is measured once,
// before every file.
func measureVsRead(reps int, probe *readProbe, th int, tokBytes int64, setup func() func() float64) ([]float64, string) {
	run := setup()
	run() // warm-up, as measure
	ps := []float64{probe.Round(th)}
	var ts, gb, shares []float64
	for i := range reps {
		ts = append(ts, run())
		ps = append(ps, probe.Round(th))
		gb = append(gb, ts[i]*float64(tokBytes)/1e9)
		shares = append(shares, gb[i]/((ps[i]+ps[i+1])/2))
	}
	med := func(x []float64) float64 { m, _ := medianStd(x); return m }
	return ts, fmt.Sprintf("%.1f GB/s, probe %.1f GB/s, %.0f%% (median of %d; runs %.0f–%.0f%%)",
		med(gb), med(ps), 100*med(shares), len(shares), 100*slices.Min(shares), 100*slices.Max(shares))
}

// gapCount sums a generation test's parallel.Gaps over its runs.
type gapCount struct {
	tokens, runs int64
	between      time.Duration
}

func (g *gapCount) String(n, threads int) string {
	per := g.between / time.Duration(g.tokens)
	return fmt.Sprintf("tg%d at %d threads %.0f µs over %.1f passes", n, threads, float64(per)/float64(time.Microsecond), float64(g.runs)/float64(g.tokens))
}

// peakRSS is the process's peak resident set (VmHWM, Linux), "n/a"
// elsewhere: with the default huge-page copy it counts the weights twice
// while they are copied out of the file mapping.
func peakRSS() string {
	if b := peakRSSBytes(); b > 0 {
		return humanBytes(b)
	}
	return "n/a"
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// measure makes a test's run and repeats it (benchRepeat).
//
//go:noinline
func measure(reps int, mk func() func() float64) []float64 { return benchRepeat(reps, mk()) }

// benchRepeat runs one warm-up and reps measured runs, returning tokens/s.
func benchRepeat(reps int, run func() float64) []float64 {
	run()
	out := make([]float64, reps)
	for i := range out {
		out[i] = run()
	}
	return out
}

// randomTokens avoids special tokens at the low ids; llama-bench also feeds
// random ids.
func randomTokens(m *engine.Model, n int) []int32 { return randomTokensSeed(m, n, 1) }

func randomTokensSeed(m *engine.Model, n int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 2))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(m.Net.NVocab-3) + 3)
	}
	return ids
}

// benchPrompt returns a run that evaluates n tokens as one prompt from an
// empty cache. The State is made once and emptied before each run (as
// llama-bench clears its KV cache), so runs allocate nothing and the
// garbage collector does not run inside a measurement; the runs' first
// touches of its buffers happen in the warm-up.
func benchPrompt(m *engine.Model, n int, kv ggml.Type) func() float64 {
	debug.FreeOSMemory() // the previous test's State, as llama-bench frees its context between tests
	st, err := m.Net.NewStateKV(n, 512, kv)
	if err != nil {
		benchErr(err)
		return func() float64 { return 0 }
	}
	ids := randomTokens(m, n)
	return func() float64 {
		st.Reset()
		runtime.GC()
		t0 := time.Now()
		if _, err := st.Forward(ids, false); err != nil {
			benchErr(err)
			return 0
		}
		return float64(n) / time.Since(t0).Seconds()
	}
}

// benchGen returns a run that generates n tokens one at a time from an
// empty cache (the same State for every run, as benchPrompt); with g, each
// run also adds its serial time between the pool's passes
// (model.Model.MeasureGaps) to g.
func benchGen(m *engine.Model, n int, kv ggml.Type, g *gapCount) func() float64 {
	debug.FreeOSMemory() // the previous test's State (see benchPrompt)
	st, err := m.Net.NewStateKV(n+1, 1, kv)
	if err != nil {
		benchErr(err)
		return func() float64 { return 0 }
	}
	ids := randomTokens(m, n)
	tok := make([]int32, 1)
	return func() float64 {
		st.Reset()
		runtime.GC()
		if g != nil {
			m.Net.MeasureGaps(true)
		}
		t0 := time.Now()
		for _, id := range ids {
			tok[0] = id
			if _, err := st.Forward(tok, false); err != nil {
				benchErr(err)
				return 0
			}
		}
		d := time.Since(t0)
		if g != nil {
			c := m.Net.Gaps()
			m.Net.MeasureGaps(false)
			g.tokens, g.runs, g.between = g.tokens+int64(n), g.runs+c.Runs, g.between+c.Between
		}
		return float64(n) / d.Seconds()
	}
}

// benchErr reports a test run's failure on stderr: its row then reads 0
// t/s, and the reason is not lost.
func benchErr(err error) { fmt.Fprintln(os.Stderr, "bench: a run failed:", err) }

func medianStd(xs []float64) (float64, float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var mean, v float64
	for _, x := range s {
		mean += x
	}
	mean /= float64(len(s))
	for _, x := range s {
		v += (x - mean) * (x - mean)
	}
	return med, math.Sqrt(v / float64(len(s)))
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
