package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// syncEvery bounds how often a journal is fsynced: every piece reaches the
// kernel at once (a killed process loses nothing written), and the disk at
// most this long after (a power cut loses at most this much).
const syncEvery = time.Second

// Journal records a reply while it streams: a first line with the message
// (JSON, content empty), then one JSON string per piece. Load turns a
// journal left by a crash into an interrupted message.
type Journal struct {
	mu       sync.Mutex
	f        *os.File
	lastSync time.Time
}

// journalHead is a journal's first line: the reply (content empty) and the
// question it answers, so that a crash before the question reached the
// conversation file loses neither.
type journalHead struct {
	Reply    Message  `json:"reply"`
	Question *Message `json:"question,omitempty"`
	Title    string   `json:"title,omitempty"` // for a conversation not saved yet
}

// BeginReply starts the journal of reply m (ID and Parent set) in the
// conversation c. It records the question m answers (c's message with
// m.Parent), so recovery can restore both.
func (d *Dir) BeginReply(c *Conversation, m Message) (*Journal, error) {
	if !validID(c.ID) || m.ID == "" {
		return nil, fmt.Errorf("conversation store: bad journal ids %q/%q", c.ID, m.ID)
	}
	f, err := os.OpenFile(d.file(c.ID, ".stream"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("reply journal: %w", err)
	}
	m.Content = ""
	h := journalHead{Reply: m, Title: c.Title}
	if q := c.Lookup(m.Parent); q != nil {
		qc := *q
		h.Question = &qc
	}
	head, _ := json.Marshal(h)
	j := &Journal{f: f, lastSync: time.Now()}
	if _, err := f.Write(append(head, '\n')); err != nil {
		j.Discard()
		return nil, fmt.Errorf("reply journal: %w", err)
	}
	f.Sync()
	syncDir(d.path)
	return j, nil
}

// Append records one piece of the reply. Safe for concurrent use.
func (j *Journal) Append(piece string) error {
	line, _ := json.Marshal(piece)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("reply journal closed")
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return err
	}
	if time.Since(j.lastSync) >= syncEvery {
		j.lastSync = time.Now()
		return j.f.Sync()
	}
	return nil
}

// Discard closes and removes the journal; call it once the finished reply
// is saved in the conversation file.
func (j *Journal) Discard() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	name := j.f.Name()
	j.f.Close()
	j.f = nil
	return os.Remove(name)
}

// recover folds a journal left beside c into c as an interrupted reply
// (with its question, if c lacks it) and saves c. A journal whose reply c
// already holds is stale and removed.
func (d *Dir) recover(c *Conversation) error {
	path := d.file(c.ID, ".stream")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reply journal: %w", err)
	}
	if h, ok := parseJournal(b); ok && c.Lookup(h.Reply.ID) == nil && restoreQuestion(c, h.Question) {
		m := h.Reply
		if m.Parent == "" || c.Lookup(m.Parent) != nil {
			m.Interrupted = true
			c.Add(m.Parent, m)
			if err := d.Save(c); err != nil {
				return err
			}
		}
	}
	return os.Remove(path)
}

// restoreQuestion adds q to c when c lacks it and its own parent is there;
// it reports whether c holds q afterwards (true when there is none).
func restoreQuestion(c *Conversation, q *Message) bool {
	switch {
	case q == nil || c.Lookup(q.ID) != nil:
		return true
	case q.Parent != "" && c.Lookup(q.Parent) == nil:
		return false
	}
	c.Add(q.Parent, *q)
	return true
}

// recoverOrphans turns journals whose conversation file was never written
// (a crash right after the first question of a new chat) into
// conversations.
func (d *Dir) recoverOrphans() {
	journals, _ := filepath.Glob(filepath.Join(d.path, "*.stream"))
	for _, j := range journals {
		id := strings.TrimSuffix(filepath.Base(j), ".stream")
		if _, err := os.Stat(d.file(id, ".json")); !errors.Is(err, os.ErrNotExist) || !validID(id) {
			continue
		}
		b, err := os.ReadFile(j)
		h, ok := parseJournal(b)
		if err != nil || !ok || h.Question == nil {
			os.Remove(j)
			continue
		}
		c := New()
		c.ID, c.Title, c.Created = id, h.Title, h.Question.Created
		if d.Save(c) == nil {
			d.recover(c)
		}
	}
}

// parseJournal reads a journal, ignoring a torn last line.
func parseJournal(b []byte) (journalHead, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	var h journalHead
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &h) != nil || h.Reply.ID == "" {
		return h, false
	}
	var text strings.Builder
	for sc.Scan() {
		var piece string
		if json.Unmarshal(sc.Bytes(), &piece) != nil {
			break
		}
		text.WriteString(piece)
	}
	h.Reply.Content = text.String()
	return h, true
}
