// Package remote talks to inference servers that speak OpenAI's chat
// completions API: vLLM (and TGI, SGLang), llama.cpp's llama-server,
// Ollama, a flowchat server, or any other. It lists models
// (/v1/models), streams replies (/v1/chat/completions as server-sent
// events; Ollama's native /api/chat as JSON lines, whose "options" carry
// the samplers its OpenAI endpoint drops), detects the server's dialect,
// and maps flowchat's sampling parameters onto the standard fields and
// each dialect's extra ones, reporting those it cannot honour.
//
// It is written on net/http rather than an OpenAI SDK: the SDKs know only
// OpenAI's own fields (dialect extras would go through untyped escape
// hatches), do not speak Ollama's native stream, retry on their own
// schedule, and hide the transport errors this package turns into precise
// messages (connect, TLS, idle timeouts, disconnects with the partial
// reply kept). What is needed of the protocol is two JSON shapes and an
// event-stream reader, about the size of the SDK glue it would replace.
//
// No request hangs: dialing and the TLS handshake have ConnectTimeout,
// and a watchdog cancels a request when no byte has arrived for
// IdleTimeout, from sending it to the end of the stream.
package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for the Client's limits.
const (
	DefaultConnectTimeout = 10 * time.Second
	// DefaultIdleTimeout allows for a long prompt on a busy server: the
	// first byte of a stream can follow the whole prefill.
	DefaultIdleTimeout = 2 * time.Minute
	DefaultMaxRetries  = 2
	DefaultMaxWait     = 30 * time.Second
)

// Client talks to one server. Set its fields before the first request.
type Client struct {
	base   *url.URL // without a trailing /v1
	apiKey string
	// Dialect is the server's flavour; "" means detect it on first use.
	Dialect Dialect
	// ConnectTimeout bounds dialing and the TLS handshake; IdleTimeout
	// bounds any wait for the next byte of an answer.
	ConnectTimeout, IdleTimeout time.Duration
	// MaxRetries is how many times a 429 is retried, each after the wait
	// its Retry-After asks for, when that is at most MaxWait.
	MaxRetries int
	MaxWait    time.Duration
	// TLSConfig, when set, replaces the system's (tests trust their own
	// certificate with it).
	TLSConfig *tls.Config

	once sync.Once
	http *http.Client
	mu   sync.Mutex // guards Dialect during detection
}

// New returns a client for the server at baseURL (http or https, with or
// without a trailing /v1). apiKey may be empty.
func New(baseURL, apiKey string) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote: %q is not an http:// or https:// URL", baseURL)
	}
	u.User = nil
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	return &Client{base: u, apiKey: apiKey, ConnectTimeout: DefaultConnectTimeout,
		IdleTimeout: DefaultIdleTimeout, MaxRetries: DefaultMaxRetries, MaxWait: DefaultMaxWait}, nil
}

// Host is the server's host:port, as messages name it.
func (c *Client) Host() string { return c.base.Host }

// BaseURL is the server's URL without /v1.
func (c *Client) BaseURL() string { return c.base.String() }

// String names the server without its key.
func (c *Client) String() string { return c.BaseURL() }

func (c *Client) client() *http.Client {
	c.once.Do(func() {
		d := &net.Dialer{Timeout: c.ConnectTimeout, KeepAlive: 30 * time.Second}
		c.http = &http.Client{Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext,
			TLSHandshakeTimeout: c.ConnectTimeout, TLSClientConfig: c.TLSConfig,
			MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true,
		}}
	})
	return c.http
}

// watchdog cancels a request when no byte arrives for IdleTimeout.
type watchdog struct {
	t      *time.Timer
	idle   time.Duration
	cancel context.CancelCauseFunc
}

func (c *Client) watch(ctx context.Context) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{idle: c.IdleTimeout, cancel: cancel}
	w.t = time.AfterFunc(w.idle, func() {
		cancel(fmt.Errorf("nothing arrived for %v", w.idle))
	})
	return ctx, w
}

func (w *watchdog) kick() { w.t.Reset(w.idle) }

func (w *watchdog) stop() {
	w.t.Stop()
	w.cancel(nil)
}

