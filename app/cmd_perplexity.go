package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"text/tabwriter"

	"flowchat/engine"
	"flowchat/engine/eval"
	"flowchat/engine/ggml"
	"flowchat/engine/quant"
)

func init() {
	register(command{name: "perplexity", summary: "perplexity of a model over a text (llama-perplexity compatible), KL divergence against a base", run: cmdPerplexity})
}

// requantFlags re-quantize a model's weight matrices after loading.
type requantFlags struct {
	typ, outputType string
	minElems        int
}

func (r *requantFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.typ, "type", "", "re-quantize the weight matrices at load: "+quant.Names()+" (or Q8, Q6, Q5, Q4, Q3H, Q3, Q2), or a GGML type (Q8_0, Q4_0, Q4_K, …)")
	fs.StringVar(&r.outputType, "output-type", "", "type of the output head (and a token embedding tied to it); default: --type")
	fs.IntVar(&r.minElems, "min-elems", 0, "keep matrices with fewer elements as stored (Inferflow's tensor_quant_threshold)")
}

// options turns the flags into quant options; ok is false without --type.
func (r *requantFlags) options(threads int) (quant.Options, bool, error) {
	if r.typ == "" {
		if r.outputType != "" {
			return quant.Options{}, false, fmt.Errorf("%w: --output-type needs --type", errUsage)
		}
		return quant.Options{}, false, nil
	}
	t, err := quant.ParseType(r.typ)
	if err != nil {
		return quant.Options{}, false, err
	}
	o := quant.Options{Type: t, MinElements: r.minElems, Threads: threads}
	if r.outputType != "" {
		if o.OutputType, err = quant.ParseType(r.outputType); err != nil {
			return o, false, err
		}
		o.SetOutput = true
	}
	return o, true, nil
}

// loadRequant loads the model with --type applied, reporting to stderr.
// The conversion is the load's own (engine.LoadOptions.Quant), before the
// weights take the kernels' layout at load, so a model converted here
// runs exactly as the same conversion written by quantize and loaded.
func loadRequant(mf *modelFlags, rf *requantFlags, stderr io.Writer) (*engine.Model, error) {
	qo, ok, err := rf.options(mf.threads)
	if err != nil {
		return nil, err
	}
	if ok {
		if qo.Threads <= 0 {
			qo.Threads = runtime.NumCPU()
		}
		mf.requant = &qo
	}
	m, err := mf.load()
	if err != nil || !ok {
		return m, err
	}
	fmt.Fprintf(stderr, "re-quantized %s\n", m.Requant.Summary())
	return m, nil
}

func cmdPerplexity(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("perplexity", stdout, stderr)
	var mf modelFlags
	var rf requantFlags
	mf.register(fs)
	rf.register(fs)
	file := fs.String("file", "", "text to score (read whole, tokenized with BOS as llama-perplexity does)")
	fs.StringVar(file, "f", "", "shorthand for --file")
	chunks := fs.Int("chunks", 0, "score at most this many chunks (0 = all)")
	saveBase := fs.String("save-base", "", "also write this model's log-probabilities to FILE, the base for --kl-base")
	klBase := fs.String("kl-base", "", "compare with the base log-probabilities in FILE (KL divergence, top-1 agreement); its tokens are scored, --file is not needed")
	weights := fs.Bool("weights", false, "print each weight matrix's error against the file's (with --type: the quantization error)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*file == "") == (*klBase == "") {
		return fmt.Errorf("%w: want exactly one of --file TEXT or --kl-base FILE (flowchat perplexity --model M --file TEXT -c 128)", errUsage)
	}
	kv, err := parseKVType(mf.kvType) // llama-perplexity's -ctk/-ctv
	if err != nil {
		return err
	}
	m, err := loadRequant(&mf, &rf, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	sc := eval.Scorer(m)
	if kv != ggml.F32 {
		sc = eval.NetScorer{Net: m.Net, KVType: kv}
	}
	if *weights {
		if err := printWeightErrors(&mf, m, stdout); err != nil {
			return err
		}
	}
	if *klBase != "" {
		return perplexityKL(sc, *klBase, stdout, stderr)
	}
	return perplexityText(m, sc, *file, mf.ctx, *chunks, *saveBase, stdout, stderr)
}

// chunkPrinter prints llama-perplexity's running values: [1]2.9607,[2]…
func chunkPrinter(stderr io.Writer) func(i, n int, running float64) bool {
	return func(i, n int, running float64) bool {
		fmt.Fprintf(stderr, "[%d]%.4f,", i+1, running)
		if i+1 == n {
			fmt.Fprintln(stderr)
		}
		return true
	}
}

func perplexityText(m *engine.Model, sc eval.Scorer, file string, ctx, chunks int, saveBase string, stdout, stderr io.Writer) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if ctx <= 0 {
		ctx = min(max(m.Net.NCtxTrain, 4), 512)
	}
	tokens := m.Tok.Encode(string(text), true, false)
	opt := eval.ChunkOptions{Ctx: ctx, BOS: m.Tok.BOS(), MaxChunks: chunks}
	fmt.Fprintf(stderr, "%d tokens, chunks of %d, scoring the second half of each\n", len(tokens), ctx)
	var r eval.PerplexityResult
	if saveBase != "" {
		r, err = writeBaseFile(sc, saveBase, tokens, opt, stderr)
	} else {
		r, err = eval.Perplexity(sc, tokens, opt, chunkPrinter(stderr))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "chunks: %d, scored tokens: %d\nPPL = %.4f +/- %.5f\nperplexity: %.4f\n", r.Chunks, r.Tokens, r.PPL, r.StdErr, r.PPL)
	return nil
}

func writeBaseFile(sc eval.Scorer, path string, tokens []int32, opt eval.ChunkOptions, stderr io.Writer) (r eval.PerplexityResult, err error) {
	f, err := os.Create(path)
	if err != nil {
		return r, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	r, err = eval.WriteBase(f, sc, tokens, opt, chunkPrinter(stderr))
	if err == nil {
		fmt.Fprintf(stderr, "wrote the base log-probabilities to %s\n", path)
	}
	return r, err
}

func perplexityKL(sc eval.Scorer, path string, stdout, stderr io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := eval.CompareBase(f, sc, chunkPrinter(stderr))
	if err != nil {
		if errors.Is(err, eval.ErrBaseFormat) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return err
	}
	fmt.Fprintf(stdout, "chunks: %d, scored tokens: %d\nbase PPL = %.4f\nKLD = %.6f +/- %.6f (median %.6f, 99%% %.6f, max %.6f)\ntop-1 agreement: %.2f%%\nPPL = %.4f +/- %.5f\nperplexity: %.4f\n",
		r.Chunks, r.Tokens, r.BasePPL, r.KLD, r.KLDStdErr, r.KLDMedian, r.KLD99, r.KLDMax, 100*r.Top1, r.PPL, r.StdErr, r.PPL)
	return nil
}

// printWeightErrors compares the (re-quantized) weights with the file's.
func printWeightErrors(mf *modelFlags, m *engine.Model, stdout io.Writer) error {
	base, err := mf.load()
	if err != nil {
		return err
	}
	defer base.Close()
	es, err := eval.CompareWeights(base.Net, m.Net)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tensor\ttype\telements\tRMS error\trel. RMS\tmax error\t")
	for _, e := range append(es, eval.Totals(es)) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3g\t%.4f\t%.3g\t\n", e.Name, e.Type, e.Elements, e.RMS, e.RelRMS, e.Max)
	}
	return tw.Flush()
}
