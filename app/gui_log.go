package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// fyneLog filters Fyne's log (fyne.LogError writes "Fyne error:  REASON",
// then "  Cause: ERR" and "  At: FILE:LINE", one log line each): entries
// known to be harmless are dropped, everything else is passed on whole.
type fyneLog struct {
	mu      sync.Mutex
	out     io.Writer
	pending []byte // an entry's reason line, until its cause decides
	drop    bool   // the current entry is being dropped
}

// harmless reports whether a Fyne error says nothing a user can act on:
// without dbus-launch the desktop's theme changes are not followed (the
// app keeps its theme); Fyne's preference store read while being
// rewritten at quit is empty (flowchat keeps its settings itself); and a
// file dialog's side list, on an account whose user-dirs do not name
// Videos (or Documents, …), falls back to ~/Videos, said on every open.
func harmless(reason, cause string) bool {
	switch {
	case strings.Contains(reason, "failed to watch theme settings"):
		return true
	case strings.Contains(reason, "Preferences load error"):
		return cause == "EOF" || cause == "unexpected EOF"
	case strings.Contains(reason, "Getting favorite locations"):
		return strings.HasPrefix(cause, "this computer does not define a ")
	}
	return false
}

func (f *fyneLog) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case bytes.Contains(p, []byte("Fyne error: ")):
		f.drop = false
		f.flush()
		f.pending = append(f.pending[:0], p...)
		return len(p), nil
	case f.pending != nil && bytes.Contains(p, []byte("  Cause: ")):
		cause := string(bytes.TrimSpace(p[bytes.Index(p, []byte("  Cause: "))+len("  Cause: "):]))
		f.drop = harmless(string(f.pending), cause)
		if f.drop {
			f.pending = nil
			return len(p), nil
		}
		f.flush()
	case f.pending != nil && bytes.Contains(p, []byte("  At: ")):
		f.drop = harmless(string(f.pending), "")
		if f.drop {
			f.pending = nil
			return len(p), nil
		}
		f.flush()
	case f.drop && bytes.Contains(p, []byte("  At: ")):
		return len(p), nil
	default:
		f.drop = false
		f.flush()
	}
	return f.out.Write(p)
}

func (f *fyneLog) flush() {
	if f.pending != nil {
		f.out.Write(f.pending)
		f.pending = nil
	}
}
