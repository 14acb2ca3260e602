package model

import (
	"math"
	"testing"

	"flowchat/engine/ggml"
	"flowchat/engine/quant"
)

// TestSpanPrepared: where a decode step's attention runs one task per
// head and its gated activation is split over the pool (an FFN of 1024 or
// more at 2 threads), with the output and down projections in the tile
// layout, the heads and the spans prepare those products' inputs
// (ggml.Act.FillSpan) instead of the caller: the logits token by token at
// 2 threads must have the bits of the same model's at 1 thread (no span
// split) and of one prompt batch, for Q4_0 and Q8_0.
func TestSpanPrepared(t *testing.T) {
	if !ggml.Rows4(ggml.Q4_0) || ggml.InterleaveGroup(ggml.Q4_0) != 16 {
		t.Skip("skipping: no Q4_0 tile layout here (it needs AVX2 and a build without noasm)")
	}
	path := writeBenchModel(t, benchShape{"span", 256, 2, 4, 2, 1024, 64})
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		var logits [][]float32
		for _, threads := range []int{2, 1} {
			m := openBenchModel(t, path, threads)
			if _, err := m.Requantize(quant.Options{Type: typ, Threads: 2}); err != nil {
				t.Fatal(err)
			}
			if n := m.InterleaveRows4(2); n == 0 {
				t.Fatalf("%v: no matrix in the tile layout", typ)
			}
			down := m.Layers[0].FFN.Down.W
			if !down.Rows4 || down.Type != typ {
				t.Fatalf("%v: ffn_down is %v, tile layout %v", typ, down.Type, down.Rows4)
			}
			prompt := randPrompt(m, 20, 3)
			s := m.NewState(64, 1)
			step := promptLogits(t, s, prompt)
			if threads == 2 {
				if s.spanPreps != 2*2*len(prompt) { // O and down, in every layer of every step
					t.Fatalf("%v: the spans did not prepare the down projection's input", typ)
				}
				batch := promptLogits(t, m.NewState(64, 32), prompt)
				same(t, typ.String()+" batch against token by token at 2 threads", batch, step)
			}
			logits = append(logits, step)
		}
		same(t, typ.String()+" token by token, 1 thread against 2", logits[1], logits[0])
	}
}

func same(t *testing.T, what string, want, got []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: logit %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}
