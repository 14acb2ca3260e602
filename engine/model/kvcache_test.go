package model

import (
	"math"
	"testing"

	"flowchat/engine/ggml"
)

var kvPrompt = []int32{1, 403, 407, 261, 378, 291, 376, 400, 428, 286, 296, 418, 372, 317, 269, 274, 287, 263, 377}

// logitsWithKV runs the prompt through a fresh state with the given cache
// type, in batches of batch tokens.
func logitsWithKV(t *testing.T, m *Model, kv ggml.Type, batch int) ([]float32, *State) {
	t.Helper()
	s := m.NewState(64, batch)
	if err := s.SetKVType(kv); err != nil {
		t.Fatal(err)
	}
	var out []float32
	for i := 0; i < len(kvPrompt); i += batch {
		l, err := s.Forward(kvPrompt[i:min(i+batch, len(kvPrompt))], true)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l...)
	}
	return out, s
}

func relRMSDiff(a, b []float32) float64 {
	var num, den float64
	for i := range b {
		d := float64(a[i] - b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

// TestKVCacheTypes compares F16 and Q8_0 caches with the float32 one on
// stories260K: logits close (within the rounding of the cached values),
// memory halved or at 34/128, and prefill in one batch equal to token by
// token (rows written at the right positions).
func TestKVCacheTypes(t *testing.T) {
	m := loadForRequant(t)
	want, s32 := logitsWithKV(t, m, ggml.F32, 32)
	for _, c := range []struct {
		typ   ggml.Type
		tol   float64
		ratio float64
	}{{ggml.F16, 2e-3, 0.5}, {ggml.Q8_0, 3e-2, 34.0 / 128}} {
		got, s := logitsWithKV(t, m, c.typ, 32)
		rel := relRMSDiff(got, want)
		t.Logf("%v cache: logits differ by %.2e (relative RMS), %d bytes", c.typ, rel, s.KVBytes())
		if rel > c.tol || rel == 0 {
			t.Errorf("%v cache: logits differ from the F32 cache's by %.2e", c.typ, rel)
		}
		if r := float64(s.KVBytes()) / float64(s32.KVBytes()); r != c.ratio {
			t.Errorf("%v cache: %.4f of the F32 cache's memory, want %.4f", c.typ, r, c.ratio)
		}
		if s.KVType() != c.typ {
			t.Errorf("KVType() = %v", s.KVType())
		}
		step, _ := logitsWithKV(t, m, c.typ, 1)
		if relRMSDiff(step, got) > 1e-6 {
			t.Errorf("%v cache: token-by-token logits differ from one batch by %.2e", c.typ, relRMSDiff(step, got))
		}
	}
}

func TestSetKVTypeErrors(t *testing.T) {
	m := loadForRequant(t)
	s := m.NewState(16, 4)
	if err := s.SetKVType(ggml.Q4_0); err == nil {
		t.Error("Q4_0 cache accepted")
	}
	if _, err := s.Forward([]int32{1, 2}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetKVType(ggml.F16); err == nil {
		t.Error("type changed with tokens in the cache")
	}
	s.Reset()
	if err := s.SetKVType(ggml.F16); err != nil {
		t.Errorf("after Reset: %v", err)
	}
}
