package store

import (
	"reflect"
	"strings"
	"testing"
)

func contents(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

// chat builds q1 → a1 → q2 → a2 on the branch shown.
func chat(t *testing.T) (*Conversation, []string) {
	t.Helper()
	c := New()
	var ids []string
	parent := ""
	for _, m := range []Message{{Role: RoleUser, Content: "q1"}, {Role: RoleAssistant, Content: "a1"}, {Role: RoleUser, Content: "q2"}, {Role: RoleAssistant, Content: "a2"}} {
		parent = c.Add(parent, m).ID
		ids = append(ids, parent)
	}
	return c, ids
}

func TestPathFollowsSelection(t *testing.T) {
	c, ids := chat(t)
	if got := contents(c.Path()); !reflect.DeepEqual(got, []string{"q1", "a1", "q2", "a2"}) {
		t.Fatalf("path %v", got)
	}
	// Edit q2: a sibling under a1 becomes the branch shown.
	q2b := c.Add(ids[1], Message{Role: RoleUser, Content: "q2 edited"})
	c.Add(q2b.ID, Message{Role: RoleAssistant, Content: "a2 again"})
	if got := contents(c.Path()); !reflect.DeepEqual(got, []string{"q1", "a1", "q2 edited", "a2 again"}) {
		t.Errorf("after edit, path %v", got)
	}
	sibs, i := c.Siblings(q2b.ID)
	if !reflect.DeepEqual(sibs, []string{ids[2], q2b.ID}) || i != 1 {
		t.Errorf("siblings %v index %d", sibs, i)
	}
	// Back to the first version: its reply comes back with it.
	c.Select(ids[2])
	if got := contents(c.Path()); !reflect.DeepEqual(got, []string{"q1", "a1", "q2", "a2"}) {
		t.Errorf("after selecting the first version, path %v", got)
	}
	if c.Leaf() != ids[3] {
		t.Errorf("leaf %q, want %q", c.Leaf(), ids[3])
	}
}

func TestTitleFromFirstUserMessage(t *testing.T) {
	c, _ := chat(t)
	if c.Title != "q1" {
		t.Errorf("title %q", c.Title)
	}
	long := TitleFrom("  Explain the difference between a mutex and a semaphore in detail please\nsecond line")
	if !strings.HasSuffix(long, "…") || len([]rune(long)) > 49 || strings.Contains(long, "second") {
		t.Errorf("TitleFrom long = %q", long)
	}
}

func TestMatchesSearchesEveryBranch(t *testing.T) {
	c, ids := chat(t)
	c.Add(ids[0], Message{Role: RoleAssistant, Content: "An Unusual Word"})
	c.Select(ids[1])
	for q, want := range map[string]bool{"unusual": true, "Q2": true, "absent": false, "": true} {
		if got := c.Matches(q); got != want {
			t.Errorf("Matches(%q) = %v", q, got)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	c, ids := chat(t)
	c.Set(Message{ID: ids[3], Role: RoleAssistant, Content: "a2", Stats: &Stats{GenTokens: 3}})
	d := c.Clone()
	d.Messages[3].Stats.GenTokens = 99
	d.Selected[""] = "x"
	d.Messages[0].Content = "changed"
	if c.Messages[3].Stats.GenTokens != 3 || c.Selected[""] == "x" || c.Messages[0].Content != "q1" {
		t.Error("Clone shares memory")
	}
}
