package model

import (
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/quant"
)

func loadForRequant(t *testing.T) *Model {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := FromGGUF(f, nil, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestRequantizeMixedTypes converts stories260K to Q8_0 with attn_k and
// attn_v kept F32 (below MinElements) and the 172-wide ffn_down turned F16
// (not whole blocks): the logits must stay close to the F32 model's.
func TestRequantizeMixedTypes(t *testing.T) {
	base, q := loadForRequant(t), loadForRequant(t)
	r, err := q.Requantize(quant.Options{Type: ggml.Q8_0, MinElements: 4096})
	if err != nil {
		t.Fatal(err)
	}
	kept, f16 := 0, 0
	for _, c := range r.Tensors {
		if c.Kept != "" {
			kept++
		}
		if c.To == ggml.F16 {
			f16++
		}
	}
	if kept != 10 || f16 != 5 || r.Simulated {
		t.Fatalf("%d matrices kept (want attn_k, attn_v), %d F16 (want ffn_down), simulated %v", kept, f16, r.Simulated)
	}
	checkClose(t, base, q)
}

// TestFloatBetweenQuantized converts only the attn_q matrices: every other
// product of a layer is F32, so the next layer's attn_q input must not be
// taken for the previous layer's (the activation cache is keyed by buffer;
// without clearing it on float products the logits were off by 0.2+).
func TestFloatBetweenQuantized(t *testing.T) {
	base, q := loadForRequant(t), loadForRequant(t)
	for i := range q.Layers {
		w := q.Layers[i].Attn.Q.W
		w.Type, w.Data, _ = quant.Encode(w.Data, w.Type, w.Cols, w.Rows, ggml.Q8_0, 1)
	}
	checkClose(t, base, q)
}

// checkClose compares the logits of two versions of a model over a prompt:
// Q8_0 weights move them by well under 2% (relative RMS).
func checkClose(t *testing.T, base, q *Model) {
	t.Helper()
	tokens := []int32{1, 403, 407, 261, 378, 291, 376, 400, 428, 286, 296, 418}
	want, _ := base.NewState(64, 4).Forward(tokens, true)
	got, _ := q.NewState(64, 4).Forward(tokens, true)
	var num, den float64
	for i := range want {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if rel := math.Sqrt(num / den); rel > 0.02 {
		t.Fatalf("Q8_0 logits differ from F32 by %.3f (relative RMS)", rel)
	}
}
