package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sentinel errors wrapped by *HTTPError and by the download manager, for
// errors.Is.
var (
	// ErrGated: the repository needs a token with access (gated or private).
	ErrGated = errors.New("access denied")
	// ErrNotFound: the repository, revision or file does not exist.
	ErrNotFound = errors.New("not found")
	// ErrRateLimited: the hub answered 429 Too Many Requests.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the hub answered 5xx.
	ErrServer = errors.New("server error")
	// ErrChecksum: a downloaded file's sha256 differs from the LFS oid.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrDiskFull: not enough free disk space for a download.
	ErrDiskFull = errors.New("not enough disk space")
	// ErrStalled: no bytes arrived for the stall timeout.
	ErrStalled = errors.New("download stalled")
)

// HTTPError is a non-success answer from the hub or its CDN.
type HTTPError struct {
	Status     int
	Code       string        // the hub's X-Error-Code header, if any
	Message    string        // a sentence for a person
	URL        string        // the request URL
	RetryAfter time.Duration // from Retry-After on 429/503, else 0
	kind       error         // one of the sentinels, or nil
}

func (e *HTTPError) Error() string { return e.Message }

func (e *HTTPError) Unwrap() error { return e.kind }

// Temporary reports whether retrying later can succeed (429 and 5xx).
func (e *HTTPError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// what names the thing a request was about, for messages.
type what struct {
	repo, path string
}

func (w what) String() string {
	if w.path == "" {
		return "model " + w.repo
	}
	return fmt.Sprintf("file %s in model %s", w.path, w.repo)
}

// responseError turns a non-2xx response into an *HTTPError with a message
// that says what to do. It reads (a little of) the body and closes it.
func (c *Client) responseError(resp *http.Response, w what) *HTTPError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	e := &HTTPError{
		Status: resp.StatusCode,
		Code:   resp.Header.Get("X-Error-Code"),
		URL:    resp.Request.URL.Redacted(),
	}
	e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	e.kind, e.Message = c.explain(e, w, serverMessage(resp, body))
	return e
}

// explain picks the sentinel and the sentence for an error answer.
func (c *Client) explain(e *HTTPError, w what, detail string) (error, string) {
	switch {
	case c.Token != "" && (e.Code == "GatedRepo" || e.Status == http.StatusForbidden):
		return ErrGated, fmt.Sprintf("%s is gated and your token has no access to it: open %s, log in, accept the licence (access may take a while to be granted), then try again", w, c.ModelPage(w.repo))
	case e.Code == "EntryNotFound" || (e.Status == http.StatusNotFound && w.path != ""):
		return ErrNotFound, fmt.Sprintf("%s not found (check the file name; list the files with 'flowchat search')", w)
	case e.Code == "RevisionNotFound":
		return ErrNotFound, fmt.Sprintf("revision of model %s not found", w.repo)
	case e.Status == http.StatusUnauthorized && c.Token != "":
		return ErrGated, fmt.Sprintf("the hub refused your token for %s: it is invalid or expired, or the model is private; make a new read token at %s/settings/tokens and set HF_TOKEN", w, c.endpoint())
	case e.Status == http.StatusUnauthorized, e.Status == http.StatusForbidden:
		return ErrGated, fmt.Sprintf("%s needs a Hugging Face token: it is gated or private (or does not exist). Open %s, log in and accept the licence, then make a read token at %s/settings/tokens and set HF_TOKEN (or save it in %s)", w, c.ModelPage(w.repo), c.endpoint(), TokenPath())
	case e.Status == http.StatusNotFound || e.Code == "RepoNotFound":
		return ErrNotFound, fmt.Sprintf("%s not found on %s", w, c.endpoint())
	case e.Status == http.StatusTooManyRequests:
		return ErrRateLimited, fmt.Sprintf("the hub is rate limiting requests for %s; retry in %v", w, e.RetryAfter.Round(time.Second))
	case e.Status >= 500:
		return ErrServer, fmt.Sprintf("the hub had a server error (%d) for %s%s", e.Status, w, detail)
	}
	return nil, fmt.Sprintf("unexpected answer %d for %s%s", e.Status, w, detail)
}

// serverMessage is the hub's own explanation, from X-Error-Message or a
// short body, as ": …" or "".
func serverMessage(resp *http.Response, body []byte) string {
	m := resp.Header.Get("X-Error-Message")
	if m == "" && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		m = strings.TrimSpace(string(body))
	}
	if m == "" || len(m) > 300 {
		return ""
	}
	return ": " + m
}

// retryAfter parses Retry-After (seconds or an HTTP date); 0 when absent.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ErrOffline: the hub could not be reached at all (no network, no DNS,
// connection refused); wrapped by *OfflineError.
var ErrOffline = errors.New("offline")

// OfflineError is a request that never reached the hub. Its message is a
// sentence for a person, without the Go error chain or the request URL;
// Err keeps the transport's error for logs.
type OfflineError struct {
	Host string // the hub's host, e.g. huggingface.co
	Err  error
}

func (e *OfflineError) Error() string {
	return fmt.Sprintf("You appear to be offline: %s cannot be reached. Check the network connection (or HF_ENDPOINT) and try again; the bundled demo model works without one.", e.Host)
}

func (e *OfflineError) Unwrap() []error { return []error{ErrOffline, e.Err} }

// transport classifies an error of HTTP.Do: one that never reached the
// server becomes an *OfflineError; cancellations and anything else are
// returned as they are.
func (c *Client) transport(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !unreachable(err) {
		return err
	}
	host := c.endpoint()
	if u, perr := url.Parse(host); perr == nil && u.Host != "" {
		host = u.Host
	}
	return &OfflineError{Host: host, Err: err}
}

// unreachable: a name that does not resolve, or a connection that could
// not be opened.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	return errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial" ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH)
}

// Message is err as a person should read it: an offline error's sentence
// alone, without what wrapped it; otherwise err's message.
func Message(err error) string {
	var off *OfflineError
	if errors.As(err, &off) {
		return off.Error()
	}
	return err.Error()
}
