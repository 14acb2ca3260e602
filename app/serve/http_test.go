package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"flowchat/engine"
)

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
	raw []byte // the whole body
}

func post(t *testing.T, url, body string) (*http.Response, errorBody) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e errorBody
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &e)
	e.raw = b
	return resp, e
}

// TestBadRequests: each malformed request gets its status, an OpenAI
// error body, and names the field at fault.
func TestBadRequests(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{MaxBodyBytes: 4096})
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	chat, comp, emb := "/v1/chat/completions", "/v1/completions", "/v1/embeddings"
	cases := []struct {
		path, body string
		status     int
		param      string // "" = none expected
		mention    string // text the message must contain
	}{
		{chat, `{`, 400, "", "not valid JSON"},
		{chat, `[]`, 400, "", "wrong type"},
		{chat, `{"messages":"hi"}`, 400, "messages", "an array"},
		{chat, `{}`, 400, "messages", "at least one message"},
		{chat, `{"messages":[]}`, 400, "messages", "at least one"},
		{chat, `{"messages":[{"role":"wizard","content":"hi"}]}`, 400, "messages[0].role", "wizard"},
		{chat, `{"messages":[{"role":"user","content":7}]}`, 400, "messages", "content"},
		{chat, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content", "image_url"},
		{chat, `{` + msgs + `,"temperature":-1}`, 400, "temperature", "temperature"},
		{chat, `{` + msgs + `,"temperature":"hot"}`, 400, "temperature", "a number"},
		{chat, `{` + msgs + `,"top_p":0}`, 400, "top_p", "top_p"},
		{chat, `{` + msgs + `,"top_p":1.5}`, 400, "top_p", "top_p"},
		{chat, `{` + msgs + `,"presence_penalty":3}`, 400, "presence_penalty", "presence_penalty"},
		{chat, `{` + msgs + `,"frequency_penalty":-3}`, 400, "frequency_penalty", "frequency_penalty"},
		{chat, `{` + msgs + `,"n":0}`, 400, "n", "n = 0"},
		{chat, `{` + msgs + `,"n":1000}`, 400, "n", "n = 1000"},
		{chat, `{` + msgs + `,"max_tokens":0}`, 400, "max_tokens", "max_tokens"},
		{chat, `{` + msgs + `,"max_completion_tokens":-5}`, 400, "max_tokens", "max_tokens"},
		{chat, `{` + msgs + `,"stop":5}`, 400, "stop", "stop"},
		{chat, `{` + msgs + `,"stop":["a","b","c","d","e"]}`, 400, "stop", "at most 4"},
		{chat, `{` + msgs + `,"stop":[""]}`, 400, "stop", "empty"},
		{chat, `{` + msgs + `,"logit_bias":{"abc":1}}`, 400, "logit_bias", "abc"},
		{chat, `{` + msgs + `,"logit_bias":{"5":500}}`, 400, "logit_bias", "500"},
		{chat, `{` + msgs + `,"logit_bias":{"99999999":1}}`, 400, "logit_bias", "99999999"},
		{chat, `{` + msgs + `,"top_logprobs":3}`, 400, "top_logprobs", "logprobs: true"},
		{chat, `{` + msgs + `,"logprobs":true,"top_logprobs":50}`, 400, "top_logprobs", "50"},
		{chat, `{` + msgs + `,"top_k":-1}`, 400, "top_k", "top_k"},
		{chat, `{` + msgs + `,"mirostat":7}`, 400, "mirostat", "mirostat"},
		{chat, `{` + msgs + `,"decoding":"magic"}`, 400, "decoding", "magic"},
		{chat, `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}]}`, 400, "tools", "tools"},
		{chat, `{` + msgs + `,"response_format":{"type":"yaml"}}`, 400, "response_format", "yaml"},
		{chat, `{` + msgs + `,"response_format":{"type":"json_schema"}}`, 400, "response_format", "json_schema.schema is required"},
		{chat, `{` + msgs + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"wat"}}}}`, 400, "response_format", `unknown type "wat"`},
		{chat, `{` + msgs + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","pattern":"a+"}}}}`, 400, "response_format", "pattern not supported"},
		{chat, `{` + msgs + `,"grammar":"root ::= \"a"}`, 400, "grammar", "unterminated string"},
		{chat, `{` + msgs + `,"grammar":"root ::= x"}`, 400, "grammar", `"x" is used but never defined`},
		{chat, `{` + msgs + `,"grammar":"root ::= \"a\"","response_format":{"type":"json_object"}}`, 400, "grammar", "cannot be combined with response_format"},
		{chat, `{` + msgs + `,"tool_choice":"required"}`, 400, "tool_choice", "needs tools"},
		{chat, `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, 400, "tool_choice", "naming one of the tools"},
		{comp, `{"prompt":"x","grammar":"root ::= [a-"}`, 400, "grammar", "unterminated character class"},
		{chat, `{` + msgs + `,"model":"../../etc/passwd"}`, 404, "", "does not exist"},
		{chat, `{` + msgs + `,"n":0,"top_p":9,"stop":[""]}`, 400, "n", "top_p"},
		{chat, `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, 413, "", "limit"},
		{chat, `{"messages":[{"role":"user","content":"` + strings.Repeat("once ", 400) + `"}]}`, 400, "messages", "context"},
		{comp, `{}`, 400, "prompt", "required"},
		{comp, `{"prompt":{"a":1}}`, 400, "prompt", "prompt must be"},
		{comp, `{"prompt":[1,2,-3]}`, 400, "prompt", "outside the vocabulary"},
		{comp, `{"prompt":"x","logprobs":9}`, 400, "logprobs", "logprobs"},
		{comp, `{"prompt":"x","suffix":"y"}`, 400, "suffix", "suffix"},
		{emb, `{"input":"x"}`, 400, "model", "not an encoder"},
		{emb, `{"input":""}`, 400, "input", "empty"},
		{emb, `{"input":"x","encoding_format":"hex"}`, 400, "encoding_format", "hex"},
		{"/v1/nowhere", `{}`, 404, "", "unknown route"},
	}
	for _, tc := range cases {
		resp, e := post(t, ts.URL+tc.path, tc.body)
		name := tc.path + " " + tc.body[:min(len(tc.body), 60)]
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d (%s), want %d", name, resp.StatusCode, e.Error.Message, tc.status)
			continue
		}
		if got := strOf(e.Error.Param); got != tc.param {
			t.Errorf("%s: param %q, want %q", name, got, tc.param)
		}
		if !strings.Contains(e.Error.Message, tc.mention) || e.Error.Type == "" {
			t.Errorf("%s: error %+v should mention %q", name, e.Error, tc.mention)
		}
	}
}

