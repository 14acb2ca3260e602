package ui_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"flowchat/app/store"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// A repo with three quants: the recommended Q4_K_M, a small Q2_K and a Q8_0
// too big for the fake's 8 GiB.
func testHub() *fake.Hub {
	files := func(repo string) []ui.RemoteFile {
		return []ui.RemoteFile{
			{Repo: repo, Name: "m-Q2_K", Kind: "gguf", Quant: "Q2_K", Size: 1 << 30, Files: 1, Complete: true, Selector: "m-Q2_K.gguf"},
			{Repo: repo, Name: "m-Q4_K_M", Kind: "gguf", Quant: "Q4_K_M", Size: 6 << 30, Files: 1, Complete: true, Selector: "m-Q4_K_M.gguf", Recommended: true},
			{Repo: repo, Name: "m-Q8_0", Kind: "gguf", Quant: "Q8_0", Size: 9 << 30, Files: 2, Complete: true, Selector: "m-Q8_0-00001-of-00002.gguf"},
		}
	}
	h := &fake.Hub{
		Entries: []ui.CatalogEntry{{Name: "Tiny Chat", Description: "small", Repo: "acme/tiny-GGUF", File: "m-Q2_K.gguf", Quant: "Q2_K", Params: "135M", Size: 1 << 30, License: "mit"}},
	}
	for i, id := range []string{"acme/tiny-GGUF", "acme/llama-GGUF", "other/llama-chat-GGUF", "meta/llama-gated-GGUF"} {
		h.Repos = append(h.Repos, fake.HubRepo{Model: ui.HubModel{ID: id, Downloads: int64(1000 * (i + 1)), Likes: int64(40 - 10*i),
			Updated: time.Date(2024, 9, i+1, 0, 0, 0, 0, time.UTC), Gated: strings.Contains(id, "gated")}, Files: files(id)})
	}
	return h
}

func newHubHarness(t *testing.T, hub *fake.Hub, dl *fake.Downloads) *harness {
	t.Helper()
	dir := t.TempDir()
	loc := store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}
	return startHarnessWith(t, scripted("ok"), loc, func(d *ui.Deps) { d.Hub, d.Downloads = hub, dl })
}

// search submits text and waits for n results.
func (h *harness) search(text string, n int) {
	h.t.Helper()
	h.a.DiscoverQuery().SetText(text)
	h.a.DiscoverQuery().OnSubmitted(text)
	h.pumpUntil("results for "+text, func() bool { return strings.HasPrefix(h.a.DiscoverHeading(), fmt.Sprintf("%d models for", n)) })
}

func TestDiscoverShowsCatalogThenSearchResults(t *testing.T) {
	hub := testHub()
	h := newHubHarness(t, hub, &fake.Downloads{})
	if got := h.a.Screens(); strings.Join(got, ",") != "Chat,Discover,Downloads" {
		t.Errorf("screens %v", got)
	}
	rows := h.a.DiscoverRows()
	if len(rows) != 1 || rows[0][0] != "Tiny Chat" || !strings.Contains(rows[0][1], "135M params") {
		t.Fatalf("a new user sees %v; want the catalog", rows)
	}
	test.Type(h.a.DiscoverQuery(), "llama")
	h.a.DiscoverQuery().OnSubmitted("llama")
	h.pumpUntil("results", func() bool { return strings.Contains(h.a.DiscoverHeading(), "3 models") })
	rows = h.a.DiscoverRows()
	if rows[0][0] != "meta/llama-gated-GGUF" || rows[2][0] != "acme/llama-GGUF" {
		t.Errorf("by downloads: %v", rows)
	}
	if !strings.Contains(rows[0][1], "4.0K downloads") || !strings.Contains(rows[0][1], "gated") || strings.Contains(rows[1][1], "gated") {
		t.Errorf("captions: %q, %q", rows[0][1], rows[1][1])
	}
	h.a.DiscoverSort().SetSelected("Most likes")
	h.pumpUntil("results by likes", func() bool { return h.a.DiscoverRows()[0][0] == "acme/llama-GGUF" })
	if q := hub.Searches(); q[len(q)-1].Sort != ui.SortLikes || q[len(q)-1].Library != "gguf" {
		t.Errorf("last query %+v", q[len(q)-1])
	}
	h.a.DiscoverQuery().SetText("")
	h.a.DiscoverQuery().OnSubmitted("")
	if rows := h.a.DiscoverRows(); len(rows) != 1 || rows[0][0] != "Tiny Chat" {
		t.Errorf("an empty search shows %v; want the catalog", rows)
	}
}

