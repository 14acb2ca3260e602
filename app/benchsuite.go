package main

// The benchmark suite behind `make bench` (issue 6): it writes the
// random-weight models of the issue's shapes with our own GGUF writer and
// quantizer (llama-quantize's tensor mix, see filetype.go), runs the same
// measurements as `flowchat bench` on each (1 and 2 threads, median of ≥ 5
// runs after a warm-up), measures the machine's memory read bandwidth, and
// writes one markdown section with the results, llama.cpp's figures from
// the issue beside ours, the achieved weight GB/s of generation as a share
// of that bandwidth, load time and peak RSS. With --report FILE the section
// replaces the one between the bench markers in FILE (docs/PERFORMANCE.md).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// suiteModel is one benchmarked file: shape, llama-quantize file type and
// the prompt / generation lengths.
type suiteModel struct {
	shape, ftype string
	pp, tg       int
}

var benchSuites = map[string][]suiteModel{
	// The issue's table: pp512/tg128 for the small shapes, pp128/tg64 for 1.1B.
	"issue6": {
		{"stories15m", "F32", 512, 128}, {"stories15m", "F16", 512, 128}, {"stories15m", "Q8_0", 512, 128},
		{"stories15m", "Q4_0", 512, 128}, {"stories15m", "Q4_K_M", 512, 128},
		{"stories110m", "F16", 512, 128}, {"stories110m", "Q8_0", 512, 128},
		{"stories110m", "Q4_0", 512, 128}, {"stories110m", "Q4_K_M", 512, 128},
		{"tinyllama", "F16", 128, 64}, {"tinyllama", "Q8_0", 128, 64}, {"tinyllama", "Q4_0", 128, 64},
		{"tinyllama", "Q4_K_M", 128, 64}, {"tinyllama", "Q6_K", 128, 64},
	},
	// Issue 18's table: the three shapes in F16/Q8_0/Q4_0/Q4_K_M/Q6_K,
	// meant to run with --llama-bench side by side at 1 and 2 threads
	// (its targets: pp and tg ≥ 1.0× llama.cpp for every file).
	"issue18": {
		{"stories15m", "F16", 512, 128}, {"stories15m", "Q8_0", 512, 128}, {"stories15m", "Q4_0", 512, 128},
		{"stories15m", "Q4_K_M", 512, 128}, {"stories15m", "Q6_K", 512, 128},
		{"stories110m", "F16", 512, 128}, {"stories110m", "Q8_0", 512, 128}, {"stories110m", "Q4_0", 512, 128},
		{"stories110m", "Q4_K_M", 512, 128}, {"stories110m", "Q6_K", 512, 128},
		{"tinyllama", "F16", 128, 64}, {"tinyllama", "Q8_0", 128, 64}, {"tinyllama", "Q4_0", 128, 64},
		{"tinyllama", "Q4_K_M", 128, 64}, {"tinyllama", "Q6_K", 128, 64},
	},
	// A quick run of the whole pipeline (tests, and a first look).
	"smoke": {{"stories15m", "Q8_0", 16, 8}, {"stories15m", "Q4_K_M", 16, 8}},
}

// llamaRef is llama.cpp's figure for a file: tokens/s for pp and tg at 1
// and 2 threads (NaN: not measured), from issue 6's table (llama.cpp commit
// c392e50, CPU build with native flags, llama-bench -r 5, quiet machine).
type llamaRef struct{ pp1, tg1, pp2, tg2 float64 }

var nan = math.NaN()

var llamaRefs = map[string]llamaRef{
	"stories15m/F16":     {2099.2, 260.0, 3070.7, 344.7},
	"stories15m/Q8_0":    {2141.3, 414.5, 3325.7, 596.7},
	"stories15m/Q4_0":    {2323.7, 526.5, 3793.6, 664.3},
	"stories15m/Q4_K_M":  {1908.0, 409.4, 2857.1, 562.5},
	"stories110m/F16":    {268.2, 41.5, 487.2, 77.5},
	"stories110m/Q8_0":   {237.1, 80.9, 409.4, 115.9},
	"stories110m/Q4_0":   {273.3, 105.6, 481.6, 177.7},
	"stories110m/Q4_K_M": {186.4, 94.8, 286.1, 134.6},
	"tinyllama/F16":      {nan, nan, 72.8, 9.0},
	"tinyllama/Q8_0":     {28.3, 9.7, 52.1, 15.6},
	"tinyllama/Q4_0":     {33.5, 14.8, 59.0, 25.1},
	"tinyllama/Q4_K_M":   {21.6, 13.2, nan, nan},
}

