package main

import (
	"bytes"
	"log"
	"os"
	"os/exec"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
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
	entry("Getting favorite locations", "this computer does not define a VIDEOS folder")
	entry("Getting favorite locations", "open /home/u/Music: permission denied")
	entry("Failed to create fyne cache space", "mkdir /c/fyne: permission denied")
	entry("Preferences load error:", "invalid character 'x' looking for beginning of value")
	l.Println("flowchat: a line of our own")
	entry("Window creation error", "")
	want := "Fyne error:  Getting favorite locations\n  Cause: open /home/u/Music: permission denied\n  At: x.go:1\n" +
		"Fyne error:  Failed to create fyne cache space\n  Cause: mkdir /c/fyne: permission denied\n  At: x.go:1\n" +
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

// TestFileDialogQuiet: opening a file dialog (File ▸ Open model file…) on
// an account whose user-dirs name no Videos folder printed three lines
// of Fyne error on every open; through the filter it prints nothing.
func TestFileDialogQuiet(t *testing.T) {
	if _, err := exec.LookPath("xdg-user-dir"); err != nil {
		t.Skip("xdg-user-dir not installed: Fyne does not look the folders up")
	}
	t.Setenv("HOME", t.TempDir()) // no ~/.config/user-dirs.dirs
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var raw, out bytes.Buffer
	defer log.SetOutput(os.Stderr)
	a := test.NewApp()
	defer a.Quit()
	w := test.NewWindow(nil)
	defer w.Close()
	w.Resize(fyne.NewSize(900, 700))
	open := func() {
		d := dialog.NewFileOpen(func(fyne.URIReadCloser, error) {}, w)
		d.Show()
		d.Hide()
	}
	log.SetOutput(&raw)
	open()
	if !strings.Contains(raw.String(), "does not define a") {
		t.Fatalf("Fyne logged %q opening a file dialog: the test no longer reproduces the message", raw.String())
	}
	log.SetOutput(&fyneLog{out: &out})
	open()
	if out.Len() > 0 {
		t.Errorf("opening a file dialog printed:\n%s", out.String())
	}
}
