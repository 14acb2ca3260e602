package serve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"flowchat/engine"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/quant"
	"flowchat/engine/sample"
)

// specModel loads the demo model with a Q8_0 self-draft as the server's
// default speculation (as serve --draft-quant Q8_0 does).
func specModel(t *testing.T) *engine.Model {
	t.Helper()
	path := fixtures.Path(t, storiesPath)
	m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	d, err := engine.Load(path, engine.LoadOptions{Threads: 1, Quant: quant.Options{Type: ggml.Q8_0}})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := engine.NewDraftModel(m, d, "Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	m.SetSpeculation(&engine.SpecOptions{Draft: dm, K: 4})
	return m
}

// TestSDKSpeculative: through the official client, greedy requests with
// the server's draft model, with n-gram drafts and with speculation off
// all give the engine's plain greedy text, and the responses report what
// was drafted (llama-server's timings.draft_n) when something was.
func TestSDKSpeculative(t *testing.T) {
	m := specModel(t)
	ts, _ := newTestServer(t, m, 2, Config{})
	c := client(ts, "")
	const maxTokens = 48
	for _, p := range prompts {
		ref := generateRef(t, m, chatTokens(t, m, p), maxTokens, false) // the model's default: the self-draft
		plain := plainRef(t, m, chatTokens(t, m, p), maxTokens)
		if ref.text != plain {
			t.Fatalf("%q: speculative session %q, plain %q", p, ref.text, plain)
		}
		for _, spec := range []map[string]any{{"draft": "model", "n": 4}, {"draft": "ngram", "n": 6}, {"draft": "none"}, nil} {
			opts := []option.RequestOption{}
			if spec != nil {
				opts = append(opts, option.WithJSONSet("speculative", spec))
			}
			resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model: "stories", Messages: userMsg(p), Temperature: openai.Float(0), MaxTokens: openai.Int(maxTokens)}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != plain {
				t.Fatalf("%q, speculative %v: %q, plain %q", p, spec, got, plain)
			}
			var raw struct {
				Timings *timings `json:"timings"`
			}
			if err := json.Unmarshal([]byte(resp.RawJSON()), &raw); err != nil {
				t.Fatal(err)
			}
			switch {
			case spec != nil && spec["draft"] == "none" && raw.Timings != nil:
				t.Errorf("%q: speculation off, yet timings %+v", p, raw.Timings)
			case (spec == nil || spec["draft"] == "model") && (raw.Timings == nil || raw.Timings.DraftN == 0):
				t.Errorf("%q, %v: the draft model drafted nothing (timings %+v)", p, spec, raw.Timings)
			case raw.Timings != nil && raw.Timings.DraftNAccepted > raw.Timings.DraftN:
				t.Errorf("%q: timings %+v", p, raw.Timings)
			}
		}
	}
}

// plainRef is the greedy text with speculation off.
func plainRef(t *testing.T, m *engine.Model, prompt []int32, maxTokens int) string {
	t.Helper()
	p := sample.DefaultParams()
	p.Decoding = sample.DecodingGreedy
	var text string
	_, err := m.NewSession(testCtx).Generate(context.Background(), prompt, engine.GenerateOptions{MaxTokens: maxTokens, Sampling: p, NoSpec: true,
		OnPiece: func(s string) bool { text += s; return true }})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TestSpeculativeBadRequests: bad speculative fields are 400s naming the
// field; a server without a draft model says how to start one.
func TestSpeculativeBadRequests(t *testing.T) {
	plain, _ := newTestServer(t, model(t), 1, Config{})
	spec, _ := newTestServer(t, specModel(t), 1, Config{})
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		url, body, param, mention string
	}{
		{spec.URL, `{` + msgs + `,"speculative":{"draft":"oracle"}}`, "speculative.draft", "oracle"},
		{spec.URL, `{` + msgs + `,"speculative":{"draft":"ngram","n":40}}`, "speculative.n", "40"},
		{spec.URL, `{` + msgs + `,"speculative":{"draft":"ngram","accept":"loose"}}`, "speculative.accept", "loose"},
		{spec.URL, `{` + msgs + `,"mirostat":2,"speculative":{"draft":"ngram"}}`, "speculative", "mirostat"},
		{plain.URL, `{` + msgs + `,"speculative":{"draft":"model"}}`, "speculative.draft", "--draft-model"},
	} {
		resp, eb := post(t, c.url+"/v1/chat/completions", c.body)
		if resp.StatusCode != 400 || eb.Error.Param == nil || *eb.Error.Param != c.param || !strings.Contains(eb.Error.Message, c.mention) {
			t.Errorf("%s: %d %+v, want 400 on %s mentioning %q", c.body, resp.StatusCode, eb.Error, c.param, c.mention)
		}
	}
	// mirostat with the server's default speculation: the default steps aside
	resp, eb := post(t, spec.URL+"/v1/chat/completions", `{`+msgs+`,"mirostat":2,"max_tokens":8}`)
	if resp.StatusCode != 200 {
		t.Errorf("mirostat under the default speculation: %d %+v", resp.StatusCode, eb)
	}
}