func TestDiscoverPaginates(t *testing.T) {
	hub := testHub()
	hub.PageSize = 2
	h := newHubHarness(t, hub, &fake.Downloads{})
	h.a.DiscoverQuery().SetText("GGUF")
	h.a.DiscoverQuery().OnSubmitted("GGUF")
	h.pumpUntil("page 1", func() bool { return len(h.a.DiscoverRows()) == 2 })
	if !h.a.DiscoverMore().Visible() {
		t.Fatal("no More button with a next page")
	}
	test.Tap(h.a.DiscoverMore())
	h.pumpUntil("page 2", func() bool { return len(h.a.DiscoverRows()) == 4 })
	if h.a.DiscoverMore().Visible() {
		t.Error("More shown on the last page")
	}
	if rows := h.a.DiscoverRows(); rows[3][0] != "acme/tiny-GGUF" {
		t.Errorf("pages joined as %v", rows)
	}
}

func TestDiscoverFilesFitAndDownload(t *testing.T) {
	hub := testHub()
	dl := &fake.Downloads{}
	h := newHubHarness(t, hub, dl)
	h.search("acme/llama", 1)
	h.a.DiscoverOpen(0)
	h.pumpUntil("the recommended file's fit", func() bool { return h.a.FitBadge() != "" })
	if h.a.RepoSelected() != 1 || h.a.FitBadge() != "Fits" || !strings.Contains(h.a.FitNumbers(), "context 4096") {
		t.Errorf("selected %d, badge %q, numbers %q", h.a.RepoSelected(), h.a.FitBadge(), h.a.FitNumbers())
	}
	rows := h.a.FileRows()
	if len(rows) != 3 || rows[1][0] != "Q4_K_M · m-Q4_K_M ★ recommended" || rows[1][1] != "6.00 GiB" || rows[1][2] != "fits" || rows[2][2] != "" {
		t.Errorf("file rows %v", rows)
	}
	if !strings.Contains(rows[2][0], "(2 files)") {
		t.Errorf("split model row %q", rows[2][0])
	}
	// A larger context is re-judged: 6 GiB + 32768 × 64 KiB is over 80% of 8 GiB.
	h.a.FitContext().SetSelected("32768")
	h.pumpUntil("the fit at 32768", func() bool { return h.a.FitBadge() == "Tight" })
	h.a.RepoSelect(2)
	h.pumpUntil("the Q8_0 fit", func() bool { return h.a.FitBadge() == "Does not fit" })
	h.a.FitContext().SetSelected("4096") // starts reading Q8_0's fit at 4096…
	h.a.RepoSelect(1)                    // …which must not overwrite Q4_K_M's
	h.pumpIdle()
	if h.a.FitBadge() != "Fits" {
		t.Errorf("Q4_K_M at 4096 shows %q", h.a.FitBadge())
	}
	n := len(hub.Fits())
	h.a.FitContext().SetSelected("32768")
	h.a.RepoSelect(2)
	h.pumpIdle()
	if len(hub.Fits()) != n || h.a.FitBadge() != "Does not fit" {
		t.Errorf("a fit already read was fetched again (%d → %d) or shows %q", n, len(hub.Fits()), h.a.FitBadge())
	}

	test.Tap(h.a.DownloadButton())
	if !strings.Contains(h.a.DownloadStarted(), "m-Q8_0") {
		t.Errorf("after Download: %q", h.a.DownloadStarted())
	}
	if jobs := dl.Jobs(); len(jobs) != 1 || jobs[0].Name != "m-Q8_0" {
		t.Fatalf("jobs %+v", jobs)
	}
	if s := h.a.Screens(); s[2] != "Downloads (1)" {
		t.Errorf("tab titles %v", s)
	}
}

func TestDiscoverCatalogOpensRecommendedFile(t *testing.T) {
	h := newHubHarness(t, testHub(), &fake.Downloads{})
	h.a.DiscoverOpen(0)
	h.pumpUntil("the catalog file's fit", func() bool { return h.a.FitBadge() != "" })
	if h.a.RepoTitle() != "acme/tiny-GGUF" || h.a.RepoSelected() != 0 {
		t.Errorf("opened %q, selected %d; want the catalog's Q2_K", h.a.RepoTitle(), h.a.RepoSelected())
	}
}

