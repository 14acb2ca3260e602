package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"flowchat/app/quantlab"
	"flowchat/engine/eval"
)

func init() {
	register(command{name: "quantlab", summary: "compare quantization levels of a model: size, perplexity, KL divergence, top-1, tok/s; charts and side-by-side generation", run: cmdQuantlab})
}

// quantlabFlags are the quantlab command's flags.
type quantlabFlags struct {
	model, types, file, out, outputType string
	ctx, chunks, genTokens, minElems    int
	threads, width, height              int
	noCache, asJSON                     bool
	prompt                              string
	n                                   int
	seed                                uint64
	temp                                float64
}

func (q *quantlabFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&q.model, "model", "", "full-precision model (GGUF); also the first argument; default: the bundled demo model")
	fs.StringVar(&q.model, "m", "", "shorthand for --model")
	fs.StringVar(&q.types, "types", strings.Join(quantlab.DefaultLevels, ","), "levels to compare, comma-separated: F32 (as stored), Inferflow levels (Q8, Q6, Q5, Q4_B32, Q4_B64, Q3H, Q3, Q2), GGML types (Q8_0, Q4_0, Q4_K, …) or GGUF files of the same model")
	fs.StringVar(&q.file, "file", "", "evaluation text; default: the bundled TinyStories-style text")
	fs.StringVar(&q.file, "f", "", "shorthand for --file")
	fs.IntVar(&q.ctx, "ctx", 128, "tokens per perplexity chunk")
	fs.IntVar(&q.ctx, "c", 128, "shorthand for --ctx")
	fs.IntVar(&q.chunks, "chunks", 0, "score at most this many chunks (0 = the whole text)")
	fs.IntVar(&q.genTokens, "gen-tokens", 32, "time greedy generation of this many tokens per level (0 = don't)")
	fs.StringVar(&q.out, "out", "", "write the charts as PNG files into DIR")
	fs.IntVar(&q.width, "width", 960, "chart width in pixels")
	fs.IntVar(&q.height, "height", 600, "chart height in pixels")
	fs.BoolVar(&q.noCache, "no-cache", false, "recompute even when a cached result exists (and replace it)")
	fs.BoolVar(&q.asJSON, "json", false, "print the report as JSON instead of the table")
	fs.StringVar(&q.outputType, "output-type", "", "type of the output head (and a token embedding tied to it) in converted levels; default: the level's")
	fs.IntVar(&q.minElems, "min-elems", 0, "keep matrices with fewer elements as stored (Inferflow's tensor_quant_threshold)")
	fs.IntVar(&q.threads, "threads", 0, "threads for the forward pass (default: all cores)")
	fs.IntVar(&q.threads, "t", 0, "shorthand for --threads")
	fs.StringVar(&q.prompt, "prompt", "", "also continue this prompt with the base and every level, side by side, tokens that differ from the base marked")
	fs.StringVar(&q.prompt, "p", "", "shorthand for --prompt")
	fs.IntVar(&q.n, "n", 48, "tokens to generate per level for --prompt")
	fs.Uint64Var(&q.seed, "seed", 1, "sampler seed for --prompt, the same for every level")
	fs.Float64Var(&q.temp, "temp", 0, "temperature for --prompt (0 = greedy)")
}

func cmdQuantlab(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quantlab", stdout, stderr)
	var q quantlabFlags
	q.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := q.resolve(fs, stderr); err != nil {
		return err
	}
	text, err := q.text()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pp := &labProgress{w: stderr, tty: isTerminalWriter(stderr)}
	opt := quantlab.Options{CacheDir: quantlabCacheDir(), NoCache: q.noCache, Progress: pp.report}
	res, err := quantlab.Run(ctx, q.request(text), opt)
	pp.finish()
	if err != nil {
		return err
	}
	if err := q.report(res, stdout, stderr); err != nil {
		return err
	}
	if q.prompt == "" {
		return nil
	}
	return q.sideBySide(ctx, opt, stdout, stderr)
}

// resolve takes MODEL from the first argument or the demo model, and
// checks what flag parsing cannot.
func (q *quantlabFlags) resolve(fs *flag.FlagSet, stderr io.Writer) error {
	switch {
	case fs.NArg() > 1:
		return usageError(stderr, "one model at a time (flowchat quantlab MODEL --types Q8,Q4,Q3H)")
	case fs.NArg() == 1 && q.model != "":
		return usageError(stderr, "the model is given twice (argument and --model)")
	case fs.NArg() == 1:
		q.model = fs.Arg(0)
	}
	if q.ctx < 8 || q.chunks < 0 || q.genTokens < 0 || q.n <= 0 || q.temp < 0 || q.threads < 0 {
		return usageError(stderr, "want -c ≥ 8, --chunks ≥ 0, --gen-tokens ≥ 0, -n > 0, --temp ≥ 0, --threads ≥ 0")
	}
	if q.out != "" && (q.width < 64 || q.height < 64) {
		return usageError(stderr, "--width and --height must be at least 64 pixels")
	}
	if q.model != "" {
		return nil
	}
	var err error
	q.model, err = demoModelPath()
	return err
}

