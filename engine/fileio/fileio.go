// Package fileio holds the two file idioms the whole program shares:
// read-only memory maps of model files, and atomic writes (a temporary file
// beside the target, synced, then renamed over it) so that a crash or a full
// disk at any moment leaves the old file or the new one, never a mix.
package fileio

import (
	"io"
	"os"
	"path/filepath"
)

// File is a file being written atomically: write to it, then Commit (or
// Abort, which is also safe to call after Commit).
type File struct {
	*os.File
	path string
	done bool
}

// Create starts an atomic write of path with permissions perm.
func Create(path string, perm os.FileMode) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return &File{File: tmp, path: path}, nil
}

// Commit syncs the data and renames the file into place.
func (f *File) Commit() error {
	if err := f.Sync(); err != nil {
		f.Abort()
		return err
	}
	if err := f.Close(); err != nil {
		f.Abort()
		return err
	}
	if err := os.Rename(f.Name(), f.path); err != nil {
		os.Remove(f.Name())
		return err
	}
	f.done = true
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort discards the temporary file; the target is untouched.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes path atomically with what write produces.
func WriteWith(path string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// syncDir makes the rename durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
