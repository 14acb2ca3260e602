package eval

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"

	"flowchat/engine"
	"flowchat/engine/fixtures"
)

func load656K(t *testing.T, typ string) *engine.Model {
	t.Helper()
	m, err := engine.Load(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-"+typ+".gguf"), engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func evalTokens(t *testing.T, m *engine.Model) []int32 {
	text, err := os.ReadFile(fixtures.Path(t, "text/tinystories_eval.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return m.Tok.Encode(string(text), true, false)
}

// TestKLDivergence writes the F32 model's base file and compares models
// with it: the base itself (KLD 0, full agreement, the same perplexity),
// and llama.cpp's Q8_0 and Q4_0 files, whose perplexity must equal what
// Perplexity computes and whose divergence must order as their precision.
func TestKLDivergence(t *testing.T) {
	base := load656K(t, "F32")
	tokens := evalTokens(t, base)
	opt := ChunkOptions{Ctx: 128, BOS: base.Tok.BOS(), MaxChunks: 6}
	var buf bytes.Buffer
	bp, err := WriteBase(&buf, base, tokens, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	self, err := CompareBase(bytes.NewReader(buf.Bytes()), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if self.KLD > 1e-6 || self.Top1 != 1 || math.Abs(self.PPL-bp.PPL) > 1e-9 || math.Abs(self.BasePPL-bp.PPL) > 1e-4 {
		t.Fatalf("base against itself: %+v (base PPL %.6f)", self, bp.PPL)
	}
	var prev KLResult
	for i, typ := range []string{"Q8_0", "Q4_0"} {
		m := load656K(t, typ)
		r, err := CompareBase(bytes.NewReader(buf.Bytes()), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Perplexity(m, tokens, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: PPL %.4f (base %.4f), KLD %.6f ± %.6f (median %.6f, p99 %.5f, max %.5f), top-1 %.2f%%",
			typ, r.PPL, r.BasePPL, r.KLD, r.KLDStdErr, r.KLDMedian, r.KLD99, r.KLDMax, 100*r.Top1)
		if math.Abs(r.PPL-p.PPL) > 1e-3*p.PPL {
			t.Errorf("%s: perplexity %.5f in the comparison, %.5f alone", typ, r.PPL, p.PPL)
		}
		if !(r.KLD > 0) || r.Top1 >= 1 && typ == "Q4_0" {
			t.Errorf("%s: KLD %g, top-1 %g", typ, r.KLD, r.Top1)
		}
		if i > 0 && !(r.KLD > prev.KLD && r.Top1 <= prev.Top1) {
			t.Errorf("%s (KLD %g, top-1 %g) is not worse than Q8_0 (KLD %g, top-1 %g)", typ, r.KLD, r.Top1, prev.KLD, prev.Top1)
		}
		prev = r
	}
}

// TestBaseFileErrors checks that damaged base files give ErrBaseFormat.
func TestBaseFileErrors(t *testing.T) {
	base := load656K(t, "F32")
	tokens := evalTokens(t, base)
	var buf bytes.Buffer
	if _, err := WriteBase(&buf, base, tokens, ChunkOptions{Ctx: 64, BOS: base.Tok.BOS(), MaxChunks: 2}, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for name, data := range map[string][]byte{
		"truncated rows":   b[:len(b)-100],
		"truncated tokens": b[:40],
		"bad magic":        append([]byte("XXXXXXXX"), b[8:]...),
	} {
		if _, err := CompareBase(bytes.NewReader(data), base, nil); !errors.Is(err, ErrBaseFormat) {
			t.Errorf("%s: err = %v, want ErrBaseFormat", name, err)
		}
	}
}

// FuzzBaseHeader feeds arbitrary bytes to the header reader: it must
// return an error or a header whose sizes are within the limits.
func FuzzBaseHeader(f *testing.F) {
	var buf bytes.Buffer
	writeHeader(&buf, ChunkOptions{Ctx: 4, BOS: 1}, 8, 1, []int32{1, 2, 3, 4})
	f.Add(buf.Bytes())
	f.Add([]byte(baseMagic + "\x01\x00\x00\x00\xff\xff\xff\x0f\x08\x00\x00\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadBaseHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(h.Tokens) != h.Ctx*h.Chunks || h.Ctx > maxBaseDim || h.Vocab > maxBaseDim {
			t.Fatalf("accepted header %d×%d, vocab %d, %d tokens", h.Chunks, h.Ctx, h.Vocab, len(h.Tokens))
		}
	})
}
