package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrFormat is wrapped by every error about a conversation file or import
// that does not hold a valid conversation.
var ErrFormat = errors.New("not a flowchat conversation")

// decode parses and validates a conversation file.
func decode(b []byte) (*Conversation, error) {
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// validate checks what the rest of the program relies on: known roles,
// unique IDs, and parents that come before their children (so the tree has
// no cycles).
func (c *Conversation) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
	}
	if c.Version > Version {
		return bad("version %d is newer than this flowchat understands (%d)", c.Version, Version)
	}
	if !validID(c.ID) {
		return bad("bad id %q", c.ID)
	}
	seen := map[string]bool{}
	for i, m := range c.Messages {
		switch {
		case m.ID == "" || seen[m.ID]:
			return bad("message %d: missing or repeated id %q", i, m.ID)
		case m.Parent != "" && !seen[m.Parent]:
			return bad("message %d: parent %q does not come before it", i, m.Parent)
		case m.Role != RoleUser && m.Role != RoleAssistant && m.Role != RoleSystem:
			return bad("message %d: unknown role %q", i, m.Role)
		}
		seen[m.ID] = true
	}
	if c.Selected == nil {
		c.Selected = map[string]string{}
	}
	if c.Policy != "" && c.Policy != PolicyStop && c.Policy != PolicyDropOldest && c.Policy != PolicyShift {
		c.Policy = ""
	}
	return nil
}

// ExportJSON returns the whole conversation, every branch included, in the
// format ImportJSON reads.
func ExportJSON(c *Conversation) ([]byte, error) {
	c = c.Clone()
	c.Version = Version
	return json.MarshalIndent(c, "", "  ")
}

// openAIChat is the other shape ImportJSON accepts: an OpenAI-style request
// body, or a bare list of messages.
type openAIChat struct {
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// ImportJSON reads a conversation exported by ExportJSON, or an OpenAI-style
// {"messages": [...]} (a leading system message becomes the system prompt).
// The result has a new ID, so importing twice keeps both copies.
func ImportJSON(b []byte) (*Conversation, error) {
	var probe struct {
		Version *int `json:"version"`
	}
	trimmed := strings.TrimSpace(string(b))
	if strings.HasPrefix(trimmed, "[") {
		b = []byte(`{"messages":` + trimmed + `}`)
	} else if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if probe.Version == nil {
		return importOpenAI(b)
	}
	c, err := decode(b)
	if err != nil {
		return nil, err
	}
	c.ID = NewID()
	return c, nil
}

func importOpenAI(b []byte) (*Conversation, error) {
	var oc openAIChat
	if err := json.Unmarshal(b, &oc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if len(oc.Messages) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrFormat)
	}
	c := New()
	parent := ""
	for i, m := range oc.Messages {
		switch {
		case m.Role == RoleSystem && i == 0:
			c.System = m.Content
		case m.Role == RoleUser || m.Role == RoleAssistant:
			parent = c.Add(parent, Message{Role: m.Role, Content: m.Content}).ID
		default:
			return nil, fmt.Errorf("%w: message %d: unsupported role %q", ErrFormat, i, m.Role)
		}
	}
	return c, nil
}

// ExportMarkdown renders the branch shown as a Markdown document: the
// title, the system prompt, then each turn under a heading.
func ExportMarkdown(c *Conversation) string {
	var b strings.Builder
	title := c.Title
	if title == "" {
		title = "Conversation"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "*Exported from flowchat on %s.*\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	if c.System != "" {
		fmt.Fprintf(&b, "**System prompt:**\n\n%s\n\n", quote(c.System))
	}
	for _, m := range c.Path() {
		b.WriteString("## " + speaker(m) + "\n\n")
		b.WriteString(strings.TrimRight(m.Content, "\n") + "\n\n")
		if m.Interrupted {
			b.WriteString("*(reply interrupted)*\n\n")
		}
	}
	return b.String()
}

func speaker(m Message) string {
	switch {
	case m.Role == RoleUser:
		return "You"
	case m.Model != "" && strings.HasPrefix(m.Engine, "remote:"):
		return "Assistant (" + m.Model + " on " + strings.TrimPrefix(m.Engine, "remote:") + ")"
	case m.Model != "":
		return "Assistant (" + m.Model + ")"
	}
	return "Assistant"
}

func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ")
}
