package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// BeginReply starts the journal of reply m (ID and Parent set) in the
// conversation with id convID.
func (d *Dir) BeginReply(convID string, m Message) (*Journal, error) {
	if !validID(convID) || m.ID == "" {
		return nil, fmt.Errorf("conversation store: bad journal ids %q/%q", convID, m.ID)
	}
	f, err := os.OpenFile(d.file(convID, ".stream"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("reply journal: %w", err)
	}
	m.Content = ""
	head, _ := json.Marshal(m)
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

// recover folds a journal left beside c into c as an interrupted reply and
// saves c. A journal whose message c already holds is stale and removed.
func (d *Dir) recover(c *Conversation) error {
	path := d.file(c.ID, ".stream")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reply journal: %w", err)
	}
	m, ok := parseJournal(b)
	if ok && c.Lookup(m.ID) == nil && (m.Parent == "" || c.Lookup(m.Parent) != nil) {
		m.Interrupted = true
		c.Add(m.Parent, m)
		if err := d.Save(c); err != nil {
			return err
		}
	}
	return os.Remove(path)
}

// parseJournal reads a journal, ignoring a torn last line.
func parseJournal(b []byte) (Message, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	var m Message
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == "" {
		return m, false
	}
	var text strings.Builder
	for sc.Scan() {
		var piece string
		if json.Unmarshal(sc.Bytes(), &piece) != nil {
			break
		}
		text.WriteString(piece)
	}
	m.Content = text.String()
	return m, true
}
