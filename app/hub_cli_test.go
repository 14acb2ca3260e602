package main

import (
	"net"
	"os"
	"strings"
	"testing"

	"flowchat/app/hub/hubtest"
	"flowchat/engine/fixtures"
)

// TestSearchPullRun: `flowchat search` and `flowchat pull` against a fake hub
// on loopback (HF_ENDPOINT), the download cut once mid-body and resumed,
// then the pulled model runs.
func TestSearchPullRun(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path(t, "models/stories260K/stories260K-Q8_0mix.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New()
	defer h.Close()
	h.AddRepo(&hubtest.Repo{ID: "karpathy/stories260K-GGUF", Tags: []string{"gguf"}, Downloads: 42, Files: []*hubtest.File{
		{Path: "stories260K-Q8_0.gguf", Data: data, LFS: true},
		{Path: "README.md", Data: []byte("# stories")},
	}})
	h.AddFault("karpathy/stories260K-GGUF", "stories260K-Q8_0.gguf", hubtest.Fault{DropAfter: 100_000})
	t.Setenv("HF_ENDPOINT", h.URL())
	t.Setenv("HF_TOKEN", "")

	out, stderr, code := run(t, "search", "stories")
	if code != 0 || !strings.Contains(out, "karpathy/stories260K-GGUF") {
		t.Fatalf("search: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, "pull", "karpathy/stories260K-GGUF:Q8_0")
	if code != 0 || !strings.Contains(out, "ready: ") {
		t.Fatalf("pull: exit %d\n%s\n%s", code, out, stderr)
	}
	path := strings.TrimSpace(strings.SplitN(strings.SplitN(out, "ready: ", 2)[1], "\n", 2)[0])
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(data) {
		t.Fatalf("pulled file differs from the served one (%v)", err)
	}
	if served := h.BytesServed("stories260K-Q8_0.gguf"); served > int64(len(data))+100_000 {
		t.Errorf("resume re-sent too much: %d bytes for a %d-byte file", served, len(data))
	}
	text, stderr, code := run(t, "run", "--model", path, "--prompt", "Once upon a time", "-n", "8", "--greedy")
	if code != 0 || text == "" {
		t.Fatalf("run on the pulled model: exit %d %q %s", code, text, stderr)
	}
	// A model that is not there is a clear error.
	if _, stderr, code = run(t, "pull", "nobody/missing-GGUF"); code == 0 || !strings.Contains(strings.ToLower(stderr), "does not exist") {
		t.Errorf("missing repo: exit %d, %q", code, stderr)
	}
}

// TestOfflineCLI: offline, search and pull say so in one plain line.
func TestOfflineCLI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("HF_ENDPOINT", "http://"+addr)
	t.Setenv("HF_TOKEN", "")
	for _, args := range [][]string{{"search", "qwen2.5", "instruct"}, {"pull", "qwen2.5-0.5b"}, {"pull", "o/m-GGUF:Q4_0"}, {"search", "--files", "o/m-GGUF"}} {
		out, stderr, code := run(t, args...)
		want := "flowchat: You appear to be offline: " + addr + " cannot be reached."
		if code != 1 || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "%") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
}
