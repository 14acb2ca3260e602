package fileio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A writer that fails half way leaves the old content and no temp file.
	err := WriteWith(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("ne"))
		return errors.New("disk full")
	})
	if err == nil {
		t.Fatal("want the writer's error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("content %q after a failed write", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	if err := WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Fatalf("content %q mode %v", b, st.Mode())
	}
}

func TestMap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m")
	os.WriteFile(p, []byte("mapped"), 0o644)
	b, release, err := Map(p)
	if err != nil || string(b) != "mapped" {
		t.Fatalf("%q %v", b, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "e")
	os.WriteFile(empty, nil, 0o644)
	if b, release, err := Map(empty); err != nil || len(b) != 0 || release() != nil {
		t.Fatalf("empty file: %v", err)
	}
	if _, _, err := Map(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file mapped")
	}
}
