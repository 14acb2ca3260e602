package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"

	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

func init() {
	register(command{name: "synth", summary: "write a random-weight llama-shaped GGUF (for benchmarks and tests)", run: cmdSynth})
}

// synthShape is a llama-family model shape.
type synthShape struct {
	dim, layers, heads, kvHeads, ff, vocab, ctx int
}

var synthPresets = map[string]synthShape{
	"tinyllama":   {2048, 22, 32, 4, 5632, 32000, 2048},
	"stories110m": {768, 12, 12, 12, 2048, 32000, 1024},
	"stories15m":  {288, 6, 6, 6, 768, 32000, 256},
	// Llama-3-8B's dimensions (issue 15's GPU benchmark shape).
	"llama3-8b": {4096, 32, 32, 8, 14336, 128256, 8192},
}

func cmdSynth(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("synth", stdout, stderr)
	preset := fs.String("shape", "tinyllama", "tinyllama | stories110m | stories15m | llama3-8b")
	typ := fs.String("type", "Q4_0", "file type as llama-quantize names it: F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K_S, Q4_K_M, Q5_K_M, Q6_K, … (any GGML type name)")
	pure := fs.Bool("pure", false, "every 2-D tensor of --type (no llama-quantize mix: output.weight, attn_v, ffn_down get no extra bits)")
	out := fs.String("out", "", "output GGUF file")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	sh, ok := synthPresets[*preset]
	mix, err := parseFileType(*typ, *pure)
	if !ok || err != nil || *out == "" {
		return fmt.Errorf("%w: want --shape tinyllama|stories110m|stories15m|llama3-8b, a known --type and --out FILE", errUsage)
	}
	w := synthWriter(sh, mix, *seed)
	if err := w.WriteFile(*out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s (%s, %s)\n", *out, *preset, mix.name)
	return nil
}

func synthWriter(sh synthShape, mix fileType, seed uint64) *gguf.Writer {
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.name", "random-llama")
	w.Set("general.description", "RANDOM WEIGHTS (flowchat synth)")
	w.Set("llama.context_length", uint32(sh.ctx))
	w.Set("llama.embedding_length", uint32(sh.dim))
	w.Set("llama.block_count", uint32(sh.layers))
	w.Set("llama.feed_forward_length", uint32(sh.ff))
	w.Set("llama.attention.head_count", uint32(sh.heads))
	w.Set("llama.attention.head_count_kv", uint32(sh.kvHeads))
	w.Set("llama.attention.layer_norm_rms_epsilon", float32(1e-5))
	w.Set("llama.rope.dimension_count", uint32(sh.dim/sh.heads))
	synthVocab(w, sh.vocab)
	tensorSeed := func(name string) uint64 { // FNV-1a of the name, mixed with the seed
		h := uint64(14695981039346656037)
		for i := 0; i < len(name); i++ {
			h = (h ^ uint64(name[i])) * 1099511628211
		}
		return h ^ seed*0x9e3779b97f4a7c15
	}
	mat := func(name string, cols, rows int) {
		typ := mix.tensorType(name, cols, sh.layers, false)
		w.AddTensorFunc(name, typ, []uint64{uint64(cols), uint64(rows)}, randomRows(tensorSeed(name), cols, rows, typ, 1/math.Sqrt(float64(cols))))
	}
	vec := func(name string, n int) {
		w.AddTensorFunc(name, ggml.F32, []uint64{uint64(n)}, randomRows(tensorSeed(name), n, 1, ggml.F32, 0))
	}
	kvDim := sh.dim / sh.heads * sh.kvHeads
	mat("token_embd.weight", sh.dim, sh.vocab)
	for i := 0; i < sh.layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		vec(p+"attn_norm.weight", sh.dim)
		mat(p+"attn_q.weight", sh.dim, sh.dim)
		mat(p+"attn_k.weight", sh.dim, kvDim)
		mat(p+"attn_v.weight", sh.dim, kvDim)
		mat(p+"attn_output.weight", sh.dim, sh.dim)
		vec(p+"ffn_norm.weight", sh.dim)
		mat(p+"ffn_gate.weight", sh.dim, sh.ff)
		mat(p+"ffn_up.weight", sh.dim, sh.ff)
		mat(p+"ffn_down.weight", sh.ff, sh.dim)
	}
	vec("output_norm.weight", sh.dim)
	mat("output.weight", sh.dim, sh.vocab)
	return w
}

// randomRows returns a writer of rows × cols normal values with standard
// deviation std (std 0 writes norm gains 1 + N(0, 0.1)), converted to typ.
// Rows are made in chunks of 64 on every core, each chunk from its own
// generator seeded by (seed, chunk), so the file depends only on the seed.
func randomRows(seed uint64, cols, rows int, typ ggml.Type, std float64) func(io.Writer) error {
	return func(out io.Writer) error {
		const chunk = 64
		rs := typ.RowSize(cols)
		nChunks := (rows + chunk - 1) / chunk
		workers := min(runtime.NumCPU(), nChunks)
		bufs := make([][]byte, nChunks)
		ready := make([]chan struct{}, nChunks)
		for i := range ready {
			ready[i] = make(chan struct{})
		}
		next := make(chan int, nChunks)
		for c := 0; c < nChunks; c++ {
			next <- c
		}
		close(next)
		// At most 2·workers chunks are held at once: a worker waits for the
		// writer before starting a chunk too far ahead.
		window := make(chan struct{}, 2*workers)
		for w := 0; w < workers; w++ {
			go func() {
				row := make([]float32, cols)
				for {
					window <- struct{}{} // before taking a chunk, so the lowest unwritten one always holds a slot
					c, ok := <-next
					if !ok {
						<-window
						return
					}
					rng := rand.New(rand.NewPCG(seed, uint64(c)))
					r0, r1 := c*chunk, min(rows, (c+1)*chunk)
					buf := make([]byte, (r1-r0)*rs)
					for r := r0; r < r1; r++ {
						for i := range row {
							if std == 0 {
								row[i] = float32(1 + 0.1*rng.NormFloat64())
							} else {
								row[i] = float32(std * rng.NormFloat64())
							}
						}
						ggml.QuantizeRow(typ, row, buf[(r-r0)*rs:(r-r0+1)*rs])
					}
					bufs[c] = buf
					close(ready[c])
				}
			}()
		}
		var err error
		for c := 0; c < nChunks; c++ {
			<-ready[c]
			if err == nil {
				_, err = out.Write(bufs[c])
			}
			bufs[c] = nil
			<-window
		}
		return err
	}
}

// synthVocab writes a SentencePiece-style vocabulary: specials, the 256
// byte tokens, then filler pieces.
func synthVocab(w *gguf.Writer, n int) {
	toks := make([]string, n)
	scores := make([]float32, n)
	types := make([]int32, n)
	toks[0], toks[1], toks[2] = "<unk>", "<s>", "</s>"
	types[0], types[1], types[2] = 2, 3, 3
	for b := 0; b < 256; b++ {
		toks[3+b], types[3+b] = fmt.Sprintf("<0x%02X>", b), 6
	}
	for i := 259; i < n; i++ {
		toks[i], types[i], scores[i] = fmt.Sprintf("▁t%d", i), 1, -float32(i)
	}
	w.Set("tokenizer.ggml.model", "llama")
	w.Set("tokenizer.ggml.tokens", toks)
	w.Set("tokenizer.ggml.scores", scores)
	w.Set("tokenizer.ggml.token_type", types)
	w.Set("tokenizer.ggml.bos_token_id", uint32(1))
	w.Set("tokenizer.ggml.eos_token_id", uint32(2))
}
