package model

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkAttnPrompt measures one layer's attention (no projections) of
// a 512-token prompt at position 0, per token ("pertoken": attnTask) and
// in blocks of queries ("block"), at TinyLlama and stories15M dims.
func BenchmarkAttnPrompt(b *testing.B) {
	const T = 512
	for _, sh := range attnShapes {
		path := writeBenchModel(b, sh)
		for _, threads := range []int{1, 2} {
			m := openBenchModel(b, path, threads)
			s := m.NewState(T, T)
			fillCache(s, T)
			q := make([]float32, T*m.NHead*m.HeadDim)
			for i := range q {
				q[i] = float32(math.Sin(float64(i)))
			}
			out := make([]float32, T*m.NHead*m.HeadDimV)
			for _, mode := range []string{"pertoken", "block"} {
				b.Run(fmt.Sprintf("%s/T%d/threads%d/%s", sh.name, T, threads, mode), func(b *testing.B) {
					s.pos = 0
					benchLoop(b, threads, func() {
						if mode == "pertoken" || !s.attendBlocks(0, T, q, out) {
							s.attend(0, T, q, out)
						}
					})
				})
			}
		}
	}
}

// BenchmarkPromptBlocks measures a 512-token prompt (FLOWCHAT_BENCH_PROMPT
// overrides) of the FLOWCHAT_BENCH_MODEL network from an empty cache with
// the prompt attention per token and in blocks; with one thread
// (FLOWCHAT_BENCH_THREADS) it reports the thread's CPU time per prompt.
func BenchmarkPromptBlocks(b *testing.B) {
	m := benchModel(b)
	defer m.Close()
	s, toks := benchPromptState(m, 512)
	n := len(toks)
	for _, mode := range []string{"pertoken", "block"} {
		b.Run(mode, func(b *testing.B) {
			s.SetBlockAttention(mode == "block")
			benchLoop(b, threadsFromEnv(), func() {
				s.Reset()
				if _, err := s.Forward(toks, false); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
