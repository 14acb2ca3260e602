package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall: `make install-files` (what `make install` runs after
// building) puts the binary, a valid .desktop file whose Exec and Icon
// name what was installed, and the icon under DESTDIR/PREFIX; `make
// uninstall` removes all three.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "flowchat-built")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	stage := filepath.Join(dir, "stage")
	mk := func(target string) {
		cmd := exec.Command("make", "-s", "-C", "..", target, "BIN="+bin, "DESTDIR="+stage, "PREFIX=/opt/fc")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
	}
	mk("install-files")
	binPath := filepath.Join(stage, "opt/fc/bin/flowchat")
	desktop := filepath.Join(stage, "opt/fc/share/applications/io.flowchat.app.desktop")
	icon := filepath.Join(stage, "opt/fc/share/icons/hicolor/512x512/apps/io.flowchat.app.png")
	if st, err := os.Stat(binPath); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("binary: %v", err)
	}
	if _, err := os.Stat(icon); err != nil {
		t.Error(err)
	}
	d, err := os.ReadFile(desktop)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nExec=/opt/fc/bin/flowchat\n", "\nIcon=io.flowchat.app\n", "[Desktop Entry]\n"} {
		if !strings.Contains(string(d), want) {
			t.Errorf(".desktop lacks %q:\n%s", want, d)
		}
	}
	if v, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command(v, desktop).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("desktop-file-validate: %v %s", err, out)
		}
	} else {
		t.Log("desktop-file-validate not installed (Debian: desktop-file-utils); .desktop not validated")
	}
	mk("uninstall")
	for _, p := range []string{binPath, desktop, icon} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there after uninstall (%v)", p, err)
		}
	}
}
