package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/hub"
	"flowchat/app/hub/hubtest"
	"flowchat/app/library"
	"flowchat/app/store"
	"flowchat/assets"
	"flowchat/ui"
)

// The Discover and Downloads screens, driven through the window as a
// person would (typing, tapping, reading labels), against the fake hub on
// loopback, with the real hub client, download manager and model library
// behind them.

const (
	testRepo  = "flowchat-test/stories260K-GGUF"
	testFile  = "stories260K-Q8_0.gguf"
	gatedRepo = "meta-llama/Llama-Gated-GGUF"
)

// window is the app in a test window. The test goroutine plays the UI
// goroutine: posted updates run only inside pump.
type window struct {
	t   *testing.T
	fh  *hubtest.Hub
	g   *guiHub
	rec *recorder
	lib *library.Library
	// models is the library's data directory.
	models string
	a      *ui.App
	w      fyne.Window
	q      chan func()
}

func newWindow(t *testing.T) *window {
	t.Helper()
	test.NewApp()
	fh := hubtest.New()
	t.Cleanup(fh.Close)
	fh.AddRepo(&hubtest.Repo{ID: testRepo, Tags: []string{"gguf"}, Downloads: 5000, Likes: 12, LastModified: time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC),
		Files: []*hubtest.File{{Path: testFile, Data: assets.DemoModel, LFS: true}, {Path: "README.md", Data: []byte("# stories\n")}}})
	fh.AddRepo(&hubtest.Repo{ID: gatedRepo, Tags: []string{"gguf"}, Gated: true, Downloads: 90000,
		Files: []*hubtest.File{{Path: "llama-Q4_K_M.gguf", Data: assets.DemoModel, LFS: true}}})
	return openWindow(t, fh, t.TempDir())
}

// newWindowOn opens another app on w's hub and model library, as the next
// run of the program would.
func newWindowOn(t *testing.T, w *window) *window { return openWindow(t, w.fh, w.models) }

func openWindow(t *testing.T, fh *hubtest.Hub, models string) *window {
	t.Helper()
	dir := t.TempDir()
	lib := &library.Library{DataDir: models}
	c := hub.NewClient(hub.Options{Endpoint: fh.URL(), NoToken: true})
	g, err := newGUIHub(c, lib, assets.Catalog, hub.ManagerOptions{StallTimeout: 5 * time.Second,
		BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond, ProgressEvery: time.Millisecond,
		FreeDisk: func(string) (uint64, error) { return 1 << 40, nil }})
	if err != nil {
		t.Fatal(err)
	}
	g.free = func() hub.Free { return hub.Free{RAM: 8 << 30} }
	files, err := store.Open(store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &window{t: t, fh: fh, g: g, rec: &recorder{guiHub: g}, lib: lib, models: models, q: make(chan func(), 1024)}
	w.a = ui.NewApp(ui.Deps{Library: &guiLibrary{threads: 1, models: lib}, Storage: files, Hub: g, Downloads: w.rec,
		Post: func(f func()) { w.q <- f }})
	w.w = test.NewWindow(w.a.Content())
	w.w.Resize(fyne.NewSize(1280, 800))
	w.a.Start(w.w)
	t.Cleanup(func() {
		w.pumpFor(50 * time.Millisecond)
		w.a.Close()
		files.Close()
		w.w.Close()
	})
	return w
}

// recorder keeps every job change the screen is told of.
type recorder struct {
	*guiHub
	mu   sync.Mutex
	seen []ui.DownloadJob
}

func (r *recorder) Watch(f func(ui.DownloadJob)) {
	r.guiHub.Watch(func(j ui.DownloadJob) {
		r.mu.Lock()
		r.seen = append(r.seen, j)
		r.mu.Unlock()
		f(j)
	})
}

func (r *recorder) events() []ui.DownloadJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func (w *window) pumpUntil(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case f := <-w.q:
			f()
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			w.t.Fatalf("timed out waiting for %s; the screen shows:\n%s", what, strings.Join(w.labels(w.screen("Discover")), "\n"))
		}
	}
}

func (w *window) pumpFor(d time.Duration) {
	end := time.After(d)
	for {
		select {
		case f := <-w.q:
			f()
		case <-end:
			return
		}
	}
}

// tabs finds the tab container holding a tab called name.
func (w *window) tabs(name string) (*container.AppTabs, *container.TabItem) {
	var found *container.AppTabs
	var item *container.TabItem
	walk(w.a.Content(), true, func(o fyne.CanvasObject) {
		if t, ok := o.(*container.AppTabs); ok && found == nil {
			for _, it := range t.Items {
				if strings.HasPrefix(it.Text, name) {
					found, item = t, it
				}
			}
		}
	})
	if found == nil {
		w.t.Fatalf("no %q tab", name)
	}
	return found, item
}

// screen shows the tab called name and returns its content.
func (w *window) screen(name string) fyne.CanvasObject {
	tabs, item := w.tabs(name)
	tabs.Select(item)
	return item.Content
}

