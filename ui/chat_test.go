package ui_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"flowchat/ui"
	"flowchat/ui/fake"
)

// harness drives a chat screen in a test window. The test goroutine plays
// the UI goroutine: updates that the screen posts from the generating
// goroutine queue up in q and run only inside pumpUntil, so every widget is
// touched from one goroutine, as in the app.
type harness struct {
	t *testing.T
	e *fake.Engine
	c *ui.ChatScreen
	w fyne.Window
	q chan func()
}

func newHarness(t *testing.T, e *fake.Engine) *harness {
	t.Helper()
	test.NewApp()
	h := &harness{t: t, e: e, q: make(chan func(), 64)}
	h.c = ui.NewChatScreenWithPost(e, func(f func()) { h.q <- f })
	h.w = test.NewWindow(h.c.Content())
	h.w.Resize(fyne.NewSize(600, 500))
	t.Cleanup(h.cleanup)
	return h
}

// cleanup stops a reply left running by a failed test, so its goroutine ends.
func (h *harness) cleanup() {
	if h.c.Busy() {
		test.Tap(h.c.SendStop())
		h.pumpUntil("stop at cleanup", h.idle)
	}
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

func (h *harness) idle() bool { return !h.c.Busy() }

func (h *harness) press(name fyne.KeyName) {
	h.c.Composer().TypedKey(&fyne.KeyEvent{Name: name})
}

// replyText is the visible text of the newest message.
func (h *harness) replyText() string {
	views := h.c.Views()
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

func TestSendStreamsMarkdownReply(t *testing.T) {
	h := newHarness(t, scripted("**Hello** there, `x := 1`"))
	test.Type(h.c.Composer(), "hi")
	test.Tap(h.c.SendStop())
	if h.c.SendStop().Text != "Stop" {
		t.Errorf("button while generating = %q, want Stop", h.c.SendStop().Text)
	}
	h.pumpUntil("the reply to finish", h.idle)

	want := [][]ui.Message{{{Role: ui.RoleUser, Content: "hi"}}}
	if got := h.e.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("engine saw %v, want %v", got, want)
	}
	views := h.c.Views()
	if len(views) != 2 || views[0].Body().String() != "hi" || h.replyText() != "Hello there, x := 1" {
		t.Fatalf("conversation shows %d messages, reply %q", len(views), h.replyText())
	}
	if !hasStyledText(views[1].Body(), "Hello", func(s widget.RichTextStyle) bool { return s.TextStyle.Bold }) {
		t.Errorf("reply markdown not rendered: **Hello** is not a bold segment in %#v", views[1].Body().Segments)
	}
	if h.c.Composer().Text != "" || h.c.SendStop().Text != "Send" {
		t.Errorf("after reply: composer %q, button %q; want empty, Send", h.c.Composer().Text, h.c.SendStop().Text)
	}
	if f := views[1].Footer(); !strings.HasPrefix(f, "1 prompt + 13 generated tokens") {
		t.Errorf("reply footer = %q", f)
	}
}

func hasStyledText(rt *widget.RichText, text string, style func(widget.RichTextStyle) bool) bool {
	for _, seg := range rt.Segments {
		if ts, ok := seg.(*widget.TextSegment); ok && ts.Text == text && style(ts.Style) {
			return true
		}
	}
	return false
}

func TestEnterSendsShiftEnterBreaksLine(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	test.Type(h.c.Composer(), "line one")
	h.c.Composer().KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	h.press(fyne.KeyReturn)
	h.c.Composer().KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(h.c.Composer(), "line two")
	if got := h.c.Composer().Text; got != "line one\nline two" || len(h.e.Calls()) != 0 {
		t.Fatalf("after Shift+Enter: composer %q, %d requests; want two lines, none sent", got, len(h.e.Calls()))
	}
	h.press(fyne.KeyReturn)
	h.pumpUntil("the reply", h.idle)
	calls := h.e.Calls()
	if len(calls) != 1 || calls[0][0].Content != "line one\nline two" {
		t.Errorf("Enter sent %v", calls)
	}
}

func TestReplyRendersWhileStreaming(t *testing.T) {
	e := scripted("one two three")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.c.Composer(), "count")
	h.press(fyne.KeyEnter)
	for _, want := range []string{"one", "one two", "one two three"} {
		e.Gate <- struct{}{}
		h.pumpUntil("reply "+want, h.replyIs(want))
	}
	h.pumpUntil("the reply to finish", h.idle)
}

func TestStopCancelsAndKeepsPartialReply(t *testing.T) {
	e := scripted("alpha beta gamma")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.c.Composer(), "go")
	h.press(fyne.KeyReturn)
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("alpha"))

	test.Tap(h.c.SendStop())
	h.pumpUntil("the stop to land", h.idle)
	select {
	case e.Gate <- struct{}{}:
		t.Fatal("the engine still streams after Stop")
	case <-time.After(50 * time.Millisecond):
	}
	if f := h.c.Views()[1].Footer(); !strings.HasSuffix(f, "· stopped") || h.replyText() != "alpha" {
		t.Errorf("stopped reply shows %q with footer %q", h.replyText(), f)
	}

	// The partial reply is part of the conversation sent next.
	e.Gate = nil
	test.Type(h.c.Composer(), "more")
	h.press(fyne.KeyReturn)
	h.pumpUntil("the second reply", h.idle)
	want := []ui.Message{{Role: ui.RoleUser, Content: "go"}, {Role: ui.RoleAssistant, Content: "alpha"}, {Role: ui.RoleUser, Content: "more"}}
	if calls := h.e.Calls(); len(calls) != 2 || !reflect.DeepEqual(calls[1], want) {
		t.Errorf("second request = %v, want %v", calls, want)
	}
}

func TestEnterWhileGeneratingKeepsText(t *testing.T) {
	e := scripted("a b")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.c.Composer(), "first")
	h.press(fyne.KeyReturn)
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("a"))
	test.Type(h.c.Composer(), "queued")
	h.press(fyne.KeyReturn)
	if n, text := len(h.e.Calls()), h.c.Composer().Text; n != 1 || text != "queued" {
		t.Errorf("Enter while busy: %d requests, composer %q; want 1, queued", n, text)
	}
}

func TestEngineErrorIsShown(t *testing.T) {
	e := scripted("partial")
	e.Err = errors.New("model exploded")
	h := newHarness(t, e)
	test.Type(h.c.Composer(), "hi")
	test.Tap(h.c.SendStop())
	h.pumpUntil("the failed reply", h.idle)
	if got := h.c.Views()[1].ErrorText(); !strings.Contains(got, "model exploded") {
		t.Errorf("error line = %q, want the engine's error", got)
	}
	if h.c.SpeedText() != "error" || h.replyText() != "partial" {
		t.Errorf("status %q, reply %q; want error, partial", h.c.SpeedText(), h.replyText())
	}
}

func TestEmptyInputSendsNothing(t *testing.T) {
	h := newHarness(t, scripted("x"))
	test.Type(h.c.Composer(), "  \n ")
	test.Tap(h.c.SendStop())
	if len(h.e.Calls()) != 0 || h.c.Busy() {
		t.Errorf("blank input started a request")
	}
}

func TestMainWindow(t *testing.T) {
	a := test.NewApp()
	w := ui.NewMainWindow(a, scripted(""))
	defer w.Close()
	if !strings.Contains(w.Title(), "tiny-test") {
		t.Errorf("title %q does not name the model", w.Title())
	}
	if _, ok := w.Canvas().Focused().(fyne.Focusable); !ok {
		t.Errorf("composer not focused on open")
	}
}
