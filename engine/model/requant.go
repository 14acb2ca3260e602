package model

// Weights returns every weight matrix the network multiplies by (token,
// position and type embeddings, the output head, each layer's projections),
// each once even when shared (tied embeddings). Norm gains and biases are
// held as float32 and are not included. Re-quantization at load
// (engine/quant.Requantize) and weight-error statistics (engine/eval) walk
// this list; it must name every *Weight that Build binds.
func (m *Model) Weights() []*Weight {
	var out []*Weight
	seen := map[*Weight]bool{}
	add := func(w *Weight) {
		if w != nil && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	add(m.TokEmbd)
	add(m.PosEmbd)
	add(m.TypeEmbd)
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, lin := range []Linear{l.Attn.Q, l.Attn.K, l.Attn.V, l.Attn.QKV, l.Attn.O, l.FFN.Gate, l.FFN.Up, l.FFN.Down} {
			add(lin.W)
		}
	}
	add(m.Output.W)
	return out
}