func strOf(p *string) (v string) {
	if p != nil {
		v = *p
	}
	return v
}

func TestMethodAndHealth(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{APIKey: "k"})
	resp, err := http.Get(ts.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET chat: %d", resp.StatusCode)
	}
	resp, err = http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/health without a key: %d, want 200 (health checks carry no key)", resp.StatusCode)
	}
}

// TestStreamFormat reads the raw SSE stream: data events only, the last
// one [DONE], the usage chunk just before it.
func TestStreamFormat(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{})
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"messages":[{"role":"user","content":"Once"}],"stream":true,"max_tokens":5,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			if !strings.HasPrefix(line, "data: ") {
				t.Fatalf("line %q is not a data event", line)
			}
			events = append(events, strings.TrimPrefix(line, "data: "))
		}
	}
	n := len(events)
	if n < 3 || events[n-1] != "[DONE]" || !strings.Contains(events[n-2], `"usage"`) {
		t.Fatalf("events %q: want ... usage, [DONE]", events)
	}
}

// recorder wraps a backend and reports each generation's stats.
type recorder struct {
	Backend
	done chan engine.Stats
}

func (r *recorder) Generate(ctx context.Context, p []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	st, err := r.Backend.Generate(ctx, p, opt)
	r.done <- st
	return st, err
}

