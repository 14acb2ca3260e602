package sample

import (
	"fmt"
	"testing"
)

// BenchmarkSample times one Sample+Accept over realistic-width logits.
// "default" is llama.cpp's default chain (top_k 40 first); "full-sort"
// turns top-k off so top_p must order the whole vocabulary.
func BenchmarkSample(b *testing.B) {
	for _, n := range []int{32000, 128000} {
		stream := logitStream(4, n)
		for _, name := range []string{"default", "full-sort", "penalties+dry", "mirostat2", "fsd"} {
			p := DefaultParams()
			p.Seed = 1
			switch name {
			case "full-sort":
				p.TopK = 0
			case "penalties+dry":
				p.RepeatPenalty, p.FrequencyPenalty, p.DRYMultiplier = 1.1, 0.1, 0.8
			case "mirostat2":
				p.Mirostat = 2
			case "fsd":
				p.Decoding = DecodingFSD
			}
			b.Run(fmt.Sprintf("%s/vocab=%d", name, n), func(b *testing.B) {
				s := mustNew(b, p, n)
				for i := 0; i < 512; i++ { // a prompt-sized history
					s.Accept(int32(i * 31 % n))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					s.Accept(s.Sample(stream[i%len(stream)]))
				}
			})
		}
	}
}
