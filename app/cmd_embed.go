package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

func init() {
	register(command{name: "embed", summary: "print the embedding of a text (encoder models such as BERT) as JSON", run: cmdEmbed})
}

func cmdEmbed(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed", stdout, stderr)
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("prompt", "", "the text to embed")
	fs.StringVar(prompt, "p", "", "shorthand for --prompt")
	perToken := fs.Bool("per-token", false, "also print every token's vector")
	normalize := fs.Bool("normalize", false, "scale the pooled vector to unit length")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *prompt == "" {
		if fs.NArg() == 0 {
			return fmt.Errorf("%w (flowchat embed --model M --prompt TEXT)", errNoPrompt)
		}
		*prompt = fs.Arg(0)
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	e, err := m.Embed(*prompt)
	if err != nil {
		return err
	}
	if *normalize {
		unitLength(e.Pooled)
	}
	out := map[string]any{"tokens": e.Tokens, "embedding": e.Pooled}
	if *perToken {
		out["per_token"] = e.PerToken
	}
	return json.NewEncoder(stdout).Encode(out)
}

// unitLength scales v to Euclidean norm 1 (cosine-similarity use).
func unitLength(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
