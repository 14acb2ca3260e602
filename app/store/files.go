package store

import "path/filepath"

// Files is the whole store as the GUI uses it: a conversation directory, a
// settings file, and a Saver writing both in the background.
type Files struct {
	*Dir
	settings SettingsFile
	saver    *Saver
	keys     Keys
}

// Open opens the store at loc; onErr receives failed background writes
// (on the saving goroutine).
func Open(loc Locations, onErr func(error)) (*Files, error) {
	d, err := OpenDir(loc.Conversations)
	if err != nil {
		return nil, err
	}
	sf := SettingsFile{Path: loc.Settings}
	if loc.Keys == "" {
		loc.Keys = filepath.Join(filepath.Dir(loc.Settings), "keys")
	}
	return &Files{Dir: d, settings: sf, saver: NewSaver(d, sf, onErr), keys: Keys{Dir: loc.Keys}}, nil
}

// Keys are the endpoints' API keys.
func (f *Files) Keys() Keys { return f.keys }

// SaveAsync queues a snapshot of c; then runs once it is on disk.
func (f *Files) SaveAsync(c *Conversation, then func()) { f.saver.Save(c, then) }

// DeleteAsync queues the removal of a conversation.
func (f *Files) DeleteAsync(id string) { f.saver.Delete(id) }

// LoadSettings reads the settings file.
func (f *Files) LoadSettings() (Settings, error) { return f.settings.Load() }

// SaveSettingsAsync queues a snapshot of s.
func (f *Files) SaveSettingsAsync(s Settings) { f.saver.SaveSettings(s) }

// Flush waits for every queued write.
func (f *Files) Flush() { f.saver.Flush() }

// Close flushes and stops the background writer.
func (f *Files) Close() { f.saver.Close() }
