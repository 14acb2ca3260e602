// Package eval measures what quantization costs a model: perplexity over a
// text (computed as llama-perplexity does, so numbers are comparable), KL
// divergence and top-1 agreement against a full-precision base, weight-error
// statistics per tensor, and the per-level report of the Quantization Lab.
package eval

import (
	"errors"
	"fmt"
	"math"

	"flowchat/engine/ggml"
	"flowchat/engine/model"
)

// Scorer evaluates tokens from an empty cache and returns every position's
// logits, [len(tokens) × vocab] (engine.Model does).
type Scorer interface {
	Logits(tokens []int32) ([]float32, error)
}

// ChunkOptions split a token stream as llama-perplexity does: non-overlapping
// chunks of Ctx tokens, the first token of each replaced by BOS, and the
// second half of each chunk scored (rows Ctx/2 … Ctx−2 predict the tokens
// after them).
type ChunkOptions struct {
	Ctx       int   // tokens per chunk (llama-perplexity -c)
	BOS       int32 // put at the start of every chunk; < 0 leaves the text's token
	MaxChunks int   // 0 = every whole chunk
}

// first is the first scored row of a chunk.
func (o ChunkOptions) first() int { return o.Ctx / 2 }

// scored is the number of scored rows per chunk.
func (o ChunkOptions) scored() int { return o.Ctx - o.first() - 1 }

func (o ChunkOptions) chunks(nTokens int) (int, error) {
	if o.Ctx < 4 {
		return 0, fmt.Errorf("eval: a context of %d tokens is too small (at least 4)", o.Ctx)
	}
	n := nTokens / o.Ctx
	if o.MaxChunks > 0 {
		n = min(n, o.MaxChunks)
	}
	if n == 0 {
		return 0, fmt.Errorf("eval: the text has %d tokens, fewer than one chunk of %d", nTokens, o.Ctx)
	}
	return n, nil
}

// ErrStopped is returned when a progress callback asks to stop.
var ErrStopped = errors.New("eval: stopped")

// chunkFunc receives chunk i's tokens (BOS applied) and the logits of its
// scored rows, [scored × vocab].
type chunkFunc func(i int, chunk []int32, logits []float32, vocab int) error

// eachChunk evaluates the chunks of tokens in order.
func eachChunk(s Scorer, tokens []int32, opt ChunkOptions, fn chunkFunc) error {
	n, err := opt.chunks(len(tokens))
	if err != nil {
		return err
	}
	chunk := make([]int32, opt.Ctx)
	for i := 0; i < n; i++ {
		copy(chunk, tokens[i*opt.Ctx:(i+1)*opt.Ctx])
		if opt.BOS >= 0 {
			chunk[0] = opt.BOS
		}
		logits, err := s.Logits(chunk)
		if err != nil {
			return fmt.Errorf("eval: chunk %d: %w", i+1, err)
		}
		if len(logits)%opt.Ctx != 0 || len(logits) == 0 {
			return fmt.Errorf("eval: chunk %d: %d logits for %d tokens", i+1, len(logits), opt.Ctx)
		}
		vocab := len(logits) / opt.Ctx
		rows := logits[opt.first()*vocab : (opt.Ctx-1)*vocab]
		if err := fn(i, chunk, rows, vocab); err != nil {
			return err
		}
	}
	return nil
}

// PPL accumulates negative log-likelihoods as llama-perplexity does.
type PPL struct {
	nll, nll2 float64
	count     int
}

// Add records one token's negative log-likelihood.
func (p *PPL) Add(nll float64) {
	p.nll += nll
	p.nll2 += nll * nll
	p.count++
}

// Count is the number of scored tokens.
func (p *PPL) Count() int { return p.count }

// Value is exp(mean NLL).
func (p *PPL) Value() float64 {
	if p.count == 0 {
		return math.NaN()
	}
	return math.Exp(p.nll / float64(p.count))
}

// StdErr is llama-perplexity's uncertainty: PPL·sqrt(var(NLL)/(n−1)).
func (p *PPL) StdErr() float64 {
	if p.count < 2 {
		return 0
	}
	mean := p.nll / float64(p.count)
	v := p.nll2/float64(p.count) - mean*mean
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v/float64(p.count-1)) * p.Value()
}

// PerplexityResult is the outcome of a perplexity run.
type PerplexityResult struct {
	PPL     float64   `json:"ppl"`
	StdErr  float64   `json:"ppl_stderr"`
	Chunks  int       `json:"chunks"`
	Tokens  int       `json:"tokens"`  // scored tokens
	Running []float64 `json:"running"` // perplexity after each chunk
}

func (p *PPL) result(running []float64) PerplexityResult {
	return PerplexityResult{PPL: p.Value(), StdErr: p.StdErr(), Chunks: len(running), Tokens: p.count, Running: running}
}

// Perplexity scores tokens (a whole text tokenized with BOS, as
// llama-perplexity does). onChunk, if set, sees the running perplexity after
// each chunk and may return false to stop (ErrStopped).
func Perplexity(s Scorer, tokens []int32, opt ChunkOptions, onChunk func(i, n int, running float64) bool) (PerplexityResult, error) {
	n, err := opt.chunks(len(tokens))
	if err != nil {
		return PerplexityResult{}, err
	}
	var p PPL
	var running []float64
	err = eachChunk(s, tokens, opt, func(i int, chunk []int32, logits []float32, vocab int) error {
		for r := 0; r < opt.scored(); r++ {
			tok := int(chunk[opt.first()+r+1])
			if tok < 0 || tok >= vocab {
				return fmt.Errorf("eval: token %d outside the vocabulary (%d)", tok, vocab)
			}
			p.Add(logSumExp(logits[r*vocab:(r+1)*vocab]) - float64(logits[r*vocab+tok]))
		}
		running = append(running, p.Value())
		if onChunk != nil && !onChunk(i, n, p.Value()) {
			return ErrStopped
		}
		return nil
	})
	return p.result(running), err
}

// logSumExp is log Σ exp(x) over one row, accumulated in float64.
func logSumExp(x []float32) float64 {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v - m))
	}
	return float64(m) + math.Log(s)
}

// NetScorer scores with a network directly, choosing its KV cache type
// (F32, F16, Q8_0); engine.Model.Logits always uses float32.
type NetScorer struct {
	Net    *model.Model
	KVType ggml.Type
}

// Logits evaluates tokens from an empty cache of s.KVType.
func (s NetScorer) Logits(tokens []int32) ([]float32, error) {
	st := s.Net.NewState(max(len(tokens), 1), 256)
	if err := st.SetKVType(s.KVType); err != nil {
		return nil, err
	}
	out, err := st.Forward(tokens, true)
	if err != nil {
		return nil, err
	}
	return append([]float32(nil), out...), nil
}
