package hub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flowchat/app/hub/hubtest"
	"flowchat/engine/fixtures"
)

func TestParseRef(t *testing.T) {
	for ref, want := range map[string][3]string{
		"o/m":                   {"o/m", "", ""},
		"o/m:Q4_K_M":            {"o/m", "Q4_K_M", ""},
		"o/m:dir/f.gguf@abc123": {"o/m", "dir/f.gguf", "abc123"},
		"o/m@v1.0":              {"o/m", "", "v1.0"},
	} {
		r, s, v, err := ParseRef(ref)
		if err != nil || [3]string{r, s, v} != want {
			t.Errorf("%s: %v %v %v %v", ref, r, s, v, err)
		}
	}
	for _, bad := range []string{"", "m", "o/m/x", "../m:q"} {
		if _, _, _, err := ParseRef(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// pullRig serves two quants of a real fixture and README.
func pullRig(t *testing.T) (*rig, []byte) {
	data, err := os.ReadFile(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-Q4_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, nil)
	r.hub.AddRepo(&hubtest.Repo{ID: "o/tiny-GGUF", Files: []*hubtest.File{
		{Path: "README.md", Data: []byte("# tiny")},
		{Path: "tiny-Q8_0.gguf", Data: data, LFS: true},
		{Path: "tiny-Q4_K_M.gguf", Data: data, LFS: true},
	}})
	return r, data
}

func TestPull(t *testing.T) {
	r, data := pullRig(t)
	var out bytes.Buffer
	o := PullOptions{Manager: r.m, Out: &out, Dir: func(repo string) string { return filepath.Join(r.dir, repo) },
		Free: Free{RAM: 8 << 30}}
	for sel, file := range map[string]string{"": "tiny-Q4_K_M.gguf", ":q8_0": "tiny-Q8_0.gguf"} {
		o.Ref = "o/tiny-GGUF" + sel
		res, err := Pull(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(res.Path)
		if filepath.Base(res.Path) != file || !bytes.Equal(got, data) {
			t.Errorf("%q: pulled %s", sel, res.Path)
		}
		if res.Verdict == nil || res.Verdict.Fit != Fits {
			t.Errorf("%q: verdict %v", sel, res.Verdict)
		}
	}
	if s := out.String(); !strings.Contains(s, "llama, ") || !strings.Contains(s, "fits: needs") || !strings.Contains(s, "of 8.0 GiB free") {
		t.Errorf("output:\n%s", s)
	}
	o.Ref = "o/tiny-GGUF:IQ1_S"
	if _, err := Pull(context.Background(), o); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Q8_0 (") {
		t.Errorf("missing quant: %v", err)
	}
}

// TestPullInterrupted: ending the context pauses the job and keeps the
// .part; pulling again resumes it.
func TestPullInterrupted(t *testing.T) {
	r, data := pullRig(t)
	r.m.o.StallTimeout = time.Minute
	r.hub.AddFault("o/tiny-GGUF", "tiny-Q8_0.gguf", hubtest.Fault{}, hubtest.Fault{StallAfter: 100_000}) // the first request reads the header
	ctx, cancel := context.WithCancel(context.Background())
	o := PullOptions{Ref: "o/tiny-GGUF:Q8_0", Manager: r.m, Dir: func(string) string { return r.dir }}
	part := filepath.Join(r.dir, "tiny-Q8_0.gguf.part")
	go func() {
		waitFor(t, func() bool { return fileSize(part) == 100_000 })
		cancel()
	}()
	if _, err := Pull(ctx, o); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("%v", err)
	}
	if fileSize(part) != 100_000 {
		t.Fatal("partial file not kept")
	}
	if _, err := Pull(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	r.expectFile("tiny-Q8_0.gguf", data)
}

func TestProgressBar(t *testing.T) {
	var out bytes.Buffer
	p := NewProgressBar(&out)
	p.Event(Event{Name: "m", State: Running, Done: 512 << 20, Total: 1 << 30, Speed: 10 << 20, ETA: 51 * time.Second})
	p.Event(Event{Name: "m", State: Retrying, Err: ErrStalled, RetryIn: 2 * time.Second, Attempt: 1})
	p.Event(Event{Name: "m", State: Done, Done: 1 << 30, Total: 1 << 30})
	want := "\r\x1b[Km  50% [===========>            ] 512.0 MiB / 1.0 GiB  10.0 MiB/s  ETA 51s" +
		"\r\x1b[Km: download stalled; retrying in 2s (attempt 2)\n" +
		"\r\x1b[Km: done, 1.0 GiB verified\n"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}

func TestPrintTables(t *testing.T) {
	var out bytes.Buffer
	PrintSearch(&out, []ModelSummary{{ID: "o/m", Downloads: 5, Likes: 2, GatedRaw: []byte(`"manual"`)}})
	PrintFiles(&out, []RemoteModel{{Quant: "Q4_K_M", Kind: KindGGUF, Size: 1 << 20, Files: []RepoFile{{Path: "a"}, {Path: "b"}}}}, []*Verdict{{Fit: Tight}})
	for _, s := range []string{"o/m", "gated", "Q4_K_M", "1.0 MiB", "tight", "a (+1 parts)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("missing %q in\n%s", s, out.String())
		}
	}
}
