package hub

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"flowchat/app/hub/hubtest"
	"flowchat/engine/fixtures"
)

// isolate points every HF_* setting at nothing, so tests never read the
// developer's token or reach the real hub.
func isolate(t *testing.T) {
	t.Helper()
	for _, k := range []string{"HF_TOKEN", "HF_TOKEN_PATH", "HF_ENDPOINT", "XDG_CACHE_HOME", "HF_HUB_CACHE"} {
		t.Setenv(k, "")
	}
	t.Setenv("HF_HOME", t.TempDir())
}

// fakeHub starts a fake hub with a few repositories.
func fakeHub(t *testing.T) *hubtest.Hub {
	t.Helper()
	isolate(t)
	h := hubtest.New()
	t.Cleanup(h.Close)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"bartowski/Llama-3.2-1B-Instruct-GGUF", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF", "someone/llama-notes"} {
		r := &hubtest.Repo{ID: id, Downloads: int64(100 * (i + 1)), Likes: int64(10 * (4 - i)), Tags: []string{"gguf"}, Library: "gguf", LastModified: base.AddDate(0, i%2, i)}
		if i == 3 {
			r.Tags = []string{"text-generation"}
		}
		r.Files = []*hubtest.File{{Path: "README.md", Data: []byte("# " + id)}, {Path: "model-Q4_K_M.gguf", Data: []byte(strings.Repeat("x", 1000+i)), LFS: true}}
		h.AddRepo(r)
	}
	return h
}

func TestSearchPaginationAndSort(t *testing.T) {
	h := fakeHub(t)
	h.PageSize = 1
	c := NewClient(Options{Endpoint: h.URL()})
	var ids []string
	page, err := c.Search(context.Background(), SearchQuery{Text: "ll", Sort: SortDownloads})
	for err == nil {
		for _, m := range page.Models {
			ids = append(ids, m.ID)
			if m.Author != strings.Split(m.ID, "/")[0] || m.Downloads == 0 || m.LastModified.IsZero() {
				t.Errorf("summary incomplete: %+v", m)
			}
		}
		if page.Next == "" {
			break
		}
		page, err = c.SearchPage(context.Background(), page.Next)
	}
	if err != nil {
		t.Fatal(err)
	}
	// "someone/llama-notes" is not tagged gguf; the rest by downloads.
	want := []string{"TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF", "bartowski/Llama-3.2-1B-Instruct-GGUF"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("got %v, want %v", ids, want)
	}
	u, _ := url.Parse(c.SearchURL(SearchQuery{Text: "qwen", Sort: SortLikes, Limit: 5}))
	q := u.Query()
	if q.Get("filter") != "gguf" || q.Get("sort") != "likes" || q.Get("direction") != "-1" || q.Get("limit") != "5" || q.Get("search") != "qwen" {
		t.Errorf("search URL %s", u)
	}
}

