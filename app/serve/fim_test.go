package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"

	"flowchat/engine"
	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

// FIM tokens of the fixture below: three byte tokens of stories260K
// (<0x01> <0x02> <0x03>), renamed and made control tokens.
const fimPre, fimSuf, fimMid = 4, 5, 6

// fimModel writes stories260K with Qwen's FIM token texts in place of
// three byte tokens, named by the GGUF keys tokenizer.ggml.fim_*_token_id,
// and loads it.
func fimModel(t *testing.T) *engine.Model {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, storiesPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	types, _ := f.Int32s("tokenizer.ggml.token_type")
	toks, types = slices.Clone(toks), slices.Clone(types)
	for id, text := range map[int]string{fimPre: "<|fim_prefix|>", fimSuf: "<|fim_suffix|>", fimMid: "<|fim_middle|>"} {
		toks[id], types[id] = text, 3 // control
	}
	w := gguf.NewWriter()
	w.CopyKV(f)
	w.Set("tokenizer.ggml.tokens", toks)
	w.Set("tokenizer.ggml.token_type", types)
	w.Set("tokenizer.ggml.fim_pre_token_id", uint32(fimPre))
	w.Set("tokenizer.ggml.fim_suf_token_id", uint32(fimSuf))
	w.Set("tokenizer.ggml.fim_mid_token_id", uint32(fimMid))
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		w.AddTensor(ti.Name, ti.Type, ti.Shape, f.TensorData(ti))
	}
	path := filepath.Join(t.TempDir(), "stories-fim.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// promptLog records the prompt of every generation.
type promptLog struct {
	Backend
	mu      sync.Mutex
	prompts [][]int32
}

func (p *promptLog) Generate(ctx context.Context, prompt []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	p.mu.Lock()
	p.prompts = append(p.prompts, slices.Clone(prompt))
	p.mu.Unlock()
	return p.Backend.Generate(ctx, prompt, opt)
}

// TestSDKCompletionSuffix: with a suffix the server lays the prompt out
// prefix-suffix-middle ([BOS] PRE prompt SUF suffix MID, both texts
// without BOS) and the middle it returns is the engine's own greedy
// continuation of exactly that layout.
func TestSDKCompletionSuffix(t *testing.T) {
	m := fimModel(t)
	if pre, suf, mid, ok := m.Tok.FIM(); !ok || pre != fimPre || suf != fimSuf || mid != fimMid {
		t.Fatalf("fixture FIM = %d %d %d %v", pre, suf, mid, ok)
	}
	log := &promptLog{Backend: NewModelBackend(m, 2, testCtx, 8)}
	ts, _ := newTestServer(t, m, 2, Config{Backend: log})
	c := client(ts, "")
	const prefix, suffix, maxTokens = "Once upon a time", " and they were happy.", 24
	pre, suf := m.Tok.Encode(prefix, false, false), m.Tok.Encode(suffix, false, false)
	if len(pre) == 0 || len(suf) == 0 || pre[0] == m.Tok.BOS() {
		t.Fatalf("prefix tokens %v, suffix tokens %v", pre, suf)
	}
	want := append(append(append(append([]int32{m.Tok.BOS(), fimPre}, pre...), fimSuf), suf...), fimMid)
	ref := generateRef(t, m, want, maxTokens, false)
	resp, err := c.Completions.New(context.Background(), openai.CompletionNewParams{Model: "stories",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(prefix)}, Suffix: openai.String(suffix),
		Temperature: openai.Float(0), MaxTokens: openai.Int(maxTokens)})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.prompts) != 1 || !slices.Equal(log.prompts[0], want) {
		t.Fatalf("prompts %v, want one %v", log.prompts, want)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Text == "" {
		t.Fatalf("choices %+v, want one with text", resp.Choices)
	}
	// The engine's text drops the first token's leading space; a
	// completion continues its prompt, so it keeps it.
	wantText := ref.text
	if p := m.Tok.Piece(ref.ids[0]); len(p) > 0 && p[0] == ' ' && !strings.HasPrefix(wantText, " ") {
		wantText = " " + wantText
	}
	if got := resp.Choices[0].Text; got != wantText {
		t.Errorf("middle %q, engine %q", got, wantText)
	}
	t.Logf("middle of %q…%q: %q", prefix, suffix, resp.Choices[0].Text)
	if int(resp.Usage.PromptTokens) != len(want) || int(resp.Usage.CompletionTokens) != ref.stats.GenTokens {
		t.Errorf("usage %+v, want %d prompt and %d completion tokens", resp.Usage, len(want), ref.stats.GenTokens)
	}

	// A prompt of token ids is the prefix as given.
	log.prompts = nil
	ids := []int64{80, 147, 201}
	_, err = c.Completions.New(context.Background(), openai.CompletionNewParams{Model: "stories",
		Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: ids}, Suffix: openai.String(suffix),
		Temperature: openai.Float(0), MaxTokens: openai.Int(2)})
	if err != nil {
		t.Fatal(err)
	}
	want = append(append([]int32{m.Tok.BOS(), fimPre, 80, 147, 201, fimSuf}, suf...), fimMid)
	if len(log.prompts) != 1 || !slices.Equal(log.prompts[0], want) {
		t.Fatalf("token prompt laid out as %v, want %v", log.prompts, want)
	}
}

// TestCompletionSuffixRefused: a model without FIM tokens, or echo with a
// suffix, is a 400 naming suffix; nothing is generated.
func TestCompletionSuffixRefused(t *testing.T) {
	cases := []struct {
		name string
		m    *engine.Model
		body string
		msg  string
	}{
		{"no FIM tokens", model(t), `{"prompt":"Once","suffix":" end"}`, "has none"},
		{"echo", fimModel(t), `{"prompt":"Once","suffix":" end","echo":true}`, "echo"},
	}
	for _, tc := range cases {
		log := &promptLog{Backend: NewModelBackend(tc.m, 1, testCtx, 4)}
		ts, _ := newTestServer(t, tc.m, 1, Config{Backend: log})
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error struct{ Message, Param string }
		}
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 400 || e.Error.Param != "suffix" ||
			!strings.Contains(e.Error.Message, tc.msg) || len(log.prompts) != 0 {
			t.Errorf("%s: %d %s (%v), %d generations; want 400 naming suffix, %q", tc.name, resp.StatusCode, body, err, len(log.prompts), tc.msg)
		}
	}
	// The SDK sees the same refusal as an *openai.Error.
	ts, _ := newTestServer(t, model(t), 1, Config{})
	c := client(ts, "")
	_, err := c.Completions.New(context.Background(), openai.CompletionNewParams{Model: "stories",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once")}, Suffix: openai.String(" end")})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "suffix" {
		t.Errorf("SDK error %v, want a 400 naming suffix", err)
	}
}