// walk visits o and what is drawn inside it, hidden objects only when
// hidden is set.
func walk(o fyne.CanvasObject, hidden bool, visit func(fyne.CanvasObject)) {
	if o == nil || !hidden && !o.Visible() {
		return
	}
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			walk(c, hidden, visit)
		}
	case *container.AppTabs:
		// Only tabs lookups walk every tab; labels and buttons are read
		// from the tab shown.
		for _, it := range x.Items {
			if hidden || it == x.Selected() {
				walk(it.Content, hidden, visit)
			}
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			walk(c, hidden, visit)
		}
	}
}

// labels are the visible labels' texts under o.
func (w *window) labels(o fyne.CanvasObject) []string {
	var out []string
	walk(o, false, func(c fyne.CanvasObject) {
		if l, ok := c.(*widget.Label); ok && l.Text != "" {
			out = append(out, l.Text)
		}
	})
	return out
}

func (w *window) shows(o fyne.CanvasObject, text string) bool {
	return slices.ContainsFunc(w.labels(o), func(s string) bool { return strings.Contains(s, text) })
}

func find[T fyne.CanvasObject](o fyne.CanvasObject, ok func(T) bool) []T {
	var out []T
	walk(o, false, func(c fyne.CanvasObject) {
		if x, is := c.(T); is && ok(x) {
			out = append(out, x)
		}
	})
	return out
}

func (w *window) button(o fyne.CanvasObject, text string) *widget.Button {
	w.t.Helper()
	b := find(o, func(b *widget.Button) bool { return b.Text == text })
	if len(b) == 0 {
		w.t.Fatalf("no %q button in %v", text, w.labels(o))
	}
	return b[0]
}

// search types text into the Discover screen's search box and submits it.
func (w *window) search(text string) fyne.CanvasObject {
	scr := w.screen("Discover")
	e := find(scr, func(e *widget.Entry) bool { return strings.HasPrefix(e.PlaceHolder, "Search the Hugging Face hub") })
	if len(e) != 1 {
		w.t.Fatalf("%d search boxes", len(e))
	}
	test.Type(e[0], text)
	e[0].TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	w.pumpUntil("results for "+text, func() bool { return w.shows(scr, "models for “"+text+"”") })
	return scr
}

func lists(o fyne.CanvasObject) []*widget.List {
	return find(o, func(*widget.List) bool { return true })
}

func TestGUIDiscoverSearchFitDownloadToLibrary(t *testing.T) {
	w := newWindow(t)
	scr := w.screen("Discover")
	if !w.shows(scr, "Recommended first models") || !w.shows(scr, "SmolLM2 135M Instruct") {
		t.Fatalf("a new user does not see the catalog: %v", w.labels(scr))
	}
	scr = w.search("stories")
	if !w.shows(scr, testRepo) || !w.shows(scr, "5.0K downloads · 12 likes · updated 2024-10-01") {
		t.Fatalf("results: %v", w.labels(scr))
	}
	lists(scr)[0].Select(0)
	w.pumpUntil("the fit badge", func() bool { return w.shows(scr, "needs ") })
	if !w.shows(scr, "Q8_0 · stories260K-Q8_0 ★ recommended") || !w.shows(scr, "Fits") || !w.shows(scr, "of 8.0 GiB free (context 4096") {
		t.Fatalf("file table and fit: %v", w.labels(scr))
	}
	// The fit came from range reads of the header, not a download.
	if n := w.fh.BytesServed(testFile); n >= int64(len(assets.DemoModel)) {
		t.Errorf("reading the header fetched %d bytes of a %d-byte file", n, len(assets.DemoModel))
	}
	before := len(w.fh.Requests())

	// Two dropped connections, then an answer that waits long enough to
	// pause during it.
	w.fh.AddFault(testRepo, testFile, hubtest.Fault{DropAfter: 300_000}, hubtest.Fault{DropAfter: 300_000}, hubtest.Fault{Delay: 2 * time.Second})
	test.Tap(w.button(scr, "Download"))
	dl := w.screen("Downloads")
	w.pumpUntil("600000 bytes", func() bool {
		ev := w.rec.events()
		return len(ev) > 0 && ev[len(ev)-1].Done >= 600_000 && ev[len(ev)-1].State == ui.JobRunning
	})
	time.Sleep(100 * time.Millisecond) // into the delayed answer
	test.Tap(w.button(dl, "Pause"))
	w.pumpUntil("the pause", func() bool { return w.shows(dl, "— paused") })
	if !w.shows(dl, "585.9 KiB of 1.1 MiB · paused") {
		t.Errorf("paused row: %v", w.labels(dl))
	}
	test.Tap(w.button(dl, "Resume"))
	w.pumpUntil("the download to finish", func() bool { return w.shows(dl, "— done") })
	bars := find(dl, func(*widget.ProgressBar) bool { return true })
	if len(bars) != 1 || bars[0].Value != 1 || !w.shows(dl, "verified") {
		t.Errorf("done row: %v, bars %v", w.labels(dl), bars)
	}

	var ranges []string
	for _, r := range w.fh.Requests()[before:] {
		if r.Server == "cdn" && strings.HasSuffix(r.Path, testFile) {
			ranges = append(ranges, r.Range)
		}
	}
	if !slices.Contains(ranges, "bytes=300000-") || !slices.Contains(ranges, "bytes=600000-") {
		t.Errorf("the download did not resume where the connection dropped: ranges %q", ranges)
	}
	w.checkProgress(t)

	// The model is in the library the model panel lists.
	path := filepath.Join(w.lib.DownloadDir(testRepo), testFile)
	info, err := (&guiLibrary{}).Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	model := w.screen("Model")
	w.pumpUntil("the model panel to list it", func() bool { return w.shows(model, info.Name) })
}

