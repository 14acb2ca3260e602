package model

import (
	"fmt"
)

// Encoder-only networks (BERT family) reuse the decoder's blocks with
// bidirectional attention: post-LN layers bind attn_output_norm and
// layer_output_norm, token types and learned positions are embedding
// tensors, and there is no LM head. Their output is embeddings.

// IsEncoder reports whether the network is encoder-only.
func (m *Model) IsEncoder() bool { return m.Spec.Network.Type == "transformer.encoder_only" }

// Embed runs tokens through the network in one bidirectional pass and
// returns the final hidden state of every token, [len(tokens) × NEmbd],
// and the pooled vector [NEmbd] (the spec's pooling: mean, cls = first
// token, none = last token).
func (m *Model) Embed(tokens []int32) (hidden, pooled []float32, err error) {
	if len(tokens) == 0 {
		return nil, nil, fmt.Errorf("model: nothing to embed")
	}
	if m.PosEmbd != nil && len(tokens) > m.PosEmbd.Rows {
		return nil, nil, fmt.Errorf("%w (%d tokens, %d positions)", ErrContextFull, len(tokens), m.PosEmbd.Rows)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.NVocab {
			return nil, nil, fmt.Errorf("token id %d outside the vocabulary (%d)", t, m.NVocab)
		}
	}
	// One batch: every token must see every other.
	s := m.NewState(len(tokens), len(tokens))
	T, d := len(tokens), m.NEmbd
	s.solo[0] = Segment{Seq: s, Tokens: tokens}
	s.forwardSegs(s.solo[:])
	hidden = s.x[:T*d]
	normRows(m.OutNorm, hidden, hidden, d)
	return hidden, pool(hidden, T, d, m.Spec.Network.Pooling), nil
}

// pool reduces [T × d] hidden states to one vector.
func pool(h []float32, T, d int, how string) []float32 {
	out := make([]float32, d)
	switch how {
	case "cls":
		copy(out, h[:d])
	case "none":
		copy(out, h[(T-1)*d:])
	default: // mean
		for t := 0; t < T; t++ {
			add(out, h[t*d:(t+1)*d])
		}
		inv := 1 / float32(T)
		for i := range out {
			out[i] *= inv
		}
	}
	return out
}
