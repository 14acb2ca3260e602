package engine

import (
	"testing"

	"flowchat/engine/fixtures"
)

// TestLoadFormats opens each non-GGUF format through the front door and
// checks that it predicts what the same model's GGUF predicts.
func TestLoadFormats(t *testing.T) {
	for _, c := range []struct {
		path, gguf, kind string
		prompt           string
	}{
		{"models/tinystories-656K/hf", "models/tinystories-656K/TinyStories-656K-F32.gguf", FormatHF, "Once upon a time"},
		{"pytorch/tinystories-656K-torch-zip/pytorch_model.bin", "models/tinystories-656K/TinyStories-656K-F32.gguf", FormatHF, "Once upon a time"},
		{"models/llama2c/stories260K.bin", "models/stories260K/stories260K-F32.gguf", FormatLlama2c, "Once upon a time"},
	} {
		t.Run(c.path, func(t *testing.T) {
			p := fixtures.Path(t, c.path)
			if k, err := Detect(p); err != nil || k != c.kind {
				t.Fatalf("Detect = %q, %v", k, err)
			}
			m, err := Load(p, LoadOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			g, err := Load(fixtures.Path(t, c.gguf), LoadOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			ids := g.Tok.Encode(c.prompt, true, false)
			a, err := m.Logits(ids)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := g.Logits(ids)
			worst := 0.0
			for i := range a {
				d := float64(a[i] - b[i])
				worst = max(worst, d*d)
			}
			if worst > 1e-6 {
				t.Errorf("max squared logit difference %.2e", worst)
			}
			if m.Info.Vocab != g.Info.Vocab || m.Info.Layers != g.Info.Layers || m.Info.Params == 0 {
				t.Errorf("info %+v vs %+v", m.Info, g.Info)
			}
		})
	}
}
