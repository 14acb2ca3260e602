package engine

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"testing"

	"flowchat/engine/fixtures"
)

// TestEmbed: the random BERT's pooled embedding of the reference sentence
// matches llama.cpp's (tokenized by our WordPiece, as llama-tokenize did).
func TestEmbed(t *testing.T) {
	m, err := Load(fixtures.Path(t, "arch/rand-bert-F32.gguf"), LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.Embed("Once upon a time, there was a little girl named Lily.")
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{2, 125, 129, 11, 112, 8, 99, 78, 11, 106, 236, 124, 89, 9, 3}
	if len(e.Tokens) != len(want) || len(e.PerToken) != len(want) {
		t.Fatalf("tokens %v", e.Tokens)
	}
	for i := range want {
		if e.Tokens[i] != want[i] {
			t.Fatalf("tokens %v, want %v", e.Tokens, want)
		}
	}
	raw, err := os.ReadFile(fixtures.Path(t, "reference/arch/bert/s0.pooled_mean.f32"))
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for i := range e.Pooled {
		r := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		num += (float64(e.Pooled[i]) - r) * (float64(e.Pooled[i]) - r)
		den += r * r
	}
	if rel := math.Sqrt(num / den); rel > 1e-3 {
		t.Errorf("pooled rel RMS %.2e", rel)
	}
	g, err := Load(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"), LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Embed("x"); !errors.Is(err, ErrNotEncoder) {
		t.Errorf("decoder model: %v", err)
	}
}
