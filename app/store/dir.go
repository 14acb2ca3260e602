package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Dir holds conversations as one JSON file each (<id>.json) with a journal
// (<id>.stream) beside it while a reply streams.
type Dir struct {
	path string
}

// OpenDir opens (creating) the conversation directory at path.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	return &Dir{path: path}, nil
}

// Path is the directory's location.
func (d *Dir) Path() string { return d.path }

func (d *Dir) file(id, ext string) string { return filepath.Join(d.path, id+ext) }

// validID keeps IDs from naming files outside the directory.
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\.`) && len(id) <= 64
}

// Save writes c atomically.
func (d *Dir) Save(c *Conversation) error {
	if !validID(c.ID) {
		return fmt.Errorf("conversation store: bad id %q", c.ID)
	}
	c.Version = Version
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(d.file(c.ID, ".json"), b); err != nil {
		return fmt.Errorf("saving conversation %q: %w", c.Title, err)
	}
	return nil
}

// Delete removes the conversation with id and its journal.
func (d *Dir) Delete(id string) error {
	if !validID(id) {
		return fmt.Errorf("conversation store: bad id %q", id)
	}
	os.Remove(d.file(id, ".stream"))
	if err := os.Remove(d.file(id, ".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("deleting conversation: %w", err)
	}
	return syncDir(d.path)
}

// Load reads one conversation, recovering a reply its journal holds.
func (d *Dir) Load(id string) (*Conversation, error) {
	b, err := os.ReadFile(d.file(id, ".json"))
	if err != nil {
		return nil, fmt.Errorf("loading conversation: %w", err)
	}
	c, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.file(id, ".json"), err)
	}
	if err := d.recover(c); err != nil {
		return c, err
	}
	return c, nil
}

// LoadAll reads every conversation, newest first. Files that do not parse
// are skipped and reported in the joined error, never deleted. Temporary
// files left by a crash are removed.
func (d *Dir) LoadAll() ([]*Conversation, error) {
	removeTemps(d.path)
	d.recoverOrphans()
	names, err := filepath.Glob(filepath.Join(d.path, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Conversation
	var errs []error
	for _, n := range names {
		c, err := d.Load(strings.TrimSuffix(filepath.Base(n), ".json"))
		if err != nil {
			errs = append(errs, err)
		}
		if c != nil {
			out = append(out, c)
		}
	}
	SortNewestFirst(out)
	return out, errors.Join(errs...)
}

// SortNewestFirst orders conversations by last update, newest first.
func SortNewestFirst(cs []*Conversation) {
	slices.SortStableFunc(cs, func(a, b *Conversation) int { return b.Updated.Compare(a.Updated) })
}
