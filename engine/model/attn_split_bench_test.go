package model

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// benchShape is a llama-shaped network for the split-attention benchmarks.
type benchShape struct {
	name                                   string
	dim, layers, heads, kvHeads, ff, vocab int
}

var (
	// Attention of TinyLlama (32 query heads over 4 KV heads of 64) and of
	// stories15M (6 heads of 48); one layer, a token FFN.
	attnShapes = []benchShape{{"tinyllama", 2048, 1, 32, 4, 64, 64}, {"stories15m", 288, 1, 6, 6, 64, 64}}
	// The whole stories15M network but for a 512-token vocabulary.
	decodeShape = benchShape{"stories15m", 288, 6, 6, 6, 768, 512}
)

// writeBenchModel writes a random-weight F32 llama GGUF of shape sh.
func writeBenchModel(b testing.TB, sh benchShape) string {
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("llama.context_length", uint32(8192))
	w.Set("llama.embedding_length", uint32(sh.dim))
	w.Set("llama.block_count", uint32(sh.layers))
	w.Set("llama.feed_forward_length", uint32(sh.ff))
	w.Set("llama.attention.head_count", uint32(sh.heads))
	w.Set("llama.attention.head_count_kv", uint32(sh.kvHeads))
	w.Set("llama.attention.layer_norm_rms_epsilon", float32(1e-5))
	w.Set("llama.rope.dimension_count", uint32(sh.dim/sh.heads))
	rng := rand.New(rand.NewPCG(5, 6))
	mat := func(name string, cols, rows int, std float64) {
		w.AddTensorFunc(name, ggml.F32, []uint64{uint64(cols), uint64(rows)}, func(out io.Writer) error {
			row := make([]float32, cols)
			for range rows {
				for i := range row {
					row[i] = float32(std * rng.NormFloat64())
					if std == 0 {
						row[i] = 1
					}
				}
				if _, err := out.Write(ggml.F32Bytes(row)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	kv := sh.dim / sh.heads * sh.kvHeads
	std := 1 / math.Sqrt(float64(sh.dim))
	mat("token_embd.weight", sh.dim, sh.vocab, 1)
	for i := range sh.layers {
		p := fmt.Sprintf("blk.%d.", i)
		mat(p+"attn_norm.weight", sh.dim, 1, 0)
		mat(p+"attn_q.weight", sh.dim, sh.dim, std)
		mat(p+"attn_k.weight", sh.dim, kv, std)
		mat(p+"attn_v.weight", sh.dim, kv, std)
		mat(p+"attn_output.weight", sh.dim, sh.dim, std)
		mat(p+"ffn_norm.weight", sh.dim, 1, 0)
		mat(p+"ffn_gate.weight", sh.dim, sh.ff, std)
		mat(p+"ffn_up.weight", sh.dim, sh.ff, std)
		mat(p+"ffn_down.weight", sh.ff, sh.dim, 1/math.Sqrt(float64(sh.ff)))
	}
	mat("output_norm.weight", sh.dim, 1, 0)
	mat("output.weight", sh.dim, sh.vocab, std)
	path := filepath.Join(b.TempDir(), sh.name+".gguf")
	if err := w.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	return path
}

func openBenchModel(b testing.TB, path string, threads int) *Model {
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	m, err := FromGGUF(f, nil, Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	return m
}

// fillCache puts n random tokens' keys and values (unit normal: scores
// of a few units, softmax weights spread over many keys) in every layer.
func fillCache(s *State, n int) {
	r := rand.New(rand.NewPCG(7, 8))
	for l := range s.kCache {
		for _, c := range [][]float32{s.kCache[l], s.vCache[l]} {
			per := len(c) / s.nCtx
			for i := range c[:n*per] {
				c[i] = float32(r.NormFloat64())
			}
		}
	}
}

// splitModes are the benchmarks' settings: one task per head, and chunks
// of 128, 256 (the default) and 512 keys.
var splitModes = []struct {
	name   string
	minKey int
	chunk  int
}{{"off", 0, 0}, {"chunk128", splitMinKeys, 128}, {"chunk256", splitMinKeys, 256}, {"chunk512", splitMinKeys, 512}}

// benchCtx is the keys a benchmarked step attends to (FLOWCHAT_BENCH_CTX
// overrides 4096).
func benchCtx() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("FLOWCHAT_BENCH_CTX"), &n); err == nil && n > 0 {
		return n
	}
	return 4096
}

// benchLoop runs body b.N times on a locked thread; with one thread (the
// pool then runs every task on the caller) it also reports the thread's
// CPU time per op, which a loaded machine's neighbours disturb much less
// than wall time.
func benchLoop(b *testing.B, threads int, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	t0 := threadCPU()
	for b.Loop() {
		body()
	}
	if t1 := threadCPU(); threads == 1 && t1 != 0 {
		b.ReportMetric(float64(t1-t0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkAttnSplit measures one layer's decode attention (the pool pass
// and the combine, no projections) over a full cache of benchCtx keys.
func BenchmarkAttnSplit(b *testing.B) {
	n := benchCtx()
	for _, sh := range attnShapes {
		path := writeBenchModel(b, sh)
		for _, threads := range []int{1, 2} {
			m := openBenchModel(b, path, threads)
			s := m.NewState(n, 1)
			fillCache(s, n)
			q := make([]float32, m.NHead*m.HeadDim)
			for i := range q {
				q[i] = float32(math.Sin(float64(i)))
			}
			out := make([]float32, m.NHead*m.HeadDimV)
			for _, mode := range splitModes {
				b.Run(fmt.Sprintf("%s/ctx%d/threads%d/%s", sh.name, n, threads, mode.name), func(b *testing.B) {
					s.SetAttnSplit(mode.minKey, mode.chunk)
					s.pos = n - 1
					benchLoop(b, threads, func() { s.attend(0, 1, q, out) })
					st := s.AttnSplitStats()
					b.ReportMetric(float64(st.Fallbacks), "fallbacks")
				})
			}
		}
	}
}

// BenchmarkDecodeSplit measures a whole decode step at position benchCtx−1
// of a stories15M-shaped F32 network (a 512-token vocabulary, so that the
// attention's share is visible).
func BenchmarkDecodeSplit(b *testing.B) {
	n := benchCtx()
	path := writeBenchModel(b, decodeShape)
	for _, threads := range []int{1, 2} {
		m := openBenchModel(b, path, threads)
		s := m.NewState(n, 1)
		fillCache(s, n)
		for _, mode := range splitModes {
			b.Run(fmt.Sprintf("%s/ctx%d/threads%d/%s", decodeShape.name, n, threads, mode.name), func(b *testing.B) {
				s.SetAttnSplit(mode.minKey, mode.chunk)
				benchLoop(b, threads, func() {
					s.pos = n - 1
					if _, err := s.Forward([]int32{5}, false); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}