// refFor is the llama.cpp reference for a file and what it is for: the
// issue has no F32 figures, so stories15M F32 is compared with the F16 file.
func refFor(m suiteModel) (llamaRef, string, bool) {
	if r, ok := llamaRefs[m.shape+"/"+m.ftype]; ok {
		return r, "", true
	}
	if m.ftype == "F32" {
		if r, ok := llamaRefs[m.shape+"/F16"]; ok {
			return r, " (F16)", true
		}
	}
	return llamaRef{nan, nan, nan, nan}, "", false
}

// targetsFor is the target ratios (generation, prompt) of a suite's file
// at 2 threads: issue 18's suite, 1.0× for every file; else issue 6's; ok
// is false where the issue sets none.
func targetsFor(suite string, m suiteModel) (tg, pp float64, ok bool) {
	if suite == "issue18" {
		return 1.00, 1.00, true
	}
	switch m.shape + "/" + m.ftype {
	case "tinyllama/F16", "tinyllama/Q8_0", "tinyllama/Q4_0", "tinyllama/Q4_K_M", "tinyllama/Q6_K",
		"stories110m/F16", "stories110m/Q8_0", "stories110m/Q4_0":
		return 1.10, 1.00, true
	case "stories15m/F32", "stories15m/Q8_0":
		return 1.00, 1.00, true
	}
	return 0, 0, false
}

// suiteResult is one (file, thread count) measurement.
type suiteResult struct {
	m                  suiteModel
	threads            int
	pp, ppSD, tg, tgSD float64
	load               time.Duration
	rss                int64 // peak RSS of this load and run (VmHWM after a reset), bytes; 0 unknown
}

type suiteFile struct {
	m             suiteModel
	size          int64
	tokBytes      int64 // weight bytes one generated token reads
	synth         time.Duration
	loadBefore    string
	loadAfter     string
	quietWaited   time.Duration
	quietAchieved bool
	results       []suiteResult
	side          map[string]float64 // llama.cpp side by side: "pp1", "tg2", … → tokens/s (median of its samples)
	sideSD        map[string]float64
	sideBuild     string
}

type suiteOptions struct {
	name      string
	dir       string
	report    string
	only      string
	threads   []int
	reps      int
	keep      bool
	quietWait time.Duration
	kv        ggml.Type
	llama     string // a llama-bench (or compatible) command run on the same files; "" = none
	llamaArgs string // extra arguments for it, space-separated
}

