package model

import (
	"os"
	"testing"

	"flowchat/engine/gguf"
)

// BenchmarkDecode measures one decode step on the model named by
// FLOWCHAT_BENCH_MODEL (e.g. a TinyLlama-shaped file from `flowchat synth`).
func BenchmarkDecode(b *testing.B) {
	path := os.Getenv("FLOWCHAT_BENCH_MODEL")
	if path == "" {
		b.Skip("set FLOWCHAT_BENCH_MODEL to a GGUF file")
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := FromGGUF(f, nil, Options{Threads: threadsFromEnv()})
	if err != nil {
		b.Fatal(err)
	}
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
