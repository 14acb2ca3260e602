package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"flowchat/app/library"
	"flowchat/engine"
)

func init() {
	register(command{name: "logits", summary: "write every position's logits as float32 [n_tokens, n_vocab]", run: cmdLogits})
	register(command{name: "tokenize", summary: "print the token ids of a text", run: cmdTokenize})
	register(command{name: "models", summary: "list local models (data dir, the demo model) or describe one", run: cmdModels})
}

func cmdLogits(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logits", stdout, stderr)
	var mf modelFlags
	mf.register(fs)
	tokens := fs.String("tokens", "", "comma-separated token ids to evaluate")
	prompt := fs.String("prompt", "", "text to evaluate (tokenized with BOS, as llama.cpp does)")
	out := fs.String("out", "", "output file (little-endian float32, row-major [n_tokens, n_vocab])")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" || (*tokens == "") == (*prompt == "") {
		return fmt.Errorf("%w: want --out FILE and exactly one of --tokens or --prompt", errUsage)
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	var ids []int32
	if *tokens != "" {
		if ids, err = parseIDs(*tokens); err != nil {
			return err
		}
	} else {
		ids = m.Tok.Encode(*prompt, true, true)
	}
	logits, err := m.Logits(ids)
	if err != nil {
		return err
	}
	buf := make([]byte, 4*len(logits))
	for i, v := range logits {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	if err := writeFileAtomic(*out, buf); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d × %d logits to %s\n", len(ids), m.Net.NVocab, *out)
	return nil
}

func parseIDs(s string) ([]int32, error) {
	var ids []int32
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("token id %q: %w", f, err)
		}
		ids = append(ids, int32(v))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: no token ids given", errUsage)
	}
	return ids, nil
}

func cmdTokenize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", stdout, stderr)
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("prompt", "", "text to tokenize")
	fs.StringVar(prompt, "p", "", "shorthand for --prompt")
	noBOS := fs.Bool("no-bos", false, "don't add BOS/EOS as the model would")
	pieces := fs.Bool("pieces", false, "print id and piece per line")
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	ids := m.Tok.Encode(*prompt, !*noBOS, true)
	if *pieces {
		for _, id := range ids {
			fmt.Fprintf(stdout, "%6d %q\n", id, m.Tok.Piece(id))
		}
		return nil
	}
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = strconv.Itoa(int(id))
	}
	fmt.Fprintln(stdout, strings.Join(strs, ","))
	return nil
}

func cmdModels(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "inspect" {
		return cmdInspect(args[1:], stdout, stderr)
	}
	fs := newFlags("models", stdout, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	demo, err := demoModelPath()
	if err != nil {
		return err
	}
	ms, err := modelLibrary().Scan()
	if err != nil {
		return err
	}
	library.PrintModels(stdout, ms, demo)
	fmt.Fprintf(stdout, "\nbundled demo model: %s\n(flowchat models inspect PATH describes one model; flowchat pull REPO downloads one)\n", demo)
	return nil
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// cmdInspect prints what was detected in a model file or folder: format,
// spec, hyperparameters, tokenizer and every weight matrix.
func cmdInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("models inspect", stdout, stderr)
	spec := fs.String("spec", "", "model spec file to use instead of the builtin one")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: flowchat models inspect PATH", errUsage)
	}
	path := fs.Arg(0)
	format, err := engine.Detect(path)
	if err != nil {
		return err
	}
	m, err := engine.Load(path, engine.LoadOptions{Threads: 1, SpecPath: *spec})
	if err != nil {
		return err
	}
	defer m.Close()
	n, i := m.Net, m.Info
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("path", path)
	row("format", format)
	row("name", i.Name)
	row("architecture", i.Arch)
	row("spec", fmt.Sprintf("%s (%s)", n.Spec.Family, n.Spec.Source))
	row("network", n.Spec.Network.Type)
	row("parameters", fmt.Sprintf("%s (%d)", humanCount(i.Params), i.Params))
	row("weight types", i.Quant)
	row("layers", n.NLayer)
	row("embedding", n.NEmbd)
	row("heads / kv heads / head dim", fmt.Sprintf("%d / %d / %d", n.NHead, n.NHeadKV, n.HeadDim))
	row("feed-forward", n.NFF)
	row("context (trained)", n.NCtxTrain)
	row("position embedding", n.Spec.Network.PositionEmbedding)
	if n.Spec.Network.PositionEmbedding == "rope" {
		row("rope", fmt.Sprintf("base %g, %d of %d dims, %s pairs", n.RopeTheta, n.NRot, n.HeadDim, n.Spec.Network.QKColumnOrder))
	}
	row("norm", fmt.Sprintf("%s, eps %g", n.Spec.Network.Normalization, n.NormEps))
	row("activation", n.Spec.Network.Activation)
	row("tokenizer", fmt.Sprintf("%s, %d tokens, BOS %d, EOS %d, add BOS %v", m.Tok.Model(), m.Tok.VocabSize(), m.Tok.BOS(), m.Tok.EOS(), m.Tok.AddBOS()))
	row("chat template", i.HasTemplate)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nweights:")
	tw = tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, w := range n.Weights() {
		fmt.Fprintf(tw, "  %s\t%v\t[%d, %d]\t%s\n", w.Name, w.Type, w.Cols, w.Rows, humanBytes(int64(len(w.Data))))
	}
	return tw.Flush()
}