// TestDisconnectCancels: a client that goes away mid-stream stops its
// generation at the next token and frees its slot.
func TestDisconnectCancels(t *testing.T) {
	m := model(t)
	rec := &recorder{done: make(chan engine.Stats, 1)}
	b := NewModelBackend(m, 1, testCtx, 4)
	rec.Backend = b
	ts, _ := newTestServer(t, m, 1, Config{Backend: rec})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(
		`{"messages":[{"role":"user","content":"Once"}],"stream":true,"ignore_eos":true,"max_tokens":100000}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(resp.Body).ReadString('\n') // the first token is out
	cancel()
	resp.Body.Close()
	select {
	case st := <-rec.done:
		// The request's context ends it ("cancelled"), unless the stream's
		// writer sees the closed connection first and the next token's
		// text is refused ("stopped"): either way at the next token.
		if st.StopReason != "cancelled" && st.StopReason != "stopped" || st.GenTokens > 1000 {
			t.Fatalf("stop reason %q after %d tokens, want cancelled (or stopped) at once", st.StopReason, st.GenTokens)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("generation still running 10 s after the client left")
	}
	if l := b.Load(); l.Running != 0 || len(b.slots) != 1 {
		t.Fatalf("after cancel: %+v, %d free slots", l, len(b.slots))
	}
}

// TestBusy: with every slot taken and no queue, a request gets 503 and
// Retry-After at once rather than waiting.
func TestBusy(t *testing.T) {
	m := model(t)
	ts, b := newTestServer(t, m, 1, Config{})
	b.maxQueue = 0
	if err := b.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, e := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Once"}]}`)
	b.release()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || e.Error.Message == "" {
		t.Fatalf("busy: status %d, Retry-After %q, %+v", resp.StatusCode, resp.Header.Get("Retry-After"), e)
	}
	if resp, _ := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Once"}],"max_tokens":2}`); resp.StatusCode != 200 {
		t.Fatalf("after release: %d", resp.StatusCode)
	}
}

func TestMetrics(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 2, Config{})
	post(t, ts.URL+"/v1/completions", `{"prompt":"Once","max_tokens":3,"ignore_eos":true}`)
	post(t, ts.URL+"/v1/completions", `{"prompt":7}`)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`flowchat_requests_total{route="/v1/completions",code="200"} 1`,
		`flowchat_requests_total{route="/v1/completions",code="400"} 1`,
		"flowchat_completion_tokens_total 3",
		"flowchat_slots 2",
		"# TYPE flowchat_requests_queued gauge",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, b)
		}
	}
}

// slow is a Backend that emits a piece every 40 ms, stopping when ctx ends.
type slow struct{ scripted }

func (s *slow) Generate(ctx context.Context, p []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	for i := range 12 {
		select {
		case <-ctx.Done():
			return engine.Stats{GenTokens: i, StopReason: "cancelled"}, nil
		case <-time.After(40 * time.Millisecond):
		}
		opt.OnPiece("x")
	}
	return engine.Stats{GenTokens: 12, StopReason: "length"}, nil
}

// TestStreamOutlivesReadTimeout: the server's read timeout bounds reading
// the request only; a stream longer than it must run to the end.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	ts := httptest.NewUnstartedServer(New(Config{Model: model(t), Backend: &slow{}, ModelID: "stories"}))
	ts.Config.ReadTimeout = 150 * time.Millisecond
	ts.Start()
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"messages":[{"role":"user","content":"Once"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if n := strings.Count(string(b), `"content":"x"`); n != 12 || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("%d of 12 pieces arrived:\n%s", n, b)
	}
}
