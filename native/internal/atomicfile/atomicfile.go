// Package atomicfile writes a file whole or not at all (a temporary file
// in the same directory, synced, then renamed), for native/cuda's and
// native/hip's kernel caches. (engine/fileio does the same for the engine,
// but native sits below engine and does not import it.)
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path, creating its directory; concurrent writers
// and crashes never leave a partial file under the final name.
func Write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
