package main

import (
	"bytes"
	"log"
	"strings"
	"testing"
)

// TestFyneLogFilter: the harmless Fyne errors of a plain desktop start
// and quit are dropped whole; other errors and log lines pass unchanged.
func TestFyneLogFilter(t *testing.T) {
	var out bytes.Buffer
	l := log.New(&fyneLog{out: &out}, "", 0)
	entry := func(reason, cause string) {
		l.Println("Fyne error: ", reason)
		if cause != "" {
			l.Println("  Cause:", cause)
		}
		l.Printf("  At: %s:%d", "x.go", 1)
	}
	entry("failed to watch theme settings", `exec: "dbus-launch": executable file not found in $PATH`)
	entry("Preferences load error:", "EOF")
	entry("Failed to create fyne cache space", "mkdir /c/fyne: permission denied")
	entry("Preferences load error:", "invalid character 'x' looking for beginning of value")
	l.Println("flowchat: a line of our own")
	entry("Window creation error", "")
	want := "Fyne error:  Failed to create fyne cache space\n  Cause: mkdir /c/fyne: permission denied\n  At: x.go:1\n" +
		"Fyne error:  Preferences load error:\n  Cause: invalid character 'x' looking for beginning of value\n  At: x.go:1\n" +
		"flowchat: a line of our own\n" +
		"Fyne error:  Window creation error\n  At: x.go:1\n"
	if got := out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(out.String(), "dbus") {
		t.Error("the dbus entry was passed on")
	}
}
