package model

import (
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

// TestDecodeStepAllocatesNothing: once a state exists, a decode step (and a
// short prompt batch) allocates nothing, with one and two threads, for
// float and quantized weights (the matrix kernels, the pool hand-offs and
// the attention included).
func TestDecodeStepAllocatesNothing(t *testing.T) {
	for _, file := range []string{
		"models/tinystories-656K/TinyStories-656K-F32.gguf",
		"models/tinystories-656K/TinyStories-656K-Q4_0.gguf",
		"models/tinystories-656K/TinyStories-656K-Q8_0.gguf",
		"models/tinystories-656K/TinyStories-656K-F16.gguf",
	} {
		path := fixtures.Path(t, file)
		for _, threads := range []int{1, 2} {
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := FromGGUF(f, nil, Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			s := m.NewState(512, 16)
			prompt := []int32{1, 80, 147, 201, 282, 57, 12, 9, 30, 41}
			if _, err := s.Forward(prompt, false); err != nil {
				t.Fatal(err)
			}
			tok := int32(5)
			step := testing.AllocsPerRun(50, func() {
				if _, err := s.Forward([]int32{tok}, false); err != nil {
					t.Fatal(err)
				}
			})
			s.Truncate(0)
			batch := testing.AllocsPerRun(10, func() {
				s.Truncate(0)
				if _, err := s.Forward(prompt, false); err != nil {
					t.Fatal(err)
				}
			})
			if step != 0 || batch != 0 {
				t.Errorf("%s, %d threads: %v allocations per decode step, %v per prompt", file, threads, step, batch)
			}
			m.Close()
			f.Close()
		}
	}
}
