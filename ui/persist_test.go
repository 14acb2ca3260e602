package ui_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"flowchat/app/store"
)

func TestConversationsNewRenameSearchDelete(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.say("about cats")
	cats := h.a.Conversation()
	h.a.NewConversation()
	h.say("about dogs")
	dogs := h.a.Conversation()
	if got := h.a.ListedTitles(); !reflect.DeepEqual(got, []string{"about dogs", "about cats"}) {
		t.Fatalf("listed %q", got)
	}
	h.a.Rename(cats, "Feline facts")
	test.Type(h.a.SearchEntry(), "CAT")
	if got := h.a.ListedTitles(); !reflect.DeepEqual(got, []string{"Feline facts"}) {
		t.Errorf("search CAT lists %q", got)
	}
	h.a.SearchEntry().SetText("")
	h.a.Open(cats)
	if got := h.texts(); !reflect.DeepEqual(got, []string{"about cats", "ok"}) {
		t.Errorf("reopened cats shows %q", got)
	}
	h.a.Delete(cats)
	if h.a.Conversation() != dogs || !reflect.DeepEqual(h.a.ListedTitles(), []string{"about dogs"}) {
		t.Errorf("after delete: showing %q, listed %q", h.a.Conversation().Title, h.a.ListedTitles())
	}
	// An untouched new chat is not kept.
	h.a.NewConversation()
	h.a.Open(dogs)
	if n := len(h.a.Conversations()); n != 1 {
		t.Errorf("%d conversations after leaving an empty new chat, want 1", n)
	}
	h.files.Flush()
	all, _ := h.files.LoadAll()
	if len(all) != 1 || all[0].Title != "about dogs" {
		t.Errorf("on disk: %d conversations", len(all))
	}
}

// TestRestartRestoresEverything closes the app and opens a new one on the
// same store: conversation, branch shown, system prompt, title, and the
// model's sampling settings come back.
func TestRestartRestoresEverything(t *testing.T) {
	c := numbered()
	h := newHarness(t, c.e)
	test.Type(h.a.SystemEntry(), "Be terse.")
	h.say("q1")
	test.Tap(h.a.Views()[1].RegenButton())
	h.pumpUntil("regenerated", h.idle)
	h.pumpIdle()
	h.a.Slider("temperature").SetValue(0.35)
	want := h.a.Conversation().Clone()

	h = h.restart()
	got := h.a.Conversation()
	if got == nil || got.ID != want.ID || got.System != "Be terse." || !reflect.DeepEqual(got.Path(), want.Path()) {
		t.Fatalf("after restart showing %+v\nwant %+v", got, want)
	}
	if texts := h.texts(); !reflect.DeepEqual(texts, []string{"q1", "reply 2"}) || h.a.Views()[1].Version() != "2/2" {
		t.Errorf("after restart: %q, navigator %q", texts, h.a.Views()[1].Version())
	}
	if h.a.SystemEntry().Text != "Be terse." {
		t.Errorf("system prompt %q", h.a.SystemEntry().Text)
	}
	if v := h.a.Sampling().Temperature; v != 0.35 || math.Abs(h.a.Slider("temperature").Value-0.35) > 1e-9 {
		t.Errorf("temperature after restart %v (slider %v), want 0.35", v, h.a.Slider("temperature").Value)
	}
	if h.a.Settings().LastModel != tinyModel.Path {
		t.Errorf("last model %q", h.a.Settings().LastModel)
	}
}

func TestExportAndImport(t *testing.T) {
	c := numbered()
	h := newHarness(t, c.e)
	h.say("hello")
	test.Tap(h.a.Views()[1].RegenButton())
	h.pumpUntil("regenerated", h.idle)
	h.pumpIdle()
	conv := h.a.Conversation()

	var md bytes.Buffer
	if err := h.a.Export(conv, "md", &md); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); !strings.Contains(s, "## You\n\nhello") || !strings.Contains(s, "reply 2") || strings.Contains(s, "reply 1") {
		t.Errorf("markdown export:\n%s", s)
	}
	var js bytes.Buffer
	if err := h.a.Export(conv, "json", &js); err != nil {
		t.Fatal(err)
	}
	if err := h.a.Import(bytes.NewReader(js.Bytes())); err != nil {
		t.Fatal(err)
	}
	imported := h.a.Conversation()
	if imported == conv || imported.ID == conv.ID || !reflect.DeepEqual(imported.Messages, conv.Messages) {
		t.Fatalf("import did not give a copy with every branch")
	}
	if got := h.texts(); !reflect.DeepEqual(got, []string{"hello", "reply 2"}) {
		t.Errorf("imported conversation shows %q", got)
	}
	if err := h.a.Import(strings.NewReader(`{"version":1,"id":"x","messages":[{"id":"a","role":"alien"}]}`)); err == nil {
		t.Error("importing a bad file succeeded")
	}
	h.files.Flush()
	all, _ := h.files.LoadAll()
	if len(all) != 2 {
		t.Errorf("%d conversations on disk after import, want 2", len(all))
	}
}

// TestInterruptedReplyIsRecovered: a journal left by a crash mid-reply
// shows up as an interrupted reply when the app starts.
func TestInterruptedReplyIsRecovered(t *testing.T) {
	h := newHarness(t, scripted("ok"))
	h.say("tell me")
	conv := h.a.Conversation()
	h.files.Flush()
	j, err := h.files.BeginReply(conv, store.Message{ID: store.NewID(), Parent: conv.Leaf(), Role: store.RoleAssistant, Model: "tiny-test"})
	if err != nil {
		t.Fatal(err)
	}
	j.Append("half a rep")
	// The process dies here: no Discard, no save.
	h = h.restart()
	views := h.a.Views()
	last := views[len(views)-1]
	if last.Markdown() != "half a rep" || last.Footer() != "interrupted" {
		t.Errorf("recovered reply %q with footer %q", last.Markdown(), last.Footer())
	}
}

func TestDeletingWhileReplyingKeepsNothing(t *testing.T) {
	e := scripted("a b c")
	e.Gate = make(chan struct{})
	h := newHarness(t, e)
	test.Type(h.a.Composer(), "doomed")
	h.press("Return")
	e.Gate <- struct{}{}
	h.pumpUntil("the first piece", h.replyIs("a"))
	h.a.Delete(h.a.Conversation())
	h.pumpUntil("the stop", h.idle)
	h.pumpIdle()
	h.files.Flush()
	if all, _ := h.files.LoadAll(); len(all) != 0 {
		t.Errorf("%d conversations on disk after deleting the one replying", len(all))
	}
}
