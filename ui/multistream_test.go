package ui_test

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// TestTwoConversationsStreamAtOnce: a reply streams in one conversation
// while the user opens another and sends there; both requests run at the
// same time, each reply lands in its own conversation, and stopping the
// shown one leaves the other streaming.
func TestTwoConversationsStreamAtOnce(t *testing.T) {
	e := scripted("a long answer here")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	send := func(text string) {
		test.Type(h.a.Composer(), text)
		h.press(fyne.KeyReturn)
		h.pumpIdle()
	}
	send("first question")
	first := h.a.Conversation()
	e.Gate <- struct{}{} // one piece of the first reply
	h.pumpIdle()
	if !h.a.Busy() {
		t.Fatal("the first conversation is not generating")
	}
	h.a.NewConversation()
	if h.a.Busy() {
		t.Fatal("a new conversation shows as busy while another one generates")
	}
	send("second question")
	second := h.a.Conversation()
	h.pumpUntil("a request per conversation in flight", func() bool { return len(e.Calls()) == 2 })
	close(e.Gate) // let both run to the end
	h.pumpUntil("both replies", func() bool {
		return len(first.Messages) == 2 && len(second.Messages) == 2
	})
	for i, c := range [...]struct{ q, conv string }{{"first question", first.ID}, {"second question", second.ID}} {
		conv := first
		if i == 1 {
			conv = second
		}
		if conv.ID != c.conv || conv.Messages[0].Content != c.q || !strings.Contains(conv.Messages[1].Content, "answer") {
			t.Errorf("conversation %d: %+v", i, conv.Messages)
		}
	}
}

// TestStopOneConversationKeepsTheOther: stopping the reply shown does not
// stop the reply streaming in another conversation.
func TestStopOneConversationKeepsTheOther(t *testing.T) {
	e := scripted("a long answer here")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.a.Composer(), "first question")
	h.press(fyne.KeyReturn)
	h.pumpIdle()
	first := h.a.Conversation()
	h.a.NewConversation()
	test.Type(h.a.Composer(), "second question")
	h.press(fyne.KeyReturn)
	h.pumpIdle()
	test.Tap(h.a.SendStop()) // stops the second, shown
	h.pumpUntil("the second reply to stop", h.idle)
	h.a.Open(first)
	if !h.a.Busy() {
		t.Fatal("stopping the second conversation stopped the first")
	}
	close(e.Gate)
	h.pumpUntil("the first reply", h.idle)
	if len(first.Messages) != 2 || first.Messages[1].Interrupted {
		t.Fatalf("first conversation %+v", first.Messages)
	}
}
