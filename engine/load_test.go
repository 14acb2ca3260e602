package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/sample"
	"flowchat/engine/spec"
)

// tinyLlama writes a small random llama GGUF (dim 16, 1 layer, 300-token
// SPM vocabulary) and returns its bytes.
func tinyLlama(t testing.TB, arch string) []byte {
	w := gguf.NewWriter()
	w.Set("general.architecture", arch)
	w.Set(arch+".context_length", uint32(64))
	w.Set(arch+".embedding_length", uint32(16))
	w.Set(arch+".block_count", uint32(1))
	w.Set(arch+".feed_forward_length", uint32(32))
	w.Set(arch+".attention.head_count", uint32(4))
	w.Set(arch+".attention.head_count_kv", uint32(2))
	w.Set(arch+".attention.layer_norm_rms_epsilon", float32(1e-5))
	toks := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		toks, types = append(toks, fmt.Sprintf("<0x%02X>", b)), append(types, 6)
	}
	for _, p := range []string{"▁a", "▁b", "▁the", "▁once", "▁upon", "▁time", "a", "b", "e", "t"} {
		toks, types = append(toks, p), append(types, 1)
	}
	for len(toks) < 300 {
		toks, types = append(toks, fmt.Sprintf("▁x%d", len(toks))), append(types, 1)
	}
	scores := make([]float32, len(toks))
	for i := range scores {
		scores[i] = -float32(i)
	}
	w.Set("tokenizer.ggml.model", "llama")
	w.Set("tokenizer.ggml.tokens", toks)
	w.Set("tokenizer.ggml.scores", scores)
	w.Set("tokenizer.ggml.token_type", types)
	w.Set("tokenizer.ggml.bos_token_id", uint32(1))
	w.Set("tokenizer.ggml.eos_token_id", uint32(2))
	r := rand.New(rand.NewPCG(7, 7))
	mat := func(name string, cols, rows int) {
		f := make([]float32, cols*rows)
		for i := range f {
			f[i] = float32(r.NormFloat64()) / 4
		}
		w.AddTensor(name, ggml.F32, []uint64{uint64(cols), uint64(rows)}, ggml.F32Bytes(f))
	}
	ones := func(name string, n int) {
		f := make([]float32, n)
		for i := range f {
			f[i] = 1
		}
		w.AddTensor(name, ggml.F32, []uint64{uint64(n)}, ggml.F32Bytes(f))
	}
	mat("token_embd.weight", 16, 300)
	ones("blk.0.attn_norm.weight", 16)
	mat("blk.0.attn_q.weight", 16, 16)
	mat("blk.0.attn_k.weight", 16, 8)
	mat("blk.0.attn_v.weight", 16, 8)
	mat("blk.0.attn_output.weight", 16, 16)
	ones("blk.0.ffn_norm.weight", 16)
	mat("blk.0.ffn_gate.weight", 16, 32)
	mat("blk.0.ffn_up.weight", 16, 32)
	mat("blk.0.ffn_down.weight", 32, 16)
	ones("output_norm.weight", 16)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTemp(t testing.TB, data []byte) string {
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTinyModelGenerates(t *testing.T) {
	m, err := Load(writeTemp(t, tinyLlama(t, "llama")), LoadOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Info.Params == 0 || m.Info.Arch != "llama" || m.Info.Family != "llama" {
		t.Errorf("info %+v", m.Info)
	}
	s := m.NewSession(32)
	p := sample.DefaultParams()
	p.Seed = 1
	var text strings.Builder
	// 20 tokens: the prefix cache shares whole blocks of 16 positions.
	prompt := []int32{1, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280}
	st, err := s.Generate(context.Background(), prompt, GenerateOptions{
		MaxTokens: 10, Sampling: p, IgnoreEOG: true,
		OnPiece: func(s string) bool { text.WriteString(s); return true },
	})
	if err != nil || st.GenTokens != 10 || text.Len() == 0 {
		t.Fatalf("stats %+v, text %q, err %v", st, text.String(), err)
	}
	// A second turn that extends the first reuses the cached prefix.
	ids := append(prompt, 261)
	st2, err := s.Generate(context.Background(), ids, GenerateOptions{MaxTokens: 2, Sampling: p, IgnoreEOG: true})
	if err != nil || st2.CachedTokens != 16 {
		t.Fatalf("no prefix reuse: %+v %v", st2, err)
	}
}

// TestContextFullIsVisible: generation stops with StopReason "context", and
// a prompt longer than the context is an error, not a silent truncation.
func TestContextFullIsVisible(t *testing.T) {
	m, err := Load(writeTemp(t, tinyLlama(t, "llama")), LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := m.NewSession(12)
	p := sample.DefaultParams()
	p.Seed = 2
	st, err := s.Generate(context.Background(), []int32{1, 262, 263}, GenerateOptions{Sampling: p, IgnoreEOG: true})
	if err != nil || st.StopReason != "context" {
		t.Fatalf("stats %+v err %v", st, err)
	}
	long := make([]int32, 20)
	for i := range long {
		long[i] = 270
	}
	if _, err := m.NewSession(12).Generate(context.Background(), long, GenerateOptions{Sampling: p}); !errors.Is(err, ErrContextFull) {
		t.Fatalf("err = %v, want ErrContextFull", err)
	}
}

func TestUnknownArchitecture(t *testing.T) {
	_, err := Load(writeTemp(t, tinyLlama(t, "mamba9")), LoadOptions{Threads: 1})
	if !errors.Is(err, spec.ErrUnknownArchitecture) || !strings.Contains(err.Error(), "llama") {
		t.Fatalf("err = %v", err)
	}
}

func TestUserSpecFile(t *testing.T) {
	// The llama spec under another architecture name, given as a file.
	data, err := os.ReadFile(filepath.Join(fixtures.Root(), "specs", "llama.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(sp, bytes.Replace(data, []byte(`"mistral"`), []byte(`"mamba9"`), 1), 0o644)
	m, err := Load(writeTemp(t, tinyLlama(t, "mamba9")), LoadOptions{Threads: 1, SpecPath: sp})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}

// FuzzLoad: any byte string either loads and runs or fails with an error.
func FuzzLoad(f *testing.F) {
	f.Add(tinyLlama(f, "llama"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Load(writeTemp(t, data), LoadOptions{Threads: 1})
		if err != nil {
			return
		}
		defer m.Close()
		s := m.NewSession(16)
		ids := m.Tok.Encode("once upon a time", true, true)
		p := sample.DefaultParams()
		p.Seed = 1
		s.Generate(context.Background(), ids, GenerateOptions{MaxTokens: 3, Sampling: p, IgnoreEOG: true})
	})
}

// TestPrefillProgressAndExplain: long prompts report progress chunk by
// chunk and can be cancelled; Explain's pick is the token Generate then
// draws, and Generate reuses Explain's prefill.
func TestPrefillProgressAndExplain(t *testing.T) {
	m, err := Load(writeTemp(t, tinyLlama(t, "llama")), LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt := make([]int32, 300)
	for i := range prompt {
		prompt[i] = int32(259 + i%40)
	}
	prompt[0] = 1
	s := m.NewSession(512)
	var reports [][2]int
	p := sample.DefaultParams()
	p.Decoding = "greedy"
	_, err = s.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: 1, Sampling: p,
		OnPrefill: func(done, total int) { reports = append(reports, [2]int{done, total}) }})
	if err != nil || len(reports) == 0 || reports[len(reports)-1] != [2]int{300, 300} {
		t.Fatalf("progress %v, err %v", reports, err)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i][0] <= reports[i-1][0] {
			t.Fatalf("progress goes back: %v", reports)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.NewSession(512).Generate(ctx, prompt, GenerateOptions{Sampling: p}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled prefill: %v", err)
	}
	s2 := m.NewSession(512)
	ex, err := s2.Explain(context.Background(), prompt[:50], p)
	if err != nil {
		t.Fatal(err)
	}
	var first int32 = -1
	st, err := s2.Generate(context.Background(), prompt[:50], GenerateOptions{MaxTokens: 1, Sampling: p, IgnoreEOG: true,
		OnToken: func(id int32) { first = id }})
	// Whole blocks of 16 of the first 49 tokens come from the prefix cache.
	if err != nil || first != ex.Chosen || st.CachedTokens != 48 {
		t.Fatalf("explain chose %d, generate drew %d (cached %d, err %v)", ex.Chosen, first, st.CachedTokens, err)
	}
}
