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
)

func TestSendStreamsMarkdownReply(t *testing.T) {
	h := newHarness(t, scripted("**Hello** there, `x := 1`"))
	test.Type(h.a.Composer(), "hi")
	test.Tap(h.a.SendStop())
	if h.a.SendStop().Text != "Stop" {
		t.Errorf("button while generating = %q, want Stop", h.a.SendStop().Text)
	}
	h.pumpUntil("the reply to finish", h.idle)

	calls := h.eng.Calls()
	if len(calls) != 1 || !reflect.DeepEqual(calls[0].Messages, []ui.Message{{Role: ui.RoleUser, Content: "hi"}}) {
		t.Errorf("engine saw %+v", calls)
	}
	views := h.a.Views()
	if len(views) != 2 || views[0].Body().String() != "hi" || h.replyText() != "Hello there, x := 1" {
		t.Fatalf("conversation shows %d messages, reply %q", len(views), h.replyText())
	}
	if !hasStyledText(views[1].Body(), "Hello", func(s widget.RichTextStyle) bool { return s.TextStyle.Bold }) {
		t.Errorf("reply markdown not rendered: **Hello** is not a bold segment in %#v", views[1].Body().Segments)
	}
	if h.a.Composer().Text != "" || h.a.SendStop().Text != "Send" {
		t.Errorf("after reply: composer %q, button %q; want empty, Send", h.a.Composer().Text, h.a.SendStop().Text)
	}
	if f := views[1].Footer(); !strings.HasPrefix(f, "4 prompt + 13 generated tokens") {
		t.Errorf("reply footer = %q", f)
	}
	if got := h.a.Conversation().Title; got != "hi" {
		t.Errorf("conversation title %q, want the first message", got)
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
	test.Type(h.a.Composer(), "line one")
	h.a.Composer().KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	h.press(fyne.KeyReturn)
	h.a.Composer().KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(h.a.Composer(), "line two")
	if got := h.a.Composer().Text; got != "line one\nline two" || len(h.eng.Calls()) != 0 {
		t.Fatalf("after Shift+Enter: composer %q, %d requests; want two lines, none sent", got, len(h.eng.Calls()))
	}
	h.press(fyne.KeyReturn)
	h.pumpUntil("the reply", h.idle)
	calls := h.eng.Calls()
	if len(calls) != 1 || calls[0].Messages[0].Content != "line one\nline two" {
		t.Errorf("Enter sent %+v", calls)
	}
}

func TestReplyRendersWhileStreaming(t *testing.T) {
	e := scripted("one two three")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.a.Composer(), "count")
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
	test.Type(h.a.Composer(), "go")
	h.press(fyne.KeyReturn)
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("alpha"))

	test.Tap(h.a.SendStop())
	h.pumpUntil("the stop to land", h.idle)
	select {
	case e.Gate <- struct{}{}:
		t.Fatal("the engine still streams after Stop")
	case <-time.After(50 * time.Millisecond):
	}
	if f := h.a.Views()[1].Footer(); !strings.HasSuffix(f, "· stopped") || h.replyText() != "alpha" {
		t.Errorf("stopped reply shows %q with footer %q", h.replyText(), f)
	}
	if h.a.SpeedText() != "stopped" {
		t.Errorf("status speed %q", h.a.SpeedText())
	}

	// The partial reply is part of the conversation sent next.
	e.Gate = nil
	h.say("more")
	want := []ui.Message{{Role: ui.RoleUser, Content: "go"}, {Role: ui.RoleAssistant, Content: "alpha"}, {Role: ui.RoleUser, Content: "more"}}
	if calls := h.eng.Calls(); len(calls) != 2 || !reflect.DeepEqual(calls[1].Messages, want) {
		t.Errorf("second request = %+v, want %v", calls, want)
	}
}

func TestEscapeStops(t *testing.T) {
	e := scripted("a b c")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.a.Composer(), "go")
	h.press(fyne.KeyReturn)
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("a"))
	h.press(fyne.KeyEscape)
	h.pumpUntil("the stop", h.idle)
	if f := h.a.Views()[1].Footer(); !strings.HasSuffix(f, "· stopped") {
		t.Errorf("footer after Escape %q", f)
	}
}

