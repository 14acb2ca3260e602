package main

import (
	"context"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/quantlab"
	"flowchat/app/store"
	"flowchat/ui"
)

// TestGUILabOnDemoModel runs the Lab's adapter on the bundled stories260K
// (F32) over two chunks of the bundled text: one row per level in order,
// every chart drawn at the adapter's size, a second run and Last read from
// the cache, and side-by-side rows whose spans rebuild quantlab's marked
// text.
func TestGUILabOnDemoModel(t *testing.T) {
	_, demo := demoLibrary(t)
	l := newGUILab(t.TempDir(), 1)
	req := ui.LabRequest{Model: demo, Levels: []string{"F32", "Q8", "Q3H", "Q2"}, Ctx: 64, MaxChunks: 2}
	var stages []string
	rep, err := l.Run(context.Background(), req, func(p ui.LabProgress) {
		if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
			stages = append(stages, p.Stage)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cached || len(rep.Rows) != 4 || !slices.Contains(stages, "base") || !slices.Contains(stages, "eval") {
		t.Fatalf("cached %v, %d rows, stages %v", rep.Cached, len(rep.Rows), stages)
	}
	for i, lv := range req.Levels {
		if rep.Rows[i][0] != lv {
			t.Errorf("row %d is %q, want %s", i, rep.Rows[i][0], lv)
		}
	}
	if len(rep.Charts) < 4 {
		t.Fatalf("%d charts", len(rep.Charts))
	}
	for _, c := range rep.Charts {
		if b := c.Image.Bounds(); b.Dx() != 720 || b.Dy() != 450 || c.Title == "" {
			t.Errorf("chart %q is %v", c.Title, b)
		}
	}
	start := time.Now()
	again, err := l.Run(context.Background(), req, func(ui.LabProgress) { t.Error("progress from a cached run") })
	if err != nil || !again.Cached || !slices.EqualFunc(again.Rows, rep.Rows, slices.Equal) {
		t.Fatalf("second run: cached %v, %v", again.Cached, err)
	}
	t.Logf("cached report with charts in %v", time.Since(start))
	last, ok := l.Last()
	if !ok || !last.Cached || last.Request.Model != demo || !slices.Equal(last.Request.Levels, req.Levels) || last.Request.Ctx != 64 {
		t.Errorf("Last() = %+v, %v", last.Request, ok)
	}

	side, err := l.Side(context.Background(), ui.SideRequest{Model: demo, Levels: req.Levels, Prompt: "Once upon a time", Tokens: 24}, func(ui.LabProgress) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(side.Rows) != 4 || side.Rows[0].Level != quantlab.BaseLevel || slices.ContainsFunc(side.Rows[0].Spans, func(s ui.SideSpan) bool { return s.Changed }) {
		t.Fatalf("side rows %+v", side.Rows)
	}
	res, err := quantlab.Generate(context.Background(), quantlab.SideRequest{Model: demo, Levels: req.Levels, Prompt: "Once upon a time", Tokens: 24, Threads: 1},
		quantlab.Options{CacheDir: l.cacheDir})
	if err != nil || !res.Cached {
		t.Fatalf("the adapter's generation is not the cached one: %v", err)
	}
	for i, row := range side.Rows {
		var b strings.Builder
		for _, s := range row.Spans {
			if s.Changed {
				b.WriteString("[" + s.Text + "]")
			} else {
				b.WriteString(s.Text)
			}
		}
		if want := res.Side.Rows[i].Marked(quantlab.Brackets); b.String() != want {
			t.Errorf("row %s spans read %q, want %q", row.Level, b.String(), want)
		}
	}
}

func TestSideSpans(t *testing.T) {
	c := &quantlab.Continuation{Pieces: []string{" a", " little", " girl", " ran", "."}, Changed: []bool{false, true, true, false, true}}
	got := sideSpans(c)
	want := []ui.SideSpan{{Text: " a "}, {Text: "little girl", Changed: true}, {Text: " ran"}, {Text: ".", Changed: true}}
	if !slices.Equal(got, want) {
		t.Errorf("spans %+v\nwant %+v", got, want)
	}
}

// TestGUILabWindow drives the Lab screen on the demo model: Run, wait for
// the charts and table, then reopen a new window on the same cache and
// find the report there at once.
func TestGUILabWindow(t *testing.T) {
	lib, _ := demoLibrary(t)
	cache := t.TempDir()
	open := func() (*window, fyne.CanvasObject) {
		test.NewApp()
		dir := t.TempDir()
		files, err := store.Open(store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("HF_HUB_CACHE", t.TempDir())
		w := &window{t: t, q: make(chan func(), 1024)}
		w.a = ui.NewApp(ui.Deps{Library: lib, Storage: files, Lab: newGUILab(cache, 1), Post: func(f func()) { w.q <- f }})
		w.w = test.NewWindow(w.a.Content())
		w.w.Resize(fyne.NewSize(1280, 800))
		w.a.Start(w.w)
		t.Cleanup(func() { w.a.Close(); files.Close(); w.w.Close() })
		return w, w.screen("Quantization Lab")
	}
	w, scr := open()
	w.pumpUntil("the demo model offered", func() bool {
		s := find(scr, func(s *widget.Select) bool { return strings.Contains(s.Selected, "(F32") })
		return len(s) == 1
	})
	levels := find(scr, func(*widget.CheckGroup) bool { return true })[0]
	levels.SetSelected([]string{levelLabel("F32"), levelLabel("Q8"), levelLabel("Q2")})
	find(scr, func(s *widget.Select) bool { return s.Selected == "8" })[0].SetSelected("4")
	find(scr, func(s *widget.Select) bool { return s.Selected == "128" })[0].SetSelected("64")
	find(scr, func(c *widget.Check) bool { return strings.HasPrefix(c.Text, "Time generation") })[0].SetChecked(false)
	test.Tap(w.button(scr, "Run the Lab"))
	w.pumpUntil("the report", func() bool { return w.shows(scr, "3 levels compared (computed now)") })
	imgs := find(scr, func(*canvas.Image) bool { return true })
	if len(imgs) < 4 {
		t.Errorf("%d charts shown", len(imgs))
	}

	w2, scr2 := open()
	w2.pumpUntil("the cached report", func() bool { return w2.shows(scr2, "from the cache") })
}

// darkTheme forces the dark variant: the test app's settings report none.
type darkTheme struct{ fyne.Theme }

func (d darkTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return d.Theme.Color(n, theme.VariantDark)
}

// TestGUILabScreenshot takes the Lab's screenshots for docs/ with real
// results: every level on the demo model, then side-by-side generation.
// It runs only when FLOWCHAT_SHOT_DIR names where to write them:
//
//	FLOWCHAT_SHOT_DIR=$PWD/docs go test -tags x11 ./app -run TestGUILabScreenshot
func TestGUILabScreenshot(t *testing.T) {
	out := os.Getenv("FLOWCHAT_SHOT_DIR")
	if out == "" {
		t.Skip("FLOWCHAT_SHOT_DIR not set")
	}
	lib, _ := demoLibrary(t)
	a := test.NewApp()
	a.Settings().SetTheme(darkTheme{ui.Theme()})
	dir := t.TempDir()
	files, err := store.Open(store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	w := &window{t: t, q: make(chan func(), 1024)}
	w.a = ui.NewApp(ui.Deps{Library: lib, Storage: files, Lab: newGUILab(t.TempDir(), 1), Post: func(f func()) { w.q <- f }})
	w.w = test.NewWindow(w.a.Content())
	w.w.Resize(fyne.NewSize(1280, 800))
	w.a.Start(w.w)
	defer func() { w.a.Close(); files.Close(); w.w.Close() }()
	scr := w.screen("Quantization Lab")
	w.pumpUntil("the demo model", func() bool {
		return len(find(scr, func(s *widget.Select) bool { return strings.Contains(s.Selected, "(F32") })) == 1
	})
	var all []string
	for _, c := range newGUILab("", 1).Levels() {
		all = append(all, c.Label)
	}
	find(scr, func(*widget.CheckGroup) bool { return true })[0].SetSelected(all)
	test.Tap(w.button(scr, "Run the Lab"))
	w.pumpUntil("the report", func() bool { return w.shows(scr, "levels compared") })
	shoot(t, w, filepath.Join(out, "screenshot-lab.png"))

	tabs, side := w.tabs("Side by side")
	tabs.Select(side)
	test.Tap(w.button(scr, "Generate"))
	w.pumpUntil("the rows", func() bool { return w.shows(scr, "rows; red words differ") })
	shoot(t, w, filepath.Join(out, "screenshot-lab-side.png"))
}

func shoot(t *testing.T, w *window, path string) {
	t.Helper()
	w.pumpFor(100 * time.Millisecond)
	w.a.Content().Refresh()
	size := w.w.Canvas().Size()
	w.w.Resize(size.AddWidthHeight(1, 1))
	w.w.Resize(size)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, w.w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
}
