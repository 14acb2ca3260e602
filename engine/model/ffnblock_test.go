package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ffnBlockFiles are fixtures of every block shape the FFN row blocks and the
// shared buffers of withBuffers meet: sequential blocks (llama, gemma's post
// norms, gpt2, phi3's fused gate), parallel ones (falcon), quantized
// weights whose activations go through actBuf.
var ffnBlockFiles = []string{
	"models/stories260K/stories260K-F32.gguf",
	"arch/rand-llama-gqa-F32.gguf",
	"arch/rand-llama-gqa-Q4_0.gguf",
	"arch/rand-llama-gqa-Q8_0.gguf",
	"arch/rand-llama-gqa-Q4_K_M-mix.gguf",
	"arch/rand-llama-gqa-Q6_K.gguf",
	"arch/rand-falcon-F32.gguf",
	"arch/rand-gemma-F32.gguf",
	"arch/rand-gpt2-F32.gguf",
	"arch/rand-phi3-F32.gguf",
	"arch/rand-stablelm-F32.gguf",
}

// promptLogits runs prompt through s in two calls (5 tokens, then the rest:
// the second batch starts after cached tokens) and returns every logit.
func promptLogits(t *testing.T, s *State, prompt []int32) []float32 {
	t.Helper()
	var all []float32
	for _, part := range [][]int32{prompt[:5], prompt[5:]} {
		lg, err := s.Forward(part, true)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, lg...)
	}
	return all
}

func randPrompt(m *Model, n int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 77))
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(r.IntN(m.NVocab))
	}
	return p
}

// TestFFNBlocksMatchWholeBatch: the FFN run in blocks of 1, 7 or 16 batch
// rows gives the same logits, bit for bit, as the whole batch at once (its
// matrix kernels give every (row, column) the same value at any batch
// width), for every block shape.
func TestFFNBlocksMatchWholeBatch(t *testing.T) {
	for _, file := range ffnBlockFiles {
		m := loadSplitFixture(t, file, 2)
		prompt := randPrompt(m, 45, 5)
		whole := m.NewState(64, 45)
		if whole.ffnRows != 45 {
			t.Fatalf("%s: a 45-row state runs its FFN in blocks of %d rows, want the whole batch", file, whole.ffnRows)
		}
		want := promptLogits(t, whole, prompt)
		for _, rows := range []int{1, 7, 16} {
			s := m.NewState(64, 45)
			s.ffnRows = rows
			got := promptLogits(t, s, prompt)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: FFN blocks of %d rows: logit %d = %v, whole batch %v", file, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// TestSharedBuffersMatchPerToken: a state whose batches are wide enough
// that withBuffers picks FFN blocks smaller than the batch (and in any case
// shares the attention's and the FFN's buffers, and xn with tmp and the
// FFN output in sequential blocks) gives the logits of one token at a time,
// whose buffers hold one row each.
func TestSharedBuffersMatchPerToken(t *testing.T) {
	for _, file := range ffnBlockFiles {
		m := loadSplitFixture(t, file, 2)
		prompt := randPrompt(m, 200, 9)
		wide := m.NewState(256, 256)
		if file == "models/stories260K/stories260K-F32.gguf" && wide.ffnRows >= 195 {
			t.Errorf("%s: 256-row state: FFN blocks of %d rows, want fewer than a batch", file, wide.ffnRows)
		}
		got := promptLogits(t, wide, prompt)
		want := promptLogits(t, m.NewState(256, 1), prompt)
		if e := relRMSDiff(got, want); e > 1e-5 || math.IsNaN(e) {
			t.Errorf("%s: %d-row FFN blocks of a 256-row state: logits differ from token by token by %.2e", file, wide.ffnRows, e)
		} else {
			t.Logf("%s: FFN blocks of %d rows, logits within %.1e of token by token", file, wide.ffnRows, e)
		}
	}
}
