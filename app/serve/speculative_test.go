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
// was drafted (llama-server's timings.draft_n) when something was. Each
// request goes to a server over a freshly loaded model: a scheduler's
// later request with the same drafter resumes the last one's verdict
// (engine's specPrior), and at this size drafting does not pay, so it
// would rightly draft nothing in 48 tokens; a first request always probes.
func TestSDKSpeculative(t *testing.T) {
	const maxTokens = 48
	for _, p := range prompts {
		m := specModel(t)
		ref := generateRef(t, m, chatTokens(t, m, p), maxTokens, false) // the model's default: the self-draft
		plain := plainRef(t, m, chatTokens(t, m, p), maxTokens)
		if ref.text != plain {
			t.Fatalf("%q: speculative session %q, plain %q", p, ref.text, plain)
		}
		for _, spec := range []map[string]any{{"draft": "model", "n": 4}, {"draft": "ngram", "n": 6}, {"draft": "none"}, nil} {
			ts, _ := newTestServer(t, specModel(t), 2, Config{})
			c := client(ts, "")
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
			case raw.Timings == nil || raw.Timings.PredictedN != int(resp.Usage.CompletionTokens) || raw.Timings.PredictedPerSecond <= 0 ||
				raw.Timings.PromptN+int(resp.Usage.PromptTokensDetails.CachedTokens) != int(resp.Usage.PromptTokens):
				t.Errorf("%q: timings %+v against usage %s", p, raw.Timings, resp.Usage.RawJSON())
			case spec != nil && spec["draft"] == "none" && raw.Timings.DraftN != 0:
				t.Errorf("%q: speculation off, yet timings %+v", p, raw.Timings)
			case (spec == nil || spec["draft"] == "model") && (raw.Timings == nil || raw.Timings.DraftN == 0):
				t.Errorf("%q, %v: the draft model drafted nothing (timings %+v)", p, spec, raw.Timings)
			case raw.Timings != nil && raw.Timings.DraftNAccepted > raw.Timings.DraftN:
				t.Errorf("%q: timings %+v", p, raw.Timings)
			}
		}
	}
}

// TestSDKSpeculativeStream: a streamed chat with the draft model gives the
// plain greedy text, and the chunk that finishes the choice carries its
// timings (llama-server's place for them), drafts included; no other
// chunk does.
func TestSDKSpeculativeStream(t *testing.T) {
	m := specModel(t)
	ts, _ := newTestServer(t, m, 2, Config{})
	c := client(ts, "")
	const maxTokens = 48
	p := prompts[0]
	plain := plainRef(t, m, chatTokens(t, m, p), maxTokens)
	st := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "stories", Messages: userMsg(p), Temperature: openai.Float(0), MaxTokens: openai.Int(maxTokens),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}},
		option.WithJSONSet("speculative", map[string]any{"draft": "model", "n": 4}))
	var text string
	var tm *timings
	var completion int64
	for st.Next() {
		ch := st.Current()
		var raw struct {
			Timings *timings `json:"timings"`
		}
		if err := json.Unmarshal([]byte(ch.RawJSON()), &raw); err != nil {
			t.Fatal(err)
		}
		finishes := len(ch.Choices) > 0 && ch.Choices[0].FinishReason != ""
		if (raw.Timings != nil) != finishes {
			t.Fatalf("timings %+v in a chunk that finishes: %v (%s)", raw.Timings, finishes, ch.RawJSON())
		}
		if raw.Timings != nil {
			tm = raw.Timings
		}
		if len(ch.Choices) > 0 {
			text += ch.Choices[0].Delta.Content
		}
		if ch.Usage.CompletionTokens > 0 {
			completion = ch.Usage.CompletionTokens
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if text != plain {
		t.Fatalf("streamed %q, plain %q", text, plain)
	}
	if tm == nil || tm.DraftN == 0 || tm.DraftNAccepted > tm.DraftN || tm.PredictedN != int(completion) || tm.PredictedPerSecond <= 0 || tm.PromptN <= 0 {
		t.Fatalf("timings %+v, completion tokens %d", tm, completion)
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