// checkProgress: the screen was told of progress as it happened: bytes
// growing, retries after the drops, the pause, the end.
func (w *window) checkProgress(t *testing.T) {
	var states []string
	var last int64
	grew := 0
	for _, e := range w.rec.events() {
		if len(states) == 0 || states[len(states)-1] != e.State {
			states = append(states, e.State)
		}
		if e.Done > last {
			grew++
		}
		if e.State != ui.JobPaused {
			last = max(last, e.Done)
		}
		if e.Total != int64(len(assets.DemoModel)) {
			t.Errorf("event total %d", e.Total)
		}
	}
	for _, s := range []string{ui.JobRunning, ui.JobRetrying, ui.JobPaused, ui.JobVerifying, ui.JobDone} {
		if !slices.Contains(states, s) {
			t.Errorf("states %v lack %s", states, s)
		}
	}
	if grew < 3 || last != int64(len(assets.DemoModel)) {
		t.Errorf("bytes grew %d times, to %d", grew, last)
	}
}

func TestGUIDiscoverExplainsGatedModel(t *testing.T) {
	w := newWindow(t)
	scr := w.search("Gated")
	lists(scr)[0].Select(0)
	w.pumpUntil("the gated note", func() bool { return w.shows(scr, "This model is gated") })
	if !w.shows(scr, "needs a Hugging Face token") || !w.shows(scr, "accept") {
		t.Errorf("gated note: %v", w.labels(scr))
	}
	links := find(scr, func(h *widget.Hyperlink) bool {
		return h.URL != nil && strings.HasSuffix(h.URL.String(), "/"+gatedRepo)
	})
	if len(links) == 0 {
		t.Error("no link to the model page")
	}
	if !w.button(scr, "Download").Disabled() {
		t.Error("Download enabled for a gated model")
	}
}

// A job left half-done by an earlier run comes back paused, and resumes
// from its .part file.
func TestGUIDownloadsRestoresPartial(t *testing.T) {
	w := newWindow(t)
	scr := w.search("stories")
	lists(scr)[0].Select(0)
	w.pumpUntil("the fit", func() bool { return w.shows(scr, "Fits") })
	w.fh.AddFault(testRepo, testFile, hubtest.Fault{DropAfter: 400_000}, hubtest.Fault{Delay: time.Second})
	test.Tap(w.button(scr, "Download"))
	w.pumpUntil("400000 bytes", func() bool {
		ev := w.rec.events()
		return len(ev) > 0 && ev[len(ev)-1].Done >= 400_000
	})
	time.Sleep(50 * time.Millisecond)
	w.g.Close() // the app quits mid-download

	w2 := newWindowOn(t, w)
	dl := w2.screen("Downloads")
	w2.pumpUntil("the restored job", func() bool { return w2.shows(dl, "— paused") })
	test.Tap(w2.button(dl, "Resume"))
	w2.pumpUntil("the download to finish", func() bool { return w2.shows(dl, "— done") })
	var resumed bool
	for _, r := range w.fh.Requests() {
		resumed = resumed || r.Server == "cdn" && r.Range == "bytes=400000-"
	}
	if !resumed {
		t.Error("the restored job did not resume from its .part file")
	}
}

// TestGUIHubOffline: offline, what the Discover and Downloads screens get
// from the hub is the plain "You appear to be offline…" sentence.
func TestGUIHubOffline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := hub.NewClient(hub.Options{Endpoint: "http://" + addr, NoToken: true})
	g, err := newGUIHub(c, &library.Library{DataDir: t.TempDir()}, assets.Catalog, hub.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "You appear to be offline: " + addr + " cannot be reached."
	_, searchErr := g.Search(context.Background(), ui.HubQuery{Text: "qwen"})
	_, filesErr := g.Files(context.Background(), "o/m-GGUF")
	job := downloadJob(hub.Event{JobID: "1", State: hub.Retrying, Err: fmt.Errorf("hub: fetching x: %w", &hub.OfflineError{Host: addr, Err: errors.New("dial tcp: refused")})}, "")
	for i, msg := range []string{fmt.Sprint(searchErr), fmt.Sprint(filesErr), job.Err} {
		if !strings.HasPrefix(msg, want) || strings.Contains(msg, "http") || strings.Contains(msg, "dial") {
			t.Errorf("%d: %q", i, msg)
		}
	}
}