func runBenchSuite(o suiteOptions, stdout, stderr io.Writer) error {
	models, ok := benchSuites[o.name]
	if !ok {
		names := make([]string, 0, len(benchSuites))
		for n := range benchSuites {
			names = append(names, n)
		}
		return fmt.Errorf("%w: unknown suite %q (known: %s)", errUsage, o.name, strings.Join(names, ", "))
	}
	if o.only != "" {
		var keep []suiteModel
		for _, m := range models {
			if strings.Contains(strings.ToLower(m.shape+"/"+m.ftype), strings.ToLower(o.only)) {
				keep = append(keep, m)
			}
		}
		models = keep
	}
	if len(models) == 0 {
		return fmt.Errorf("%w: --only %q matches no file of suite %q", errUsage, o.only, o.name)
	}
	if o.dir == "" {
		o.dir = filepath.Join(xdg.CacheHome, "flowchat", "bench")
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(stderr, "measuring memory read bandwidth…\n")
	bw := measureBandwidth(o.threads)
	var files []suiteFile
	for _, m := range models {
		f, err := benchSuiteFile(o, m, stderr)
		if err != nil {
			return fmt.Errorf("%s %s: %w", m.shape, m.ftype, err)
		}
		files = append(files, f)
	}
	section := renderSuite(o, bw, files, start, time.Now())
	fmt.Fprint(stdout, section)
	if o.report != "" {
		if err := replaceSection(o.report, section); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote the results into %s\n", o.report)
	}
	return nil
}

func benchSuiteFile(o suiteOptions, m suiteModel, stderr io.Writer) (suiteFile, error) {
	sf := suiteFile{m: m}
	mix, err := parseFileType(m.ftype, false)
	if err != nil {
		return sf, err
	}
	path := filepath.Join(o.dir, fmt.Sprintf("%s-%s.gguf", m.shape, m.ftype))
	fmt.Fprintf(stderr, "%s %s: writing %s…\n", m.shape, m.ftype, path)
	t0 := time.Now()
	if err := synthWriter(synthPresets[m.shape], mix, 1).WriteFile(path); err != nil {
		return sf, err
	}
	sf.synth = time.Since(t0)
	if !o.keep {
		defer os.Remove(path)
	}
	if sf.size, sf.tokBytes, err = weightBytes(path); err != nil {
		return sf, err
	}
	dropFileCache(path) // each engine reads the file from disk (dropFileCache)
	sf.quietWaited, sf.quietAchieved = waitQuiet(o.quietWait)
	sf.loadBefore = loadAvg()
	for _, th := range o.threads {
		fmt.Fprintf(stderr, "%s %s: %d thread(s)…\n", m.shape, m.ftype, th)
		resetPeakRSS()
		mf := modelFlags{model: path, threads: th, kvType: "F32"}
		t0 := time.Now()
		em, err := mf.load()
		if err != nil {
			return sf, err
		}
		r := suiteResult{m: m, threads: th, load: time.Since(t0)}
		r.pp, r.ppSD = medianStd(benchRepeat(o.reps, benchPrompt(em, m.pp, o.kv)))
		r.tg, r.tgSD = medianStd(benchRepeat(o.reps, benchGen(em, m.tg, o.kv, nil)))
		r.rss = peakRSSBytes()
		em.Close()
		sf.results = append(sf.results, r)
		runtime.GC()
		debug.FreeOSMemory()
	}
	if o.llama != "" {
		dropFileCache(path)
		fmt.Fprintf(stderr, "%s %s: %s side by side…\n", m.shape, m.ftype, o.llama)
		if err := runLlamaBench(o, path, m, &sf); err != nil {
			return sf, fmt.Errorf("llama-bench: %w", err)
		}
	}
	sf.loadAfter = loadAvg()
	return sf, nil
}

// runLlamaBench runs a llama-bench-compatible command on the same file
// (`-m F -p P -n N -t 1,2 -r R -o json`) and keeps the median of its
// samples per test.
func runLlamaBench(o suiteOptions, path string, m suiteModel, sf *suiteFile) error {
	ths := make([]string, len(o.threads))
	for i, t := range o.threads {
		ths[i] = strconv.Itoa(t)
	}
	args := []string{"-m", path, "-p", strconv.Itoa(m.pp), "-n", strconv.Itoa(m.tg), "-t", strings.Join(ths, ","),
		"-r", strconv.Itoa(o.reps), "-o", "json"}
	args = append(args, strings.Fields(o.llamaArgs)...)
	cmd := exec.Command(o.llama, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		tail := errb.String()
		if len(tail) > 400 {
			tail = tail[len(tail)-400:]
		}
		return fmt.Errorf("%v: %s", err, tail)
	}
	var rows []struct {
		Commit    string    `json:"build_commit"`
		Threads   int       `json:"n_threads"`
		Prompt    int       `json:"n_prompt"`
		Gen       int       `json:"n_gen"`
		Avg       float64   `json:"avg_ts"`
		SD        float64   `json:"stddev_ts"`
		SamplesTS []float64 `json:"samples_ts"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return fmt.Errorf("reading its JSON: %w", err)
	}
	sf.side, sf.sideSD = map[string]float64{}, map[string]float64{}
	for _, r := range rows {
		key := "pp"
		if r.Gen > 0 {
			key = "tg"
		}
		key += strconv.Itoa(r.Threads)
		v := r.Avg
		if len(r.SamplesTS) > 0 {
			v, _ = medianStd(r.SamplesTS)
		}
		sf.side[key], sf.sideSD[key], sf.sideBuild = v, r.SD, r.Commit
	}
	return nil
}

// weightBytes is the file size and the bytes of weights one generated token
// reads: every tensor but the token embedding (one row of it is gathered),
// which counts too where it is also the output head (no output.weight).
func weightBytes(path string) (size, perToken int64, err error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	tied := true
	for _, t := range f.Tensors {
		if t.Name == "output.weight" {
			tied = false
		}
	}
	for _, t := range f.Tensors {
		if t.Name != "token_embd.weight" || tied {
			perToken += int64(t.Size)
		}
	}
	return f.Size(), perToken, nil
}

// renderSuite writes the report section.
func renderSuite(o suiteOptions, bw map[int]float64, files []suiteFile, start, end time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", benchBegin)
	fmt.Fprintf(&b, "### `make bench` results (%s, commit %s)\n\n", start.UTC().Format("2006-01-02 15:04 MST"), buildCommit())
	fmt.Fprintf(&b, "Written by `flowchat bench --suite %s --report …` in %s on %s (%d logical CPUs), %s kernels. ",
		o.name, end.Sub(start).Round(time.Second), cpuModel(), runtime.NumCPU(), ggml.Kernels())
	fmt.Fprintf(&b, "Models: random weights written by `flowchat synth` (our GGUF writer and quantizer, llama-quantize's tensor mix). ")
	fmt.Fprintf(&b, "pp = prompt processing (one batch from an empty cache), tg = generation (one token at a time), tokens/s, median of %d runs after a warm-up. ", o.reps)
	var tests []string
	seen := map[string]bool{}
	for _, f := range files {
		t := fmt.Sprintf("%s pp%d/tg%d", f.m.shape, f.m.pp, f.m.tg)
		if !seen[t] {
			seen[t] = true
			tests = append(tests, t)
		}
	}
	fmt.Fprintf(&b, "Tests: %s. ", strings.Join(tests, ", "))
	side := ""
	for _, f := range files {
		if f.side != nil {
			side = f.sideBuild
		}
	}
	if side != "" {
		fmt.Fprintf(&b, "llama.cpp columns: measured side by side on the same files right after ours (`%s`, build %s, median of its %d samples ± standard deviation). ", strings.TrimSpace(o.llama+" "+o.llamaArgs), side, o.reps)
	} else {
		fmt.Fprintf(&b, "llama.cpp columns: issue 6's figures (not run side by side here; pass --llama-bench PATH to run llama-bench on the same files). ")
	}
	fmt.Fprintf(&b, "The issue's figures (llama.cpp c392e50, llama-bench -r 5, on the issue author's machine) are in the last column; stories15M F32 is compared with llama.cpp's F16 there, which the issue lists. ")
	fmt.Fprintf(&b, "GB/s: weight bytes one generated token reads (all tensors but the token embedding) × tg; %% of the read bandwidth measured below at the same thread count.\n\n")
	b.WriteString("Memory read bandwidth (1 GiB in huge pages read by the F32 dot kernel, by a reader that prefetches 4 KiB ahead and by one that reads four streams side by side, each goroutine its own part and in 256 KiB chunks claimed in turn, best of 5 passes of each):")
	for _, th := range o.threads {
		if v, ok := bw[th]; ok && v > 0 {
			fmt.Fprintf(&b, " %d thread(s) %.1f GB/s;", th, v)
		}
	}
	b.WriteString("\n\n")
	b.WriteString("| shape | file | MiB | thr | pp ours | pp llama.cpp | pp ratio | tg ours | tg llama.cpp | tg ratio | target (2 thr) | tg GB/s | % of BW | issue's llama.cpp pp / tg |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|\n")
	for _, f := range files {
		ref, refNote, _ := refFor(f.m)
		for _, r := range f.results {
			ipp, itg := ref.pp1, ref.tg1
			if r.threads == 2 {
				ipp, itg = ref.pp2, ref.tg2
			} else if r.threads != 1 {
				ipp, itg = nan, nan
			}
			issue := num(ipp) + " / " + num(itg) + refNote
			// The llama.cpp columns: measured side by side when it was run,
			// else the issue's figures.
			lpp, ltg, lppS, ltgS := ipp, itg, num(ipp)+refNote, num(itg)+refNote
			if f.side != nil {
				k := strconv.Itoa(r.threads)
				lpp, ltg = sideOr(f.side, "pp"+k), sideOr(f.side, "tg"+k)
				lppS, ltgS = pm(lpp, f.sideSD["pp"+k]), pm(ltg, f.sideSD["tg"+k])
			}
			gbs := float64(f.tokBytes) * r.tg / 1e9
			pct := "–"
			if v := bw[r.threads]; v > 0 {
				pct = fmt.Sprintf("%.0f%%", 100*gbs/v)
			}
			target := ""
			if r.threads == 2 {
				target = targetVerdict(o.name, f.m, r.pp/lpp, r.tg/ltg)
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f | %d | %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s |\n",
				f.m.shape, f.m.ftype, float64(f.size)/(1<<20), r.threads,
				pm(r.pp, r.ppSD), lppS, ratio(r.pp, lpp),
				pm(r.tg, r.tgSD), ltgS, ratio(r.tg, ltg), target, gbs, pct, issue)
		}
	}
	b.WriteString("\nLoad and memory (weights copied into huge pages, the default; peak RSS of the process over that load and its runs):\n\n")
	b.WriteString("| shape | file | file MiB | thr | load s | peak RSS MiB | RSS / file | synth s | load avg before → after | quiet wait |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, f := range files {
		for _, r := range f.results {
			rss, rel := "n/a", "n/a"
			if r.rss > 0 {
				rss = fmt.Sprintf("%.0f", float64(r.rss)/(1<<20))
				rel = fmt.Sprintf("%.2f", float64(r.rss)/float64(f.size))
			}
			quiet := fmt.Sprintf("%.0f s", f.quietWaited.Seconds())
			if !f.quietAchieved {
				quiet += " (never quiet)"
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f | %d | %.2f | %s | %s | %.1f | %s → %s | %s |\n",
				f.m.shape, f.m.ftype, float64(f.size)/(1<<20), r.threads, r.load.Seconds(), rss, rel,
				f.synth.Seconds(), f.loadBefore, f.loadAfter, quiet)
		}
	}
	b.WriteString("\nBefore each file the runner waits (up to the quiet-wait limit) until every CPU has been ≥ 90% idle for 3 s; the load averages include our own threads.\n")
	fmt.Fprintf(&b, "%s\n", benchEnd)
	return b.String()
}

func targetVerdict(suite string, m suiteModel, ppRatio, tgRatio float64) string {
	tgT, ppT, ok := targetsFor(suite, m)
	if !ok {
		return "none set"
	}
	if math.IsNaN(ppRatio) && math.IsNaN(tgRatio) {
		return "no llama.cpp figure"
	}
	var parts []string
	check := func(what string, r, t float64) {
		switch {
		case math.IsNaN(r):
			parts = append(parts, what+" n/a")
		case r >= t:
			parts = append(parts, fmt.Sprintf("%s ≥ %.2f× met", what, t))
		default:
			parts = append(parts, fmt.Sprintf("%s ≥ %.2f× **not met**", what, t))
		}
	}
	check("tg", tgRatio, tgT)
	check("pp", ppRatio, ppT)
	return strings.Join(parts, ", ")
}

func sideOr(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return nan
}

func pm(v, sd float64) string { return fmt.Sprintf("%.2f ± %.2f", v, sd) }

func num(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratio(a, b float64) string {
	if math.IsNaN(b) || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

const (
	benchBegin = "<!-- bench:begin (written by make bench; edits between these markers are overwritten) -->"
	benchEnd   = "<!-- bench:end -->"
)

// replaceSection puts section in place of the marked one in path (or at its
// end), atomically.
func replaceSection(path, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var out []byte
	i := bytes.Index(old, []byte(benchBegin))
	j := bytes.Index(old, []byte(benchEnd))
	if i >= 0 && j > i {
		out = append(append(append(out, old[:i]...), section...), bytes.TrimPrefix(old[j+len(benchEnd):], []byte("\n"))...)
	} else {
		out = append(append(out, old...), "\n"+section...)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func buildCommit() string {
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				return s.Value[:7]
			}
		}
	}
	return "unknown"
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "n/a"
}
