package ui_test

import (
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"flowchat/app/store"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// Model files the fake library lists.
var (
	tinyModel = ui.ModelInfo{Path: "/models/tiny.gguf", Name: "tiny-test", Arch: "llama", Params: 15e6, Quant: "Q8_0", FileSize: 16 << 20, ContextTrain: 2048, Layers: 6}
	bigModel  = ui.ModelInfo{Path: "/models/big.gguf", Name: "big-test", Arch: "qwen2", Params: 1.5e9, Quant: "Q4_K", FileSize: 900 << 20, ContextTrain: 32768, Layers: 28}
)

// harness drives the app in a test window. The test goroutine plays the
// UI goroutine: updates posted by background work queue up in q and run
// only inside pump, so every widget is touched from one goroutine, as in
// the app.
type harness struct {
	t     *testing.T
	lib   *fake.Library
	eng   *fake.Engine // what loading tinyModel gives
	files *store.Files
	loc   store.Locations
	a     *ui.App
	w     fyne.Window
	q     chan func()
	done  bool
}

// newHarness starts the app on a fresh store with eng as the tiny model's
// engine, and waits for it to load.
func newHarness(t *testing.T, eng *fake.Engine) *harness {
	t.Helper()
	dir := t.TempDir()
	loc := store.Locations{Conversations: filepath.Join(dir, "data", "conversations"), Settings: filepath.Join(dir, "config", "settings.json")}
	return startHarness(t, eng, loc)
}

func startHarness(t *testing.T, eng *fake.Engine, loc store.Locations) *harness {
	t.Helper()
	return startHarnessWith(t, eng, loc, nil)
}

// startHarnessWith starts the app with deps edited by extra (the optional
// screens' services).
func startHarnessWith(t *testing.T, eng *fake.Engine, loc store.Locations, extra func(*ui.Deps)) *harness {
	t.Helper()
	test.NewApp()
	h := &harness{t: t, eng: eng, loc: loc, q: make(chan func(), 256)}
	h.lib = &fake.Library{Files: []ui.ModelInfo{tinyModel, bigModel}, Engine: h.engineFor}
	var err error
	if h.files, err = store.Open(loc, func(err error) { t.Errorf("background write: %v", err) }); err != nil {
		t.Fatal(err)
	}
	d := ui.Deps{Library: h.lib, Storage: h.files, Post: func(f func()) { h.q <- f }, DefaultModel: tinyModel.Path}
	if extra != nil {
		extra(&d)
	}
	h.a = ui.NewApp(d)
	h.w = test.NewWindow(h.a.Content())
	h.w.Resize(fyne.NewSize(1200, 800))
	h.a.Start(h.w)
	h.pumpUntil("the model to load", func() bool { return !h.a.Loading() })
	h.pumpIdle()
	t.Cleanup(h.cleanup)
	return h
}

func (h *harness) engineFor(info ui.ModelInfo, o ui.LoadOptions) *fake.Engine {
	if info.Path == tinyModel.Path && h.eng != nil {
		return h.eng
	}
	return &fake.Engine{Model: info.Name, Context: o.Context}
}

// restart closes the app and opens a new one on the same store.
func (h *harness) restart() *harness {
	h.t.Helper()
	h.cleanup()
	return startHarness(h.t, h.eng, h.loc)
}

// cleanup stops a reply left running by a failed test, so its goroutine
// ends, and flushes the store.
func (h *harness) cleanup() {
	if h.done {
		return
	}
	h.done = true
	if h.a.Busy() {
		test.Tap(h.a.SendStop())
		h.pumpUntil("stop at cleanup", h.idle)
	}
	h.pumpIdle()
	h.a.Close()
	h.files.Close()
	h.w.Close()
}

func (h *harness) pumpUntil(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case f := <-h.q:
			f()
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// pumpIdle runs posted updates until none arrives for a short while.
func (h *harness) pumpIdle() {
	for {
		select {
		case f := <-h.q:
			f()
		case <-time.After(30 * time.Millisecond):
			return
		}
	}
}

func (h *harness) idle() bool { return !h.a.Busy() }

func (h *harness) press(name fyne.KeyName) {
	h.a.Composer().TypedKey(&fyne.KeyEvent{Name: name})
}

// say sends text and waits for the reply to finish.
func (h *harness) say(text string) {
	h.t.Helper()
	test.Type(h.a.Composer(), text)
	h.press(fyne.KeyReturn)
	h.pumpUntil("the reply to "+text, h.idle)
	h.pumpIdle()
}

// texts are the bodies shown, oldest first.
func (h *harness) texts() []string {
	var out []string
	for _, v := range h.a.Views() {
		out = append(out, v.Markdown())
	}
	return out
}

// replyText is the visible text of the newest message.
func (h *harness) replyText() string {
	views := h.a.Views()
	if len(views) == 0 {
		return ""
	}
	return views[len(views)-1].Body().String()
}

func (h *harness) replyIs(text string) func() bool {
	return func() bool { return h.replyText() == text }
}

func scripted(reply string) *fake.Engine {
	return &fake.Engine{Model: "tiny-test", Reply: func([]ui.Message) string { return reply }}
}
