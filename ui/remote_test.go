package ui_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"flowchat/app/remote/remotetest"
	"flowchat/app/remote/remoteui"
	"flowchat/app/store"
	"flowchat/ui"
)

// TestRemoteEndpointChat drives the Remote tab against a vLLM stand-in on
// loopback: add an endpoint with a key, pick its model, chat, stop a
// reply in the middle, export the conversation, and come back to it
// after loading a local model.
func TestRemoteEndpointChat(t *testing.T) {
	s := remotetest.New(remotetest.VLLM, "test-model")
	defer s.Close()
	s.APIKey = "sk-gui-secret"
	s.Reply = []string{"Hi", " there"}
	dir := t.TempDir()
	loc := store.Locations{Conversations: filepath.Join(dir, "data", "conversations"), Settings: filepath.Join(dir, "config", "settings.json")}
	keys := store.Keys{Dir: filepath.Join(dir, "config", "keys")}
	h := startHarnessWith(t, scripted("local reply"), loc, func(d *ui.Deps) { d.Remotes = remoteui.New(keys) })
	a := h.a

	test.Type(a.RemoteName(), "lab")
	test.Type(a.RemoteURL(), s.URL+"/v1")
	test.Type(a.RemoteKey(), "sk-gui-secret")
	test.Tap(a.RemoteSave())
	h.pumpUntil("the model list", func() bool { return a.RemoteModels().Selected == "test-model" })
	if a.RemoteKey().Text != "" {
		t.Error("the key stays in the form after saving")
	}
	h.files.Flush()
	if b, _ := os.ReadFile(loc.Settings); bytes.Contains(b, []byte("sk-gui-secret")) || !bytes.Contains(b, []byte(`"name": "lab"`)) {
		t.Errorf("settings file:\n%s", b)
	}
	settings := a.Settings()
	e, _ := settings.Endpoint("lab")
	if st, err := os.Stat(filepath.Join(keys.Dir, e.ID+".key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}

	test.Tap(a.RemoteUse())
	h.pumpUntil("the remote engine", func() bool { return !a.Loading() && a.Engine() != nil && a.Engine().Info().Name == "test-model" })
	if !a.Slider("typical_p").Disabled() || !strings.Contains(a.UnsupportedNote("typical_p"), "vLLM has no locally typical sampling") {
		t.Errorf("typical_p: disabled %v, note %q", a.Slider("typical_p").Disabled(), a.UnsupportedNote("typical_p"))
	}
	if a.Slider("top_k").Disabled() || a.UnsupportedNote("top_k") != "" || !a.TextEntry("samplers").Disabled() {
		t.Errorf("top_k disabled %v note %q; samplers disabled %v", a.Slider("top_k").Disabled(), a.UnsupportedNote("top_k"), a.TextEntry("samplers").Disabled())
	}

	h.say("hello")
	conv := a.Conversation()
	reply := conv.Lookup(conv.Selected[conv.Messages[0].ID])
	if reply == nil || reply.Content != "Hi there" || reply.Model != "test-model" || reply.Engine != "remote:lab" {
		t.Fatalf("reply %+v", reply)
	}
	if r := s.Requests(); r[len(r)-1].Auth != "Bearer sk-gui-secret" {
		t.Errorf("Authorization %q", r[len(r)-1].Auth)
	}
	if conv.Engine != "remote:lab" || conv.Model != "test-model" {
		t.Errorf("conversation engine %q model %q", conv.Engine, conv.Model)
	}

	// Stop in the middle of a stream: the partial reply is kept, marked.
	s.Reply, s.Delay = strings.SplitAfter(strings.Repeat("word ", 200), " "), 5*time.Millisecond
	test.Type(a.Composer(), "go on")
	h.press(fyne.KeyReturn)
	h.pumpUntil("part of the reply", func() bool { return strings.Count(h.replyText(), "word") >= 3 })
	test.Tap(a.SendStop())
	h.pumpUntil("the stop", h.idle)
	h.pumpIdle()
	last := conv.Messages[len(conv.Messages)-1]
	if !last.Interrupted || !strings.HasPrefix(last.Content, "word word word") || strings.Count(last.Content, "word") >= 200 {
		t.Errorf("stopped reply: interrupted %v, %d words", last.Interrupted, strings.Count(last.Content, "word"))
	}

	var md bytes.Buffer
	if err := a.Export(conv, "md", &md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Assistant (test-model on lab)", "Hi there", "*(reply interrupted)*"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("export lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "sk-gui") {
		t.Error("the key is in the export")
	}

	// Another conversation on the local model; coming back reconnects.
	a.NewConversation()
	a.LoadModel(tinyModel.Path, ui.LoadOptions{})
	h.pumpUntil("the local model", func() bool { return !a.Loading() && a.Engine().Info().Name == "tiny-test" })
	if a.Slider("typical_p").Disabled() {
		t.Error("typical_p stays disabled on the local engine")
	}
	a.Open(conv)
	h.pumpUntil("the conversation's remote engine", func() bool { return !a.Loading() && a.Engine().Info().Name == "test-model" })
}
