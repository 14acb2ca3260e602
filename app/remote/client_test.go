package remote

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"flowchat/app/remote/remotetest"
	"flowchat/engine/sample"
)

func newClient(t *testing.T, url, key string) *Client {
	t.Helper()
	c, err := New(url, key)
	if err != nil {
		t.Fatal(err)
	}
	c.IdleTimeout = 5 * time.Second
	return c
}

func chatReq() Request {
	return Request{Model: "test-model", Messages: []Message{{Role: "user", Content: "hi"}}, Sampling: sample.DefaultParams()}
}

// chat runs one chat and returns the text the callback saw with the
// result and error.
func chat(c *Client, req Request) (string, Result, error) {
	var b strings.Builder
	res, err := c.Chat(context.Background(), req, func(p Piece) { b.WriteString(p.Text) })
	return b.String(), res, err
}

func TestNewURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000": "http://h:8000", "http://h:8000/v1": "http://h:8000", "https://h/v1/": "https://h",
		"http://u:p@h/x/v1": "http://h/x",
	} {
		c, err := New(in, "")
		if err != nil || c.BaseURL() != want {
			t.Errorf("New(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{"", "h:8000", "ftp://h", "http://"} {
		if _, err := New(bad, ""); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

func TestDetect(t *testing.T) {
	for want, k := range kinds {
		s := remotetest.New(k)
		c := newClient(t, s.URL, "")
		d, err := c.Detect(context.Background())
		if err != nil || d != want {
			t.Errorf("%s stand-in detected as %q, %v", k, d, err)
		}
		s.Close()
	}
}

// TestDialectByHand: a dialect set by hand is used without probing.
func TestDialectByHand(t *testing.T) {
	s := remotetest.New(remotetest.LlamaCpp)
	defer s.Close()
	c := newClient(t, s.URL, "")
	c.Dialect = Generic
	if _, _, err := chat(c, chatReq()); err != nil {
		t.Fatal(err)
	}
	if rs := s.Requests(); len(rs) != 1 || rs[0].Path != "/v1/chat/completions" {
		t.Errorf("requests %v, want only the chat", rs)
	}
	if _, ok := s.LastBody()["top_k"]; ok {
		t.Error("generic dialect sent top_k")
	}
	if d, err := ParseDialect("llama-server"); d != LlamaCpp || err != nil {
		t.Errorf("ParseDialect = %q, %v", d, err)
	}
	if _, err := ParseDialect("tgi?"); err == nil {
		t.Error("unknown dialect accepted")
	}
}

func TestModels(t *testing.T) {
	s := remotetest.New(remotetest.VLLM, "a/b", "c")
	defer s.Close()
	ms, err := newClient(t, s.URL, "").Models(context.Background())
	if err != nil || len(ms) != 2 || ms[0].ID != "a/b" || ms[0].OwnedBy != "vllm" || ms[0].MaxModelLen != 8192 {
		t.Fatalf("models %+v, %v", ms, err)
	}
}

// TestStreams: every dialect streams the reply piece by piece, with its
// finish reason and usage.
func TestStreams(t *testing.T) {
	for d, k := range kinds {
		s := remotetest.New(k)
		var pieces []string
		res, err := newClient(t, s.URL, "").Chat(context.Background(), chatReq(), func(p Piece) { pieces = append(pieces, p.Text) })
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if strings.Join(pieces, "|") != "Hello|, |world|!" || res.Text != "Hello, world!" {
			t.Errorf("%s: pieces %q text %q", d, pieces, res.Text)
		}
		if res.FinishReason != "stop" || res.PromptTokens != 7 || res.GenTokens != 4 || res.Dialect != d {
			t.Errorf("%s: %+v", d, res)
		}
	}
}

// TestCompletion: a request without messages continues a raw prompt,
// through /v1/completions or Ollama's raw /api/generate.
func TestCompletion(t *testing.T) {
	for d, k := range kinds {
		s := remotetest.New(k)
		req := chatReq()
		req.Messages, req.Prompt = nil, "Once upon"
		text, _, err := chat(newClient(t, s.URL, ""), req)
		body, rs := s.LastBody(), s.Requests()
		s.Close()
		if err != nil || text != "Hello, world!" {
			t.Fatalf("%s: %q, %v", d, text, err)
		}
		path := rs[len(rs)-1].Path
		if body["prompt"] != "Once upon" || (d == Ollama) != (path == "/api/generate") || (d == Ollama) != (body["raw"] == true) {
			t.Errorf("%s: %s %v", d, path, body)
		}
	}
}

func TestTopLogprobs(t *testing.T) {
	s := remotetest.New(remotetest.LlamaCpp)
	defer s.Close()
	c := newClient(t, s.URL, "")
	req := chatReq()
	req.TopLogprobs = 3
	var got []TokenLogprobs
	res, err := c.Chat(context.Background(), req, func(p Piece) { got = append(got, p.Logprobs...) })
	if err != nil || res.Logprobs {
		t.Fatalf("server without logprobs: Logprobs %v, %v", res.Logprobs, err)
	}
	if b := s.LastBody(); b["logprobs"] != true || b["top_logprobs"] != 3.0 {
		t.Errorf("request %v", b)
	}
	s.Logprobs = true
	res, err = c.Chat(context.Background(), req, func(p Piece) { got = append(got, p.Logprobs...) })
	if err != nil || !res.Logprobs || len(got) != 4 {
		t.Fatalf("Logprobs %v, %d tokens, %v", res.Logprobs, len(got), err)
	}
	if got[0].Token != "Hello" || len(got[0].Top) != 3 || got[0].Top[1].Logprob != -3 {
		t.Errorf("first token %+v", got[0])
	}
}

func wantKind(t *testing.T, err, kind error, says ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want %v", err, kind)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, _, err = chat(newClient(t, "http://"+addr, ""), chatReq())
	wantKind(t, err, ErrConnect, "could not connect to "+addr)
}

func TestTLSErrors(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	_, err := newClient(t, tlsSrv.URL, "").Models(context.Background())
	wantKind(t, err, ErrTLS, "TLS error talking to "+strings.TrimPrefix(tlsSrv.URL, "https://"), "certificate")

	plain := remotetest.New(remotetest.VLLM)
	defer plain.Close()
	_, err = newClient(t, strings.Replace(plain.URL, "http:", "https:", 1), "").Models(context.Background())
	wantKind(t, err, ErrTLS)

	// Trusting the server's certificate makes it work.
	s := remotetest.New(remotetest.OpenAI)
	s.Close()
	s.Server = httptest.NewTLSServer(s.Config.Handler)
	defer s.Close()
	c := newClient(t, s.URL, "")
	c.TLSConfig = s.Client().Transport.(*http.Transport).TLSClientConfig
	if text, _, err := chat(c, chatReq()); err != nil || text != "Hello, world!" {
		t.Errorf("over TLS: %q, %v", text, err)
	}
}

func TestAuth(t *testing.T) {
	s := remotetest.New(remotetest.VLLM)
	defer s.Close()
	s.APIKey = "right-key"
	_, _, err := chat(newClient(t, s.URL, "sk-wrong-secret"), chatReq())
	wantKind(t, err, ErrAuth, "refused the API key", "401")
	if strings.Contains(err.Error(), "sk-wrong-secret") {
		t.Errorf("the key leaked into %q", err)
	}
	if text, _, err := chat(newClient(t, s.URL, "right-key"), chatReq()); err != nil || text != "Hello, world!" {
		t.Errorf("right key: %q, %v", text, err)
	}
	if got := s.Requests()[len(s.Requests())-1].Auth; got != "Bearer right-key" {
		t.Errorf("Authorization %q", got)
	}
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"this key may not use the model"}}`, http.StatusForbidden)
	}))
	defer forbidden.Close()
	_, err = newClient(t, forbidden.URL, "k").Models(context.Background())
	wantKind(t, err, ErrAuth, "403", "this key may not use the model")
}

func TestUnknownModel(t *testing.T) {
	for d, k := range kinds {
		s := remotetest.New(k)
		req := chatReq()
		req.Model = "no-such-model"
		_, _, err := chat(newClient(t, s.URL, ""), req)
		s.Close()
		if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "no-such-model") {
			t.Errorf("%s: %v, want an unknown model naming it", d, err)
		}
	}
	s := remotetest.New(remotetest.VLLM, "a", "b")
	defer s.Close()
	err := newClient(t, s.URL, "").CheckModel(context.Background(), "c")
	wantKind(t, err, ErrUnknownModel, `"c" is not among a, b`)
}

func TestRateLimit(t *testing.T) {
	s := remotetest.New(remotetest.VLLM)
	defer s.Close()
	c := newClient(t, s.URL, "")
	c.Dialect = VLLM
	s.RateLimit, s.RetryAfter = 1, "1"
	t0 := time.Now()
	if text, _, err := chat(c, chatReq()); err != nil || text != "Hello, world!" {
		t.Fatalf("after a 429: %q, %v", text, err)
	}
	if waited := time.Since(t0); waited < time.Second {
		t.Errorf("retried after %v; Retry-After asked for 1s", waited)
	}
	// A wait longer than MaxWait is not sat through: the error says it.
	s.RateLimit, s.RetryAfter = 1, "120"
	t0 = time.Now()
	_, _, err := chat(c, chatReq())
	wantKind(t, err, ErrRateLimited, "HTTP 429", "retry after 2m0s")
	var e *Error
	if !errors.As(err, &e) || e.RetryAfter != 2*time.Minute || time.Since(t0) > 5*time.Second {
		t.Errorf("%+v after %v", e, time.Since(t0))
	}
	// Retries run out.
	s.RateLimit, s.RetryAfter = 10, "0"
	c.MaxRetries = 2
	n := len(s.Requests())
	_, _, err = chat(c, chatReq())
	wantKind(t, err, ErrRateLimited)
	if tries := len(s.Requests()) - n; tries != 3 {
		t.Errorf("%d tries, want 3", tries)
	}
}

func TestDisconnectKeepsPartial(t *testing.T) {
	for d, k := range kinds {
		s := remotetest.New(k)
		s.CutAfter = 2
		text, res, err := chat(newClient(t, s.URL, ""), chatReq())
		s.Close()
		wantKind(t, err, ErrDisconnected, "closed the connection in the middle of the reply", "partial reply is kept")
		if text != "Hello, " || res.Text != "Hello, " || res.FinishReason != "" {
			t.Errorf("%s: partial %q, result %q finish %q", d, text, res.Text, res.FinishReason)
		}
	}
}

// TestStreamWithoutEnd: a stream that ends cleanly but without its last
// event has still broken off.
func TestStreamWithoutEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"))
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, "")
	c.Dialect = Generic
	text, _, err := chat(c, chatReq())
	wantKind(t, err, ErrDisconnected)
	if text != "Hi" {
		t.Errorf("partial %q", text)
	}
}

func TestErrorEventMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"))
		w.Write([]byte("data: {\"error\":{\"message\":\"out of KV cache\",\"code\":500}}\n\n"))
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, "")
	c.Dialect = VLLM
	text, res, err := chat(c, chatReq())
	wantKind(t, err, ErrServer, "out of KV cache", "127.0.0.1")
	if text != "Hi" || res.Text != "Hi" {
		t.Errorf("partial %q", text)
	}
}

func TestIdleTimeout(t *testing.T) {
	for _, k := range []remotetest.Kind{remotetest.VLLM, remotetest.Ollama} {
		s := remotetest.New(k)
		s.Stall = true
		c := newClient(t, s.URL, "")
		c.IdleTimeout = 300 * time.Millisecond
		t0 := time.Now()
		_, _, err := chat(c, chatReq())
		s.Close()
		wantKind(t, err, ErrTimeout, "stopped answering", "nothing arrived for 300ms")
		if el := time.Since(t0); el > 3*time.Second {
			t.Errorf("%s: gave up after %v", k, el)
		}
	}
}

func TestCancelKeepsPartial(t *testing.T) {
	s := remotetest.New(remotetest.LlamaCpp)
	defer s.Close()
	s.Reply = append(s.Reply, strings.Split(strings.Repeat("x", 50), "")...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen strings.Builder
	res, err := newClient(t, s.URL, "").Chat(ctx, chatReq(), func(p Piece) {
		seen.WriteString(p.Text)
		if seen.Len() >= len("Hello, ") {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if !strings.HasPrefix(res.Text, "Hello, ") || res.Text != seen.String() {
		t.Errorf("partial %q, seen %q", res.Text, seen.String())
	}
}

func TestNotOpenAI(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>My router</body></html>"))
	}))
	defer web.Close()
	c := newClient(t, web.URL, "")
	_, _, err := chat(c, chatReq())
	wantKind(t, err, ErrNotOpenAI, "does not look like an OpenAI-compatible server", "/v1/models")
	c.Dialect = Generic
	_, _, err = chat(c, chatReq())
	wantKind(t, err, ErrNotOpenAI, "web page")

	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	_, err = newClient(t, missing.URL, "").Models(context.Background())
	wantKind(t, err, ErrNotOpenAI, "404")
}
