package engine

import (
	"errors"
	"fmt"
)

// ErrNotEncoder is returned when embeddings are asked of a model that does
// not produce them (decoder-only or encoder-decoder networks).
var ErrNotEncoder = errors.New("engine: the model is not an encoder (embeddings need a BERT-style network)")

// Embedding is the output of an encoder for one text.
type Embedding struct {
	Tokens   []int32     // the input ids (with the tokenizer's CLS/SEP)
	PerToken [][]float32 // final hidden state per token, [len(Tokens)][n_embd]
	Pooled   []float32   // pooled per the model's spec (mean, cls, none=last)
}

// Embed encodes text and runs an encoder-only network over it. This is the
// engine side of an OpenAI-style /v1/embeddings request.
func (m *Model) Embed(text string) (*Embedding, error) {
	if !m.Net.IsEncoder() {
		return nil, ErrNotEncoder
	}
	ids := m.Tok.Encode(text, true, false)
	if len(ids) == 0 {
		return nil, fmt.Errorf("engine: %q encodes to no tokens", text)
	}
	m.runMu.Lock()
	hidden, pooled, err := m.Net.Embed(ids)
	m.runMu.Unlock()
	if err != nil {
		return nil, err
	}
	e := &Embedding{Tokens: ids, Pooled: pooled}
	d := m.Net.NEmbd
	for t := range ids {
		e.PerToken = append(e.PerToken, append([]float32(nil), hidden[t*d:(t+1)*d]...))
	}
	return e, nil
}
