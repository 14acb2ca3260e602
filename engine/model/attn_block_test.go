package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBlockAttentionMatchesPerToken: prompts through the block path give
// the per-token path's logits bit for bit, over architectures with RoPE,
// grouped-query heads, ALiBi (bloom), softcapping, sliding windows (wider
// and narrower than a block), parallel blocks, one and two threads, batches that start
// after cached tokens, and batch sizes that leave ragged blocks.
func TestBlockAttentionMatchesPerToken(t *testing.T) {
	cases := []struct {
		file   string
		adjust func(m *Model)
	}{
		{"models/stories260K/stories260K-F32.gguf", nil},
		{"arch/rand-llama-gqa-F32.gguf", nil},
		{"arch/rand-bloom-F32.gguf", nil},
		{"arch/rand-gemma-F32.gguf", func(m *Model) { m.AttnSoftcap = 2 }},
		{"arch/rand-gemma-F32.gguf", func(m *Model) { m.SlidingWindow, m.SlidingPattern = 9, 2 }},
		{"arch/rand-gemma-F32.gguf", func(m *Model) { m.SlidingWindow, m.SlidingPattern = 2, 1 }},
		{"arch/rand-gemma-F32.gguf", func(m *Model) { m.SlidingWindow, m.SlidingPattern = 5, 1 }},
		{"arch/rand-bloom-F32.gguf", func(m *Model) { m.SlidingWindow, m.SlidingPattern = 6, 1 }},
		{"arch/rand-gpt2-F32.gguf", nil},
		{"arch/rand-phi3-F32.gguf", nil},
		{"arch/rand-qwen2-F32.gguf", nil},
		{"arch/rand-falcon-F32.gguf", nil},
		{"arch/rand-stablelm-F32.gguf", nil},
	}
	for _, c := range cases {
		for _, threads := range []int{1, 2} {
			m := loadSplitFixture(t, c.file, threads)
			if c.adjust != nil {
				c.adjust(m)
			}
			r := rand.New(rand.NewPCG(uint64(threads), 71))
			prompt := make([]int32, 45)
			for i := range prompt {
				prompt[i] = int32(r.IntN(m.NVocab))
			}
			for _, batch := range []int{7, 16, 45} {
				run := func(block bool) ([]float32, int) {
					s := m.NewState(64, batch)
					s.SetBlockAttention(block)
					var all []float32
					// A first call of 5 tokens, then the rest: later batches
					// start after cached tokens.
					for _, part := range [][]int32{prompt[:5], prompt[5:]} {
						lg, err := s.Forward(part, true)
						if err != nil {
							t.Fatal(err)
						}
						all = append(all, lg...)
					}
					return all, s.bt.calls
				}
				want, off := run(false)
				got, on := run(true)
				if off != 0 || on == 0 {
					t.Fatalf("%s: block path ran %d times off, %d on", c.file, off, on)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s threads=%d batch=%d: logit %d block %v, per token %v", c.file, threads, batch, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestBlockAttentionEncoder: a non-causal encoder's (BERT's) hidden states
// are the same through both paths, bit for bit (the steps of Embed).
func TestBlockAttentionEncoder(t *testing.T) {
	for _, threads := range []int{1, 2} {
		m := loadSplitFixture(t, "arch/rand-bert-F32.gguf", threads)
		if m.causal {
			t.Fatal("BERT fixture is causal")
		}
		r := rand.New(rand.NewPCG(uint64(threads), 73))
		toks := make([]int32, 23)
		for i := range toks {
			toks[i] = int32(r.IntN(m.NVocab))
		}
		run := func(block bool) ([]float32, int) {
			s := m.NewState(len(toks), len(toks))
			s.SetBlockAttention(block)
			s.solo[0] = Segment{Seq: s, Tokens: toks}
			s.forwardSegs(s.solo[:])
			return s.x[:len(toks)*m.NEmbd], s.bt.calls
		}
		want, _ := run(false)
		got, calls := run(true)
		if calls == 0 {
			t.Fatal("block path not used")
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("threads=%d: hidden %d block %v, per token %v", threads, i, got[i], want[i])
			}
		}
	}
}