func TestDiscoverExplainsGatedModel(t *testing.T) {
	h := newHubHarness(t, testHub(), &fake.Downloads{})
	h.search("gated", 1)
	h.a.DiscoverOpen(0)
	h.pumpUntil("the gated note", h.a.GatedShown)
	if !strings.Contains(h.a.GatedText(), "needs a Hugging Face token") || h.a.GatedLink().URL.String() != "https://hub.example/meta/llama-gated-GGUF" {
		t.Errorf("gated note %q, link %v", h.a.GatedText(), h.a.GatedLink().URL)
	}
	if len(h.a.RepoFiles()) != 0 || !h.a.DownloadButton().Disabled() {
		t.Error("a gated repo offers files to download")
	}
	// Opening another repo hides the note.
	h.search("tiny", 1)
	h.a.DiscoverOpen(0)
	h.pumpUntil("files", func() bool { return len(h.a.RepoFiles()) == 3 })
	if h.a.GatedShown() {
		t.Error("the gated note stayed for a public repo")
	}
}

func TestDownloadsProgressPauseResumeAndLibrary(t *testing.T) {
	dl := &fake.Downloads{Leftover: []ui.DownloadJob{{ID: "old", Name: "left-over Q8_0", Done: 300 << 20, Total: 1 << 30, ETA: -1}}}
	h := newHubHarness(t, testHub(), dl)
	h.pumpUntil("the restored job", func() bool { return len(h.a.DownloadRows()) == 1 })
	r := h.a.DownloadRows()[0]
	if r.Name != "left-over Q8_0 — paused" || r.Pause.Text != "Resume" || !strings.Contains(r.Detail, "300.0 MiB of 1.00 GiB") {
		t.Errorf("restored row %+v", r)
	}
	if s := h.a.Screens(); s[2] != "Downloads" {
		t.Errorf("a paused job counted as active: %v", s)
	}

	f := testHub().Repos[1].Files[0]
	j, _ := dl.Start(f)
	h.lib.Files = append(h.lib.Files, ui.ModelInfo{Path: "/models/m-Q2_K.gguf", Name: "m-Q2_K"})
	dl.Progress(j.ID, 256<<20, 32<<20)
	h.pumpUntil("progress", func() bool { return len(h.a.DownloadRows()) == 2 })
	r = h.a.DownloadRows()[1]
	if r.Value != 0.25 || r.Detail != "256.0 MiB of 1.00 GiB · 32.0 MiB/s · 24s left" || r.Pause.Text != "Pause" {
		t.Errorf("running row %+v", r)
	}
	test.Tap(r.Pause)
	h.pumpIdle()
	if r = h.a.DownloadRows()[1]; r.Pause.Text != "Resume" || !strings.HasSuffix(r.Name, "paused") || !strings.Contains(r.Detail, "256.0 MiB") {
		t.Errorf("after Pause: %+v", r)
	}
	test.Tap(r.Pause)
	h.pumpIdle()
	dl.Fail(j.ID, errors.New("checksum mismatch: the file is not what the hub lists"))
	h.pumpIdle()
	if r = h.a.DownloadRows()[1]; !strings.Contains(r.Err, "checksum") || r.Pause.Text != "Resume" {
		t.Errorf("failed row %+v", r)
	}
	test.Tap(r.Pause)
	dl.Progress(j.ID, 1<<30, 32<<20)
	h.pumpUntil("the model in the library", func() bool { return len(h.a.ListedModels()) == 3 })
	if r = h.a.DownloadRows()[1]; r.Value != 1 || !r.Pause.Disabled() || !strings.Contains(r.Detail, "verified") {
		t.Errorf("done row %+v", r)
	}
	if !strings.Contains(h.a.StatusMessage(), "Downloaded m-Q2_K") {
		t.Errorf("status %q", h.a.StatusMessage())
	}
	test.Tap(h.a.DownloadRows()[0].Cancel)
	h.pumpIdle()
	h.a.ClearFinished()
	if rows := h.a.DownloadRows(); len(rows) != 0 {
		t.Errorf("after clearing: %+v", rows)
	}
	h.cleanup()
	if !dl.Closed() {
		t.Error("closing the app did not pause the downloads")
	}
}

// TestDiscoverOfflineSearch: offline, a search says so in the results'
// heading, keeps the catalog listed, and leaves the status bar (drawn on
// every tab) alone.
func TestDiscoverOfflineSearch(t *testing.T) {
	hub := testHub()
	hub.Err = errors.New("You appear to be offline: huggingface.co cannot be reached.")
	h := newHubHarness(t, hub, &fake.Downloads{})
	h.a.DiscoverQuery().SetText("llama")
	h.a.DiscoverQuery().OnSubmitted("llama")
	h.pumpUntil("the failure", func() bool { return strings.Contains(h.a.DiscoverHeading(), "offline") })
	if rows := h.a.DiscoverRows(); len(rows) != 1 || rows[0][0] != "Tiny Chat" {
		t.Errorf("offline results %v; want the catalog kept", rows)
	}
	if m := h.a.StatusMessage(); m != "" {
		t.Errorf("the status bar shows %q", m)
	}
}
