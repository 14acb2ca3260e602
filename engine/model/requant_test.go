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

// TestRequantizeMixedTypes converts stories260K to Q8_0, which keeps the
// 172-wide ffn_down matrices F32: the logits must stay close to the F32
// model's. (A cached activation reused across layers once made a float
// layer between two quantized ones feed stale inputs: relative error 1+.)
func TestRequantizeMixedTypes(t *testing.T) {
	base, q := loadForRequant(t), loadForRequant(t)
	r, err := q.Requantize(quant.Options{Type: ggml.Q8_0})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, c := range r.Tensors {
		if c.Kept != "" {
			kept++
		}
	}
	if kept != 5 || r.Simulated {
		t.Fatalf("%d matrices kept (want the 5 ffn_down), simulated %v", kept, r.Simulated)
	}
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