func TestNextLink(t *testing.T) {
	base, _ := url.Parse("https://hub.example/api/models?search=x")
	for h, want := range map[string]string{
		`<https://hub.example/api/models?cursor=abc,def>; rel="next"`: "https://hub.example/api/models?cursor=abc,def",
		`</api/models?p=2>; rel="prev", </api/models?p=3>; rel=next`:  "https://hub.example/api/models?p=3",
		`<https://x/a>; rel="last"`:                                   "",
		`<https://x/a>; title="a;b"; rel="prefetch next"`:             "https://x/a",
		`garbage`: "",
	} {
		if got := nextLink([]string{h}, base); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
}

func TestListFilesPaginated(t *testing.T) {
	h := fakeHub(t)
	h.PageSize = 1
	h.AddRepo(&hubtest.Repo{ID: "o/m", Files: []*hubtest.File{
		{Path: "a/b/x-Q8_0.gguf", Data: []byte("abc"), LFS: true}, {Path: "config.json", Data: []byte("{}")},
	}})
	c := NewClient(Options{Endpoint: h.URL()})
	files, err := c.ListFiles(context.Background(), "o/m", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "a/b/x-Q8_0.gguf" || files[0].SHA256() != hubtest.SHA256([]byte("abc")) || files[0].ContentSize() != 3 ||
		files[1].SHA256() != "" || files[1].OID != hubtest.GitOID([]byte("{}")) {
		t.Errorf("files %+v", files)
	}
	if _, err := c.ListFiles(context.Background(), "not a repo", ""); err == nil {
		t.Error("bad repo id accepted")
	}
}

func TestEndpointFromEnvironment(t *testing.T) {
	h := fakeHub(t)
	t.Setenv("HF_ENDPOINT", h.URL()+"/")
	c := NewClient(Options{})
	if c.Endpoint != h.URL() {
		t.Fatalf("endpoint %q", c.Endpoint)
	}
	if _, err := c.ListFiles(context.Background(), "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "main"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_ENDPOINT", "")
	if NewClient(Options{}).ModelPage("a/b") != "https://huggingface.co/a/b" {
		t.Error("default endpoint")
	}
}

func TestTokenSources(t *testing.T) {
	isolate(t)
	if LookupToken() != "" {
		t.Fatal("token found in an empty environment")
	}
	home := os.Getenv("HF_HOME")
	os.WriteFile(filepath.Join(home, "token"), []byte("hf_file\n"), 0o600)
	if got := NewClient(Options{}).Token; got != "hf_file" {
		t.Errorf("token file: %q", got)
	}
	t.Setenv("HF_TOKEN", "hf_env")
	if got := NewClient(Options{}).Token; got != "hf_env" {
		t.Errorf("HF_TOKEN: %q", got)
	}
	if got := NewClient(Options{Token: "hf_set"}).Token; got != "hf_set" {
		t.Errorf("explicit: %q", got)
	}
	if got := NewClient(Options{NoToken: true}).Token; got != "" {
		t.Errorf("NoToken: %q", got)
	}
}

func TestAccessErrors(t *testing.T) {
	h := fakeHub(t)
	h.Tokens = []string{"hf_good", "hf_granted"}
	h.AddRepo(&hubtest.Repo{ID: "meta-llama/Llama-3.2-1B-Instruct", Gated: true, Allowed: []string{"hf_granted"},
		Files: []*hubtest.File{{Path: "model.safetensors", Data: []byte("w"), LFS: true}}})
	cases := []struct {
		token, repo string
		kind        error
		says        []string
	}{
		{"", "meta-llama/Llama-3.2-1B-Instruct", ErrGated, []string{"gated", "accept the licence", "HF_TOKEN", h.URL() + "/meta-llama/Llama-3.2-1B-Instruct"}},
		{"hf_good", "meta-llama/Llama-3.2-1B-Instruct", ErrGated, []string{"gated", "no access", "accept the licence"}},
		{"hf_bad", "meta-llama/Llama-3.2-1B-Instruct", ErrGated, []string{"refused your token", "HF_TOKEN"}},
		{"", "nobody/nothing", ErrGated, []string{"gated or private (or does not exist)"}},
		{"hf_good", "nobody/nothing", ErrNotFound, []string{"not found"}},
	}
	for _, c := range cases {
		cl := NewClient(Options{Endpoint: h.URL(), Token: c.token, NoToken: c.token == ""})
		_, err := cl.ListFiles(context.Background(), c.repo, "")
		if !errors.Is(err, c.kind) {
			t.Errorf("token %q repo %s: %v, want %v", c.token, c.repo, err, c.kind)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("token %q repo %s: %q does not say %q", c.token, c.repo, err, s)
			}
		}
	}
	cl := NewClient(Options{Endpoint: h.URL(), Token: "hf_granted"})
	if _, err := cl.ListFiles(context.Background(), "meta-llama/Llama-3.2-1B-Instruct", ""); err != nil {
		t.Errorf("granted token: %v", err)
	}
	_, err := cl.FetchHeader(context.Background(), "meta-llama/Llama-3.2-1B-Instruct", "", "missing.gguf")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "file missing.gguf in model") {
		t.Errorf("missing file: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"": 0, "7": 7 * time.Second, "Wed, 01 Jan 2025 00:00:30 GMT": 30 * time.Second, "soon": 0} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

// TestFetchHeaderOverHTTP serves a fixture from the fake CDN and reads its
// metadata through range requests: the result equals the local parse and
// far fewer bytes than the file were sent. The token must not reach the CDN.
func TestFetchHeaderOverHTTP(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	h := fakeHub(t)
	h.Tokens = []string{"hf_tok"}
	h.AddRepo(&hubtest.Repo{ID: "o/tiny", Files: []*hubtest.File{{Path: "TinyStories-656K-F32.gguf", Data: data, LFS: true}}})
	c := NewClient(Options{Endpoint: h.URL(), Token: "hf_tok"})
	got, err := c.fetchHeaderURL(context.Background(), c.ResolveURL("o/tiny", "", "TinyStories-656K-F32.gguf"), what{repo: "o/tiny"}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ParseHeader(data)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("remote header differs from the local parse")
	}
	sent := h.BytesServed(".gguf")
	if sent > int64(want.DataOffset)*2+4096 || sent >= int64(len(data))/4 {
		t.Errorf("sent %d bytes for a %d-byte header of a %d-byte file", sent, want.DataOffset, len(data))
	}
	ranges := 0
	for _, r := range h.Requests() {
		if r.Server == "cdn" {
			ranges++
			if r.Auth != "" || r.Range == "" || r.Status != 206 {
				t.Errorf("CDN request %+v", r)
			}
		}
	}
	if ranges < 2 {
		t.Errorf("%d range requests; the 4 KiB first read should have needed more", ranges)
	}
	t.Logf("header %d bytes of %d; %d bytes sent in %d requests", want.DataOffset, len(data), sent, ranges)
}

// TestFetchHeaderIgnoredRange: a server that answers 200 to Range still
// gives the right header, reading only a prefix of the body.
func TestFetchHeaderIgnoredRange(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path(t, "models/stories260K/stories260K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	h := fakeHub(t)
	h.AddRepo(&hubtest.Repo{ID: "o/s", Files: []*hubtest.File{{Path: "s.gguf", Data: data, LFS: true}}})
	h.AddFault("o/s", "s.gguf", hubtest.Fault{IgnoreRange: true}, hubtest.Fault{IgnoreRange: true}, hubtest.Fault{IgnoreRange: true})
	c := NewClient(Options{Endpoint: h.URL()})
	got, err := c.fetchHeaderURL(context.Background(), c.ResolveURL("o/s", "", "s.gguf"), what{repo: "o/s"}, 1024)
	want, _ := ParseHeader(data)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v", err)
	}
	info := got.Info()
	if info.Architecture != "llama" || info.BlockCount == 0 {
		t.Errorf("info %+v", info)
	}
}

// FuzzResponseHeaders: the Link and Content-Range parsers take server
// bytes; they must not panic, and a parsed range must be ordered.
func FuzzResponseHeaders(f *testing.F) {
	f.Add(`<https://x/api/models?cursor=a>; rel="next"`, "bytes 0-99/100")
	f.Add(`<a>; rel=prev, <b>; rel="next last"`, "bytes 5-4/*")
	base, _ := url.Parse("https://hub.example/api/models")
	f.Fuzz(func(t *testing.T, link, cr string) {
		nextLink([]string{link}, base)
		if s, e, _, ok := parseContentRange(cr); ok && (s < 0 || e < s) {
			t.Fatalf("%q: %d-%d", cr, s, e)
		}
	})
}

func TestParseContentRange(t *testing.T) {
	for v, want := range map[string][4]int64{
		"bytes 100-199/1000": {100, 199, 1000, 1},
		"bytes 0-0/*":        {0, 0, -1, 1},
		"bytes 5-4/10":       {0, 0, 0, 0},
		"items 0-1/2":        {0, 0, 0, 0},
		"bytes x-1/2":        {0, 0, 0, 0},
	} {
		s, e, tot, ok := parseContentRange(v)
		got := [4]int64{s, e, tot, map[bool]int64{true: 1}[ok]}
		if ok != (want[3] == 1) || ok && got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}
