package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultEndpoint is the hub used when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// Client is a hub client. The zero value is not usable; call NewClient.
type Client struct {
	// Endpoint is the hub's base URL without a trailing slash.
	Endpoint string
	// Token is sent as a bearer token to the hub, never to the CDN a
	// download redirects to. Empty for anonymous access.
	Token string
	// HTTP does the requests. Its CheckRedirect is replaced.
	HTTP *http.Client
	// UserAgent identifies flowchat to the hub.
	UserAgent string
}

// Options configure NewClient. Zero fields take the defaults.
type Options struct {
	Endpoint string       // default: $HF_ENDPOINT, else DefaultEndpoint
	Token    string       // default: $HF_TOKEN, else the token file (see TokenPath)
	HTTP     *http.Client // default: a client with connection timeouts but no overall timeout
	NoToken  bool         // send no token even if one is configured
}

// NewClient makes a client, filling Options from the environment as the
// official clients do.
func NewClient(o Options) *Client {
	c := &Client{Endpoint: o.Endpoint, Token: o.Token, HTTP: o.HTTP, UserAgent: "flowchat/1 (hub client)"}
	if c.Endpoint == "" {
		c.Endpoint = os.Getenv("HF_ENDPOINT")
	}
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	if c.Token == "" && !o.NoToken {
		c.Token = LookupToken()
	}
	if o.NoToken {
		c.Token = ""
	}
	if c.HTTP == nil {
		c.HTTP = defaultHTTPClient()
	}
	hc := *c.HTTP // a copy: the caller's client keeps its own redirect policy
	hc.CheckRedirect = checkRedirect
	c.HTTP = &hc
	return c
}

// defaultHTTPClient has no overall timeout (a download takes hours) but
// bounds connecting and waiting for headers; stalls mid-body are caught by
// the download manager.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	return &http.Client{Transport: t}
}

func (c *Client) endpoint() string {
	if c.Endpoint == "" {
		return DefaultEndpoint
	}
	return c.Endpoint
}

// ModelPage is the URL of a model's page on the hub (where a gated model's
// licence is accepted).
func (c *Client) ModelPage(repo string) string { return c.endpoint() + "/" + repo }

// TokenPath is the standard token file: $HF_TOKEN_PATH, else $HF_HOME/token,
// else ~/.cache/huggingface/token (XDG_CACHE_HOME honoured, as the official
// client does).
func TokenPath() string {
	if p := os.Getenv("HF_TOKEN_PATH"); p != "" {
		return p
	}
	return filepath.Join(HFHome(), "token")
}

// HFHome is $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
// ~/.cache/huggingface.
func HFHome() string {
	if h := os.Getenv("HF_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "huggingface")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".cache", "huggingface")
	}
	return filepath.Join(home, ".cache", "huggingface")
}

// LookupToken returns $HF_TOKEN, else the token file's content, else "".
func LookupToken() string {
	if t := strings.TrimSpace(os.Getenv("HF_TOKEN")); t != "" {
		return t
	}
	b, err := os.ReadFile(TokenPath())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// redirectLog records the redirect responses of one request (the hub's
// resolve/ answer carries X-Repo-Commit and X-Linked-Etag; the final CDN
// answer does not).
type redirectLog struct{ hops []*http.Response }

type redirectKey struct{}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("hub: stopped after 10 redirects")
	}
	if l, ok := req.Context().Value(redirectKey{}).(*redirectLog); ok && req.Response != nil {
		l.hops = append(l.hops, req.Response)
	}
	// The token is for the hub only. net/http keeps it on redirects to the
	// same host on another port and to subdomains (cdn-lfs.huggingface.co),
	// and a presigned CDN URL must not get a second credential.
	if req.URL.Host != via[0].URL.Host {
		req.Header.Del("Authorization")
	}
	return nil
}

// newRequest builds a request to the hub with the token (checkRedirect
// drops it when a redirect leaves the hub's host).
func (c *Client) newRequest(ctx context.Context, method, rawURL string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	req.Header.Set("User-Agent", c.UserAgent)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// getJSON GETs rawURL into v and returns the rel="next" link, if any.
func (c *Client) getJSON(ctx context.Context, rawURL string, w what, v any) (next string, err error) {
	req, err := c.newRequest(ctx, http.MethodGet, rawURL)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	err = c.transport(err)
	if err != nil {
		return "", fmt.Errorf("hub: %s: %w", w, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", c.responseError(resp, w)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(v); err != nil {
		return "", fmt.Errorf("hub: %s: reading the answer of %s: %w", w, resp.Request.URL.Redacted(), err)
	}
	return nextLink(resp.Header.Values("Link"), resp.Request.URL), nil
}

// nextLink finds the rel="next" target in Link headers (RFC 8288),
// resolved against base.
func nextLink(links []string, base *url.URL) string {
	for _, h := range links {
		for _, part := range splitLinks(h) {
			target, params, ok := strings.Cut(part, ";")
			target = strings.TrimSpace(target)
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") || !hasRelNext(params) {
				continue
			}
			u, err := base.Parse(target[1 : len(target)-1])
			if err == nil {
				return u.String()
			}
		}
	}
	return ""
}

// splitLinks splits a Link header at the commas between links (commas
// inside <…> belong to URLs).
func splitLinks(h string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range h {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
		case r == ',' && depth == 0:
			parts = append(parts, h[start:i])
			start = i + 1
		}
	}
	return append(parts, h[start:])
}

func hasRelNext(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "rel") {
			for r := range strings.FieldsSeq(strings.Trim(strings.TrimSpace(v), `"`)) {
				if strings.EqualFold(r, "next") {
					return true
				}
			}
		}
	}
	return false
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ValidRepoID reports whether id looks like "owner/name" (the hub's rules:
// letters, digits, '-', '_', '.'; no "--" or ".." and no leading/trailing
// '-' or '.').
func ValidRepoID(id string) bool {
	owner, name, ok := strings.Cut(id, "/")
	return ok && validRepoPart(owner) && validRepoPart(name)
}

func validRepoPart(s string) bool {
	if s == "" || len(s) > 96 || strings.Contains(s, "--") || strings.Contains(s, "..") {
		return false
	}
	if strings.ContainsAny(s[:1]+s[len(s)-1:], "-.") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// ResolveURL is the download URL of a file at a revision:
// {endpoint}/{repo}/resolve/{revision}/{path}.
func (c *Client) ResolveURL(repo, revision, path string) string {
	return fmt.Sprintf("%s/%s/resolve/%s/%s", c.endpoint(), repo, url.PathEscape(rev(revision)), escapePath(path))
}

func rev(r string) string {
	if r == "" {
		return "main"
	}
	return r
}