func TestEnterWhileGeneratingKeepsText(t *testing.T) {
	e := scripted("a b")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.a.Composer(), "first")
	h.press(fyne.KeyReturn)
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("a"))
	test.Type(h.a.Composer(), "queued")
	h.press(fyne.KeyReturn)
	if n, text := len(h.eng.Calls()), h.a.Composer().Text; n != 1 || text != "queued" {
		t.Errorf("Enter while busy: %d requests, composer %q; want 1, queued", n, text)
	}
	close(e.Gate)
}

func TestEngineErrorIsShown(t *testing.T) {
	e := scripted("partial")
	e.Err = errors.New("model exploded")
	h := newHarness(t, e)
	h.say("hi")
	if got := h.a.Views()[1].ErrorText(); !strings.Contains(got, "model exploded") {
		t.Errorf("error line = %q, want the engine's error", got)
	}
	if h.a.SpeedText() != "error" || h.replyText() != "partial" {
		t.Errorf("status %q, reply %q; want error, partial", h.a.SpeedText(), h.replyText())
	}
}

func TestEmptyInputSendsNothing(t *testing.T) {
	h := newHarness(t, scripted("x"))
	test.Type(h.a.Composer(), "  \n ")
	test.Tap(h.a.SendStop())
	if len(h.eng.Calls()) != 0 || h.a.Busy() {
		t.Errorf("blank input started a request")
	}
}

func TestSystemPromptIsSentFirst(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	test.Type(h.a.SystemEntry(), "Answer in French.")
	h.say("hello")
	calls := h.eng.Calls()
	want := []ui.Message{{Role: ui.RoleSystem, Content: "Answer in French."}, {Role: ui.RoleUser, Content: "hello"}}
	if len(calls) != 1 || !reflect.DeepEqual(calls[0].Messages, want) {
		t.Errorf("request %+v, want %v", calls, want)
	}
}

func TestCodeBlockIsHighlightedAndCopied(t *testing.T) {
	h := newHarness(t, scripted("Here:\n\n```go\nfunc main() { return }\n```\n"))
	h.say("code please")
	reply := h.a.Views()[1]
	codes := reply.Codes()
	if len(codes) != 1 || codes[0].Lang != "go" || codes[0].Code != "func main() { return }" {
		t.Fatalf("code blocks %+v", codes)
	}
	var keyword bool
	for _, s := range codes[0].Spans() {
		ts := s.(*widget.TextSegment)
		if ts.Text == "func" && strings.HasPrefix(string(ts.Style.ColorName), "flowchat.code.Keyword") && ts.Style.TextStyle.Monospace {
			keyword = true
		}
	}
	if !keyword {
		t.Errorf("“func” is not a monospace keyword segment: %#v", codes[0].Spans())
	}
	reply.SetFooter("5 prompt + 17 generated tokens") // timings vary from run to run
	test.AssertObjectRendersToMarkup(t, "message_with_code.xml", sized(reply, 560))
	codes[0].CopyCode()
	if got := fyne.CurrentApp().Clipboard().Content(); got != "func main() { return }" {
		t.Errorf("code copy put %q on the clipboard", got)
	}
	test.Tap(reply.CopyButton())
	if got := fyne.CurrentApp().Clipboard().Content(); !strings.HasPrefix(got, "Here:\n\n```go") {
		t.Errorf("message copy put %q on the clipboard", got)
	}
}

// TestCodeWidgetSurvivesStreaming checks that re-rendering a streaming
// reply updates the code block in place instead of rebuilding it.
func TestCodeWidgetSurvivesStreaming(t *testing.T) {
	e := scripted("```py\nx = 1\ny = 2\n```")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.a.Composer(), "go")
	h.press(fyne.KeyReturn)
	var first *ui.CodeSegment
	for h.a.Busy() {
		select {
		case e.Gate <- struct{}{}:
		case f := <-h.q:
			f()
		}
		if v := h.a.Views(); len(v) == 2 && len(v[1].Codes()) == 1 && first == nil {
			first = v[1].Codes()[0]
		}
	}
	h.pumpIdle()
	// The first code segment seen was updated in place through the end.
	if first == nil || first.Code != "x = 1\ny = 2" {
		t.Fatalf("streamed code segment %+v", first)
	}
}
