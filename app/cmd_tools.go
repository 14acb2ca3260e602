package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"flowchat/engine"
)

func init() {
	register(command{name: "logits", summary: "write every position's logits as float32 [n_tokens, n_vocab]", run: cmdLogits})
	register(command{name: "tokenize", summary: "print the token ids of a text", run: cmdTokenize})
	register(command{name: "models", summary: "list local models (data dir, the demo model) or describe one", run: cmdModels})
}

func cmdLogits(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logits", stderr)
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
	fs := newFlags("tokenize", stderr)
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
	fs := newFlags("models", stderr)
	var mf modelFlags
	mf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	var paths []string
	if mf.model != "" {
		paths = []string{mf.model}
	} else {
		demo, err := demoModelPath()
		if err != nil {
			return err
		}
		found, _ := filepath.Glob(filepath.Join(dataDir(), "models", "*.gguf"))
		paths = found
		if len(found) == 0 {
			paths = []string{demo}
		}
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARCH\tPARAMS\tTYPE\tSIZE\tCONTEXT\tPATH")
	for _, p := range paths {
		m, err := engine.Load(p, engine.LoadOptions{Threads: 1})
		if err != nil {
			fmt.Fprintf(tw, "%s\t(error: %v)\t\t\t\t\t%s\n", filepath.Base(p), err, p)
			continue
		}
		i := m.Info
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", i.Name, i.Arch, humanCount(i.Params), i.Quant, humanBytes(i.FileSize), i.ContextTrain, p)
		m.Close()
	}
	return tw.Flush()
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
