package ui_test

import (
	"reflect"
	"testing"

	"fyne.io/fyne/v2/test"

	"flowchat/ui"
	"flowchat/ui/fake"
)

// numbered replies "reply 1", "reply 2", … in call order.
func numbered() *counting {
	c := &counting{}
	c.e = scripted("")
	c.e.Reply = func([]ui.Message) string { c.n++; return "reply " + string(rune('0'+c.n)) }
	return c
}

type counting struct {
	e *fake.Engine
	n int
}

func TestRegenerateKeepsEarlierReplyNavigable(t *testing.T) {
	c := numbered()
	h := newHarness(t, c.e)
	h.say("question")
	test.Tap(h.a.Views()[1].RegenButton())
	h.pumpUntil("the second reply", h.idle)
	h.pumpIdle()

	if got := h.texts(); !reflect.DeepEqual(got, []string{"question", "reply 2"}) {
		t.Fatalf("after regenerate: %q", got)
	}
	calls := h.eng.Calls()
	if len(calls) != 2 || !reflect.DeepEqual(calls[0].Messages, calls[1].Messages) {
		t.Errorf("regenerate sent %+v, want the same request twice", calls)
	}
	reply := h.a.Views()[1]
	if reply.Version() != "2/2" || !reply.Next().Disabled() || reply.Prev().Disabled() {
		t.Errorf("navigator %q (prev disabled %v, next disabled %v), want 2/2 with ‹ enabled", reply.Version(), reply.Prev().Disabled(), reply.Next().Disabled())
	}
	test.Tap(reply.Prev())
	h.pumpIdle()
	if got := h.texts(); !reflect.DeepEqual(got, []string{"question", "reply 1"}) || h.a.Views()[1].Version() != "1/2" {
		t.Errorf("after ‹: %q, %q", got, h.a.Views()[1].Version())
	}
}

func TestEditResendsAndKeepsEarlierBranch(t *testing.T) {
	c := numbered()
	h := newHarness(t, c.e)
	h.say("first")
	h.say("second")
	first := h.a.Views()[0]
	test.Tap(first.EditButton())
	if first.Editor().Hidden || first.Editor().Text != "first" {
		t.Fatalf("editor hidden %v with %q", first.Editor().Hidden, first.Editor().Text)
	}
	first.Editor().SetText("first, edited")
	first.FinishEdit()
	h.pumpUntil("the reply to the edit", h.idle)
	h.pumpIdle()

	if got := h.texts(); !reflect.DeepEqual(got, []string{"first, edited", "reply 3"}) {
		t.Fatalf("after edit: %q", got)
	}
	last := h.eng.Calls()[2].Messages
	if !reflect.DeepEqual(last, []ui.Message{{Role: ui.RoleUser, Content: "first, edited"}}) {
		t.Errorf("edit sent %+v; want only the edited message", last)
	}
	if v := h.a.Views()[0].Version(); v != "2/2" {
		t.Errorf("edited message navigator %q", v)
	}
	// The earlier branch comes back whole, with its later turns.
	test.Tap(h.a.Views()[0].Prev())
	h.pumpIdle()
	if got := h.texts(); !reflect.DeepEqual(got, []string{"first", "reply 1", "second", "reply 2"}) {
		t.Errorf("earlier branch: %q", got)
	}
}

func TestBranchActionsDisabledWhileGenerating(t *testing.T) {
	e := scripted("a b c")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	e.Gate = nil
	h.say("one")
	e.Gate = make(chan struct{})
	test.Type(h.a.Composer(), "two")
	h.press("Return")
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("a"))
	if !h.a.Views()[1].RegenButton().Disabled() || !h.a.Views()[0].EditButton().Disabled() {
		t.Error("edit and regenerate stay enabled while a reply streams")
	}
	close(e.Gate)
	h.pumpUntil("the end", h.idle)
	h.pumpIdle()
	if h.a.Views()[1].RegenButton().Disabled() {
		t.Error("regenerate still disabled after the reply")
	}
}
