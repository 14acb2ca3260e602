package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"flowchat/engine/gguf"
	"flowchat/engine/quant"
)

func init() {
	register(command{name: "quantize", summary: "write a GGUF whose weight matrices are quantized to an Inferflow or GGML type", run: cmdQuantize})
}

func cmdQuantize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quantize", stdout, stderr)
	var rf requantFlags
	rf.register(fs)
	threads := fs.Int("threads", 0, "goroutines (default: all cores)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || rf.typ == "" {
		return fmt.Errorf("%w: flowchat quantize IN.gguf OUT.gguf --type Q3H", errUsage)
	}
	in, out := fs.Arg(0), fs.Arg(1)
	opt, _, err := rf.options(*threads)
	if err != nil {
		return err
	}
	f, err := gguf.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	t0 := time.Now()
	w, rep, err := quant.QuantizeFile(f, opt)
	if err != nil {
		return err
	}
	if err := w.WriteFile(out); err != nil {
		return err
	}
	for _, c := range rep.Tensors {
		switch {
		case c.Kept != "" && !strings.HasPrefix(c.Kept, "already"):
			fmt.Fprintf(stderr, "kept %s as %v: %s\n", c.Name, c.From, c.Kept)
		case c.Note != "":
			fmt.Fprintf(stderr, "%s: %s\n", c.Name, c.Note)
		}
	}
	fmt.Fprintf(stdout, "%s → %s in %.1fs: %s\n", in, out, time.Since(t0).Seconds(), rep.Summary())
	return nil
}
