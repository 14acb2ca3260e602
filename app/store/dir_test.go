package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func openTemp(t *testing.T) *Dir {
	t.Helper()
	d, err := OpenDir(filepath.Join(t.TempDir(), "conversations"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSaveLoadRoundTrip(t *testing.T) {
	d := openTemp(t)
	c, ids := chat(t)
	c.System = "Be brief."
	c.Policy = PolicyDropOldest
	c.Set(Message{ID: ids[3], Role: RoleAssistant, Content: "a2 ```go\nx\n```", Model: "m", Stats: &Stats{PromptTokens: 5, GenTokens: 7, TTFTMillis: 12, TotalMillis: 80, StopReason: "eog"}})
	c.Add(ids[1], Message{Role: RoleUser, Content: "branch"})
	if err := d.Save(c); err != nil {
		t.Fatal(err)
	}
	all, err := d.LoadAll()
	if err != nil || len(all) != 1 {
		t.Fatalf("LoadAll: %d conversations, %v", len(all), err)
	}
	if !reflect.DeepEqual(all[0], c) {
		t.Errorf("round trip changed the conversation\n got %+v\nwant %+v", all[0], c)
	}
	if err := d.Delete(c.ID); err != nil {
		t.Fatal(err)
	}
	if all, _ := d.LoadAll(); len(all) != 0 {
		t.Errorf("%d conversations after Delete", len(all))
	}
}

// TestCrashMidWriteKeepsPreviousFile interrupts a save half way through its
// data, as a crash would (the temporary file stays, the rename never
// happens), and checks that the previous version loads intact.
func TestCrashMidWriteKeepsPreviousFile(t *testing.T) {
	d := openTemp(t)
	c, _ := chat(t)
	if err := d.Save(c); err != nil {
		t.Fatal(err)
	}
	before := c.Clone()
	c.Add(c.Leaf(), Message{Role: RoleUser, Content: strings.Repeat("new text ", 1000)})

	crash(t, func() { d.Save(c) })
	if temps, _ := filepath.Glob(filepath.Join(d.Path(), tmpPrefix+"*")); len(temps) != 1 {
		t.Fatalf("want the crash's temporary file left behind, found %v", temps)
	}
	all, err := d.LoadAll()
	if err != nil || len(all) != 1 || !reflect.DeepEqual(all[0], before) {
		t.Fatalf("after the crash: %v, %d conversations; want the previous version", err, len(all))
	}
	if temps, _ := filepath.Glob(filepath.Join(d.Path(), tmpPrefix+"*")); len(temps) != 0 {
		t.Errorf("LoadAll left temporary files %v", temps)
	}
}

// crash runs save with a writer that stops half way and unwinds the
// goroutine without returning, like a process dying mid-write.
func crash(t *testing.T, save func()) {
	t.Helper()
	old := writeData
	t.Cleanup(func() { writeData = old })
	type died struct{}
	writeData = func(f io.Writer, data []byte) error {
		f.Write(data[:len(data)/2])
		panic(died{})
	}
	defer func() {
		if r := recover(); r != (died{}) {
			t.Fatalf("save did not reach the write: %v", r)
		}
	}()
	save()
}

func TestFailedWriteReportsAndKeepsFile(t *testing.T) {
	d := openTemp(t)
	c, _ := chat(t)
	d.Save(c)
	old := writeData
	t.Cleanup(func() { writeData = old })
	disk := errors.New("disk full")
	writeData = func(io.Writer, []byte) error { return disk }
	c.Title = "renamed"
	if err := d.Save(c); !errors.Is(err, disk) {
		t.Fatalf("Save = %v, want disk full", err)
	}
	writeData = old
	got, err := d.Load(c.ID)
	if err != nil || got.Title != "q1" {
		t.Errorf("after a failed save: %v, title %q", err, got.Title)
	}
}

func TestJournalRecoversInterruptedReply(t *testing.T) {
	d := openTemp(t)
	c, ids := chat(t)
	d.Save(c)
	reply := Message{ID: NewID(), Parent: ids[3], Role: RoleAssistant, Model: "m"}
	j, err := d.BeginReply(c, reply)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"Hello", ",\n", " wor"} {
		j.Append(p)
	}
	// A torn last line, as when the process dies inside write().
	f, _ := os.OpenFile(filepath.Join(d.Path(), c.ID+".stream"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`"ld and mo`)
	f.Close()

	got, err := d.Load(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	m := got.Lookup(reply.ID)
	if m == nil || m.Content != "Hello,\n wor" || !m.Interrupted || got.Leaf() != reply.ID {
		t.Fatalf("recovered reply %+v, leaf %q", m, got.Leaf())
	}
	if _, err := os.Stat(filepath.Join(d.Path(), c.ID+".stream")); !os.IsNotExist(err) {
		t.Errorf("journal kept after recovery: %v", err)
	}
	again, _ := d.Load(c.ID)
	if len(again.Messages) != len(got.Messages) {
		t.Errorf("recovery is not idempotent: %d then %d messages", len(got.Messages), len(again.Messages))
	}
}

func TestStaleJournalIsDropped(t *testing.T) {
	d := openTemp(t)
	c, ids := chat(t)
	j, _ := d.BeginReply(c, Message{ID: ids[3], Parent: ids[2], Role: RoleAssistant})
	j.Append("a2")
	d.Save(c) // the finished reply reached the file; the app died before Discard
	got, err := d.Load(c.ID)
	if err != nil || len(got.Messages) != 4 {
		t.Fatalf("%v, %d messages; want the 4 saved", err, len(got.Messages))
	}
}

func TestBrokenFileIsReportedNotDeleted(t *testing.T) {
	d := openTemp(t)
	c, _ := chat(t)
	d.Save(c)
	bad := filepath.Join(d.Path(), "0123456789abcdef.json")
	os.WriteFile(bad, []byte(`{"version":1,"id":"0123456789abcdef","messages":[{"id":"a","parent":"b","role":"user"}]}`), 0o644)
	all, err := d.LoadAll()
	if len(all) != 1 || !errors.Is(err, ErrFormat) {
		t.Fatalf("LoadAll = %d conversations, %v; want 1 and ErrFormat", len(all), err)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Errorf("broken file removed: %v", err)
	}
}

// TestJournalRestoresUnsavedQuestion: the app died after journalling a
// reply but before the question reached the conversation file.
func TestJournalRestoresUnsavedQuestion(t *testing.T) {
	d := openTemp(t)
	c, ids := chat(t)
	d.Save(c)
	q := c.Add(ids[3], Message{Role: RoleUser, Content: "q3, never saved"})
	j, _ := d.BeginReply(c, Message{ID: NewID(), Parent: q.ID, Role: RoleAssistant})
	j.Append("a3 so far")
	got, err := d.Load(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p := contents(got.Path()); len(p) != 6 || p[4] != "q3, never saved" || p[5] != "a3 so far" {
		t.Errorf("recovered path %q", p)
	}
}

// TestOrphanJournalBecomesConversation: a crash right after the first
// question of a new chat, before its file was ever written.
func TestOrphanJournalBecomesConversation(t *testing.T) {
	d := openTemp(t)
	c := New()
	q := c.Add("", Message{Role: RoleUser, Content: "first question"})
	j, _ := d.BeginReply(c, Message{ID: NewID(), Parent: q.ID, Role: RoleAssistant})
	j.Append("first ")
	j.Append("answer")
	all, err := d.LoadAll()
	if err != nil || len(all) != 1 {
		t.Fatalf("LoadAll = %d conversations, %v", len(all), err)
	}
	got := all[0]
	if got.ID != c.ID || got.Title != "first question" || !reflect.DeepEqual(contents(got.Path()), []string{"first question", "first answer"}) {
		t.Errorf("recovered %+v", got)
	}
	if again, _ := d.LoadAll(); len(again) != 1 || len(again[0].Messages) != 2 {
		t.Error("recovery is not idempotent")
	}
}
