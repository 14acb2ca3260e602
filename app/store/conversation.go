// Package store keeps flowchat's conversations and settings on disk, under
// the user's XDG data and config directories. Every file is replaced
// atomically (temporary file, fsync, rename, fsync of the directory), and a
// reply being streamed is journalled piece by piece, so a crash at any
// moment loses at most the piece being written.
//
// A Conversation is a tree: editing a user message or regenerating a reply
// adds a sibling instead of overwriting, and Selected remembers which
// branch is shown, so every earlier version stays reachable.
package store

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// Roles, as chat templates name them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Context policies: what happens when a conversation outgrows the model's
// context window.
const (
	PolicyStop       = "stop"        // refuse to send, and say so
	PolicyDropOldest = "drop-oldest" // leave the oldest turns out, and mark them
	// PolicyShift keeps generating past a full context: the first tokens
	// stay and the oldest text after them leaves the context (StreamingLLM,
	// llama.cpp's context shift); prompts too long to send leave out their
	// oldest turns, as under PolicyDropOldest.
	PolicyShift = "shift"
)

// Version is the format of conversation files this package writes.
const Version = 1

// Stats describe how one reply was generated.
type Stats struct {
	PromptTokens int    `json:"prompt_tokens"`
	CachedTokens int    `json:"cached_tokens,omitempty"`
	GenTokens    int    `json:"gen_tokens"`
	TTFTMillis   int64  `json:"ttft_ms"`  // call to first token: prompt processing
	TotalMillis  int64  `json:"total_ms"` // call to last token
	StopReason   string `json:"stop_reason,omitempty"`
	// Speculative decoding: tokens drafted and kept.
	Drafted       int `json:"drafted,omitempty"`
	DraftAccepted int `json:"draft_accepted,omitempty"`
}

// Message is one turn. Parent is the ID of the turn it answers or follows;
// "" for a first turn.
type Message struct {
	ID      string    `json:"id"`
	Parent  string    `json:"parent,omitempty"`
	Role    string    `json:"role"`
	Content string    `json:"content"` // markdown
	Created time.Time `json:"created"`
	Model   string    `json:"model,omitempty"` // who wrote an assistant turn
	// Engine is where Model ran: "local", or "remote:" and the endpoint's
	// name.
	Engine string `json:"engine,omitempty"`
	Stats  *Stats `json:"stats,omitempty"`
	Error  string `json:"error,omitempty"`
	// Interrupted marks a reply cut short: stopped, or recovered from the
	// journal after a crash.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Conversation is a tree of messages with a system prompt.
type Conversation struct {
	Version  int       `json:"version"`
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	System   string    `json:"system,omitempty"` // per-conversation system prompt
	Policy   string    `json:"context_policy,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Messages []Message `json:"messages"` // every branch, in creation order
	// Engine and Model are the engine chosen for this conversation
	// ("remote:NAME" for a saved endpoint; "" for the local one) and the
	// remote model, so reopening it reconnects.
	Engine string `json:"engine,omitempty"`
	Model  string `json:"model,omitempty"`
	// Selected maps a parent ID ("" for the first turn) to the child shown.
	Selected map[string]string `json:"selected,omitempty"`
}

// NewID returns a fresh random identifier (16 hex digits).
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// New returns an empty conversation created now.
func New() *Conversation {
	now := time.Now().UTC()
	return &Conversation{Version: Version, ID: NewID(), Created: now, Updated: now, Selected: map[string]string{}}
}

// Lookup returns the message with id, or nil.
func (c *Conversation) Lookup(id string) *Message {
	for i := range c.Messages {
		if c.Messages[i].ID == id {
			return &c.Messages[i]
		}
	}
	return nil
}

// Children returns the IDs of parent's children, oldest first.
func (c *Conversation) Children(parent string) []string {
	var ids []string
	for _, m := range c.Messages {
		if m.Parent == parent {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// selectedChild is the child of parent that is shown: the selected one, or
// the newest when none is selected.
func (c *Conversation) selectedChild(parent string) string {
	kids := c.Children(parent)
	if len(kids) == 0 {
		return ""
	}
	if id, ok := c.Selected[parent]; ok && slices.Contains(kids, id) {
		return id
	}
	return kids[len(kids)-1]
}

// Path returns the branch shown, first turn first (copies).
func (c *Conversation) Path() []Message {
	var out []Message
	seen := map[string]bool{}
	for id := c.selectedChild(""); id != "" && !seen[id]; id = c.selectedChild(id) {
		seen[id] = true
		out = append(out, *c.Lookup(id))
	}
	return out
}

// Leaf returns the ID of the last message shown, "" when empty.
func (c *Conversation) Leaf() string {
	p := c.Path()
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1].ID
}

// Add appends m as a child of parent, selects it, and returns it with its
// ID and time filled in.
func (c *Conversation) Add(parent string, m Message) Message {
	if m.ID == "" {
		m.ID = NewID()
	}
	if m.Created.IsZero() {
		m.Created = time.Now().UTC()
	}
	m.Parent = parent
	c.Messages = append(c.Messages, m)
	c.selectAt(parent, m.ID)
	c.Updated = m.Created
	if c.Title == "" && m.Role == RoleUser {
		c.Title = TitleFrom(m.Content)
	}
	return m
}

func (c *Conversation) selectAt(parent, id string) {
	if c.Selected == nil {
		c.Selected = map[string]string{}
	}
	c.Selected[parent] = id
}

// Siblings returns the IDs of the messages sharing id's parent (id among
// them) and id's index, for the ‹ i/n › navigator.
func (c *Conversation) Siblings(id string) ([]string, int) {
	m := c.Lookup(id)
	if m == nil {
		return nil, -1
	}
	kids := c.Children(m.Parent)
	return kids, slices.Index(kids, id)
}

// Select shows the branch through id.
func (c *Conversation) Select(id string) {
	if m := c.Lookup(id); m != nil {
		c.selectAt(m.Parent, id)
	}
}

// Set replaces the message with m.ID (parent kept) and touches Updated.
func (c *Conversation) Set(m Message) {
	if p := c.Lookup(m.ID); p != nil {
		m.Parent = p.Parent
		*p = m
		c.Updated = time.Now().UTC()
	}
}

// Clone returns a deep copy, safe to hand to another goroutine.
func (c *Conversation) Clone() *Conversation {
	d := *c
	d.Messages = make([]Message, len(c.Messages))
	for i, m := range c.Messages {
		if m.Stats != nil {
			s := *m.Stats
			m.Stats = &s
		}
		d.Messages[i] = m
	}
	d.Selected = make(map[string]string, len(c.Selected))
	for k, v := range c.Selected {
		d.Selected[k] = v
	}
	return &d
}

// Matches reports whether query (case-insensitive) occurs in the title,
// system prompt or any message of any branch.
func (c *Conversation) Matches(query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return true
	}
	has := func(s string) bool { return strings.Contains(strings.ToLower(s), q) }
	if has(c.Title) || has(c.System) {
		return true
	}
	return slices.ContainsFunc(c.Messages, func(m Message) bool { return has(m.Content) })
}

// TitleFrom makes a title from a first message: its first line, at most
// 48 characters, cut at a word.
func TitleFrom(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	const max = 48
	r := []rune(line)
	if len(r) <= max {
		return line
	}
	cut := string(r[:max])
	if i := strings.LastIndex(cut, " "); i > max/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