// usageError is a usage error about msg (exitCode prints it).
func usageError(_ io.Writer, msg string) error {
	return fmt.Errorf("%w: quantlab: %s", errUsage, msg)
}

// text is --file's contents, or "" for the bundled text.
func (q *quantlabFlags) text() (string, error) {
	if q.file == "" {
		return "", nil
	}
	b, err := os.ReadFile(q.file)
	if err != nil {
		return "", fmt.Errorf("evaluation text: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return "", fmt.Errorf("evaluation text %s is empty", q.file)
	}
	return string(b), nil
}

func (q *quantlabFlags) request(text string) quantlab.Request {
	return quantlab.Request{Model: q.model, Levels: quantlab.ParseLevels(q.types), Text: text, Ctx: q.ctx,
		MaxChunks: q.chunks, OutputType: q.outputType, MinElements: q.minElems, Threads: q.threads, GenTokens: q.genTokens}
}

// quantlabCacheDir is where Lab results are kept between runs (the GUI's
// Lab reads the same directory).
func quantlabCacheDir() string { return filepath.Join(xdg.CacheHome, "flowchat", "quantlab") }

// report prints the table (or JSON) on stdout and writes the charts.
func (q *quantlabFlags) report(res *quantlab.Result, stdout, stderr io.Writer) error {
	if res.Cached {
		fmt.Fprintf(stderr, "cached result from %s (--no-cache recomputes)\n", res.Created.Local().Format("2006-01-02 15:04"))
	}
	if q.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res.Report); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, quantlab.Summary(res.Report))
		fmt.Fprintln(stdout)
		if err := quantlab.NewTable(res.Report).WriteMarkdown(stdout); err != nil {
			return err
		}
	}
	if q.out == "" {
		return nil
	}
	paths, err := quantlab.WriteCharts(q.out, res.Report, q.width, q.height)
	for _, p := range paths {
		fmt.Fprintf(stderr, "wrote %s\n", p)
	}
	return err
}

// sideBySide continues --prompt with the base and every level.
func (q *quantlabFlags) sideBySide(ctx context.Context, opt quantlab.Options, stdout, stderr io.Writer) error {
	req := quantlab.SideRequest{Model: q.model, Levels: quantlab.ParseLevels(q.types), Prompt: q.prompt, Tokens: q.n,
		Temperature: float32(q.temp), Seed: q.seed, OutputType: q.outputType, MinElements: q.minElems, Threads: q.threads}
	pp := &labProgress{w: stderr, tty: isTerminalWriter(stderr)}
	opt.Progress = pp.report
	res, err := quantlab.Generate(ctx, req, opt)
	pp.finish()
	if err != nil {
		return err
	}
	marks := quantlab.Brackets
	if isTerminalWriter(stdout) && os.Getenv("NO_COLOR") == "" {
		marks = quantlab.ANSI
	}
	fmt.Fprintln(stdout)
	return quantlab.WriteSide(stdout, res.Side, marks)
}

func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// labStages name eval.LabProgress stages for people.
var labStages = map[string]string{"base": "scoring the text", "load": "loading", "eval": "scoring the text", "generate": "generating"}

// labProgress prints a Lab's progress on stderr: one line redrawn on a
// terminal, a line per stage otherwise.
type labProgress struct {
	w    io.Writer
	tty  bool
	last string // the stage line printed last (without its percentage)
}

func (p *labProgress) report(e eval.LabProgress) {
	name := e.Level
	if e.Index < 0 {
		name = "base model"
	}
	stage := labStages[e.Stage]
	if stage == "" {
		stage = e.Stage
	}
	line := fmt.Sprintf("[%d/%d] %s: %s", e.Index+1, e.Levels, name, stage)
	if p.tty {
		pct := ""
		if e.Frac > 0 && e.Stage != "done" {
			pct = fmt.Sprintf(" %3.0f%%", 100*e.Frac)
		}
		fmt.Fprintf(p.w, "\r\x1b[K%s%s", line, pct)
		p.last = line
		return
	}
	if line != p.last && e.Stage != "done" {
		fmt.Fprintln(p.w, line)
		p.last = line
	}
}

// finish ends a redrawn progress line.
func (p *labProgress) finish() {
	if p.tty && p.last != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
