package model

import (
	"os"
	"strconv"
	"testing"

	"flowchat/engine/gguf"
)

// BenchmarkDecode measures one decode step on the model named by
// FLOWCHAT_BENCH_MODEL (e.g. a TinyLlama-shaped file from `flowchat synth`),
// with FLOWCHAT_BENCH_THREADS threads, weights in huge pages as the bench
// command loads them (FLOWCHAT_BENCH_MMAP=1: in the file mapping).
func BenchmarkDecode(b *testing.B) {
	m := benchModel(b)
	defer m.Close()
	s := m.NewState(b.N+8, 1)
	s.Forward([]int32{1}, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Forward([]int32{int32(i%100 + 3)}, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkPrefill measures a 128-token prompt (FLOWCHAT_BENCH_PROMPT
// overrides) from an empty cache; ns/op is per prompt.
func BenchmarkPrefill(b *testing.B) {
	m := benchModel(b)
	defer m.Close()
	s, toks := benchPromptState(m, 128)
	n := len(toks)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Reset()
		if _, err := s.Forward(toks, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

// benchPromptState is a state for a prompt of def tokens
// (FLOWCHAT_BENCH_PROMPT overrides) and such a prompt, of ordinary ids.
func benchPromptState(m *Model, def int) (*State, []int32) {
	n := def
	if v, err := strconv.Atoi(os.Getenv("FLOWCHAT_BENCH_PROMPT")); err == nil && v > 0 {
		n = v
	}
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(i*7919%(m.NVocab-3) + 3)
	}
	return m.NewState(n, 512), toks
}

// benchModel loads the benchmark model; the file and the huge-page copy
// are released when the benchmark ends.
func benchModel(b *testing.B) *Model {
	path := os.Getenv("FLOWCHAT_BENCH_MODEL")
	if path == "" {
		b.Skip("set FLOWCHAT_BENCH_MODEL to a GGUF file")
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	opt := Options{Threads: threadsFromEnv()}
	if os.Getenv("FLOWCHAT_BENCH_MMAP") == "1" {
		m, err := FromGGUF(f, nil, opt)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	m, release, err := FromGGUFHugePages(f, nil, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { release() })
	return m
}

func threadsFromEnv() int {
	switch os.Getenv("FLOWCHAT_BENCH_THREADS") {
	case "2":
		return 2
	case "4":
		return 4
	}
	return 1
}
