package ui_test

import (
	"reflect"
	"strings"
	"testing"

	"flowchat/app/presets"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// With the fake's 3 tokens per message, a 24-token window holds two short
// turns and a question ("one two three" is 6 tokens, "fine" 4), less the
// 3 kept free for the reply.
func smallContext(reply string) *fake.Engine {
	e := scripted(reply)
	e.Context = 24
	return e
}

func TestContextFullStopsAndSaysWhy(t *testing.T) {
	h := newHarness(t, smallContext("fine"))
	h.say(strings.Repeat("word ", 40))
	if calls := h.eng.Calls(); len(calls) != 0 {
		t.Fatalf("%d requests for a prompt larger than the context", len(calls))
	}
	if err := h.a.Views()[1].ErrorText(); !strings.Contains(err, "context") || !strings.Contains(err, "Leave out the oldest turns") {
		t.Errorf("reply error %q", err)
	}
	// the conversation counts more tokens than the window: it is full,
	// never over 100%
	if !strings.Contains(h.a.ContextText(), "full: sending stops") || !strings.HasPrefix(h.a.ContextText(), "context 24 / 24 tokens") {
		t.Errorf("context line %q", h.a.ContextText())
	}
}

// TestMaxTokensFitsContext: on a small context the default reply length
// leaves room for a conversation (a quarter of the window), in the panel
// and in the request; on a large one it stays the default.
func TestMaxTokensFitsContext(t *testing.T) {
	for _, c := range []struct{ ctx, want int }{{512, 128}, {4096, presets.DefaultMaxTokens}} {
		e := scripted("fine")
		e.Context = c.ctx
		h := newHarness(t, e)
		if got := h.a.Sampling().MaxTokens; got != c.want {
			t.Errorf("context %d: Max tokens %d, want %d", c.ctx, got, c.want)
		}
		h.say("hello")
		calls := h.eng.Calls()
		if len(calls) != 1 || calls[0].Sampling.MaxTokens != c.want || calls[0].Sampling.MaxTokens >= c.ctx {
			t.Errorf("context %d: requests %+v", c.ctx, calls)
		}
	}
}

func TestDropOldestLeavesOutAndMarksTurns(t *testing.T) {
	h := newHarness(t, smallContext("fine"))
	h.a.PolicySelect().SetSelected("Leave out the oldest turns")
	h.say("one two three")
	h.say("four five six")
	h.say("seven eight nine")
	calls := h.eng.Calls()
	want := []ui.Message{{Role: ui.RoleUser, Content: "four five six"}, {Role: ui.RoleAssistant, Content: "fine"}, {Role: ui.RoleUser, Content: "seven eight nine"}}
	if got := calls[len(calls)-1].Messages; !reflect.DeepEqual(got, want) {
		t.Fatalf("third request %+v; want the first turn left out", got)
	}
	views := h.a.Views()
	for i, v := range views {
		if left := i < 2; (v.Note() != "") != left {
			t.Errorf("message %d note %q, left out %v", i, v.Note(), left)
		}
	}
	if !strings.Contains(h.a.Banner(), "left out") {
		t.Errorf("banner %q", h.a.Banner())
	}
}

func TestReplyCutByContextIsVisible(t *testing.T) {
	e := scripted("and so it went on and on")
	e.Stop = ui.StopContext
	h := newHarness(t, e)
	h.say("tell me a long story")
	if f := h.a.Views()[1].Footer(); !strings.Contains(f, "cut off: context window full") {
		t.Errorf("footer %q", f)
	}
	if !strings.Contains(h.a.Banner(), "context window filled up") {
		t.Errorf("banner %q", h.a.Banner())
	}
}

// TestContextShiftPolicy: the third policy asks the engine to shift the
// context while replying, leaves out the oldest turns of a prompt that
// does not fit, and says in the banner when text left the context.
func TestContextShiftPolicy(t *testing.T) {
	e := smallContext("fine")
	e.Shifted = 12
	h := newHarness(t, e)
	h.a.PolicySelect().SetSelected("Shift: keep the start, drop the oldest text")
	h.say("one two three")
	h.say("four five six")
	h.say("seven eight nine")
	calls := h.eng.Calls()
	for i, c := range calls {
		if !c.ContextShift {
			t.Fatalf("request %d without ContextShift", i)
		}
	}
	if got := calls[len(calls)-1].Messages; len(got) != 3 || got[0].Content != "four five six" {
		t.Fatalf("third request %+v; want the first turn left out", got)
	}
	if !strings.Contains(h.a.Banner(), "context shift") || !strings.Contains(h.a.Banner(), "12") {
		t.Errorf("banner %q", h.a.Banner())
	}
}