// kickReader resets the watchdog on every read that returns bytes.
type kickReader struct {
	r io.Reader
	w *watchdog
}

func (k kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.w.kick()
	}
	return n, err
}

// response is an answer whose body is guarded by a watchdog; Close
// releases both.
type response struct {
	*http.Response
	ctx  context.Context
	dog  *watchdog
	body io.Reader
}

func (r *response) Close() {
	r.Body.Close()
	r.dog.stop()
}

// cause is why the watchdog cancelled the request, or nil.
func (r *response) cause() error { return watchCause(r.ctx) }

func watchCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return c
	}
	return nil
}

// do sends one request, retrying 429s as Retry-After allows, and returns
// a 2xx response or the error describing the failure.
func (c *Client) do(ctx context.Context, method, path string, body any) (*response, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		r, err := c.attempt(ctx, method, path, payload)
		rl, ok := err.(*Error)
		if !ok || rl.Kind != ErrRateLimited || attempt >= c.MaxRetries || rl.RetryAfter > c.MaxWait {
			return r, err
		}
		wait := rl.RetryAfter
		if wait == 0 {
			wait = time.Second << attempt
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, err
		}
	}
}

// attempt is one try of do.
func (c *Client) attempt(ctx context.Context, method, path string, payload []byte) (*response, error) {
	wctx, dog := c.watch(ctx)
	req, err := http.NewRequestWithContext(wctx, method, c.base.JoinPath(path).String(), bytes.NewReader(payload))
	if err != nil {
		dog.stop()
		return nil, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		dog.stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, transportError(c.Host(), err, watchCause(wctx))
	}
	dog.kick()
	r := &response{Response: resp, ctx: wctx, dog: dog, body: kickReader{resp.Body, dog}}
	if resp.StatusCode/100 != 2 {
		defer r.Close()
		return nil, c.statusError(r, path)
	}
	return r, nil
}

// statusError describes a non-2xx answer from its status and body.
func (c *Client) statusError(r *response, path string) *Error {
	b, _ := io.ReadAll(io.LimitReader(r.body, 64<<10))
	msg, isJSON := serverMessage(b)
	e := &Error{Kind: ErrServer, Host: c.Host(), Status: r.StatusCode, Detail: msg}
	switch {
	case r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusForbidden:
		e.Kind = ErrAuth
	case r.StatusCode == http.StatusTooManyRequests:
		e.Kind, e.RetryAfter = ErrRateLimited, retryAfter(r.Header.Get("Retry-After"))
	case (r.StatusCode == http.StatusNotFound || r.StatusCode == http.StatusBadRequest) && isJSON &&
		strings.Contains(strings.ToLower(msg), "model"):
		e.Kind = ErrUnknownModel
	case r.StatusCode == http.StatusNotFound || r.StatusCode == http.StatusMethodNotAllowed || !isJSON:
		e.Kind = ErrNotOpenAI
		e.Detail = fmt.Sprintf("%s answered HTTP %d %s", path, r.StatusCode, clip(msg))
	}
	return e
}

// serverMessage finds the message in the error bodies the servers send:
// OpenAI's and vLLM's {"error": {"message"}} or {"message"}, llama.cpp's
// {"error": {"message"}}, Ollama's {"error": "…"}. It reports whether the
// body was JSON at all.
func serverMessage(b []byte) (string, bool) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &v) != nil {
		return clip(strings.TrimSpace(string(b))), false
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil && s != "" {
		return s, true
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(v.Error, &o) == nil && o.Message != "" {
		return o.Message, true
	}
	if v.Message != "" {
		return v.Message, true
	}
	if v.Detail != nil {
		return fmt.Sprint(v.Detail), true
	}
	return "", true
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}

// getJSON fetches path and decodes its JSON body into v; a body that is
// not JSON means the server is not one this package speaks to.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	r, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r.body, 8<<20))
	if err != nil {
		return transportError(c.Host(), err, r.cause())
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Error{Kind: ErrNotOpenAI, Host: c.Host(), Status: r.StatusCode,
			Detail: fmt.Sprintf("%s answered something other than JSON: %q", path, clip(string(b)))}
	}
	return nil
}
