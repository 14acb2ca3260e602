package model

import "flowchat/engine/quant"

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

// Requantize converts the weight matrices to opt.Type (the output head, and
// a token embedding tied to it, to opt.OutputType when opt.SetOutput) in
// place, before any State is made: the load-time quantization of
// Inferflow, for its block formats and GGML's types alike. See quant.Plan
// for the matrices that stay as stored or become F16; the report says
// which and why.
func (m *Model) Requantize(opt quant.Options) (quant.Report, error) {
	if err := opt.Validate(); err != nil {
		return quant.Report{}, err
	}
	var r quant.Report
	for _, w := range m.Weights() {
		target := opt.Type
		if opt.SetOutput && w == m.Output.W {
			target = opt.OutputType
		}
		c := quant.Plan(w.Name, w.Type, w.Cols, w.Rows, target, opt.MinElements)
		if c.Kept == "" {
			var sim bool
			w.Type, w.Data, sim = quant.Encode(w.Plain(0, w.Rows), w.Type, w.Cols, w.Rows, c.To, opt.Threads)
			w.Rows4 = false
			r.Simulated = r.Simulated || sim
		}
		r.Tensors = append(r.Tensors, c)
	}
	return r, nil
}
