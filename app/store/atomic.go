package store

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tmpPrefix starts the name of every temporary file WriteFileAtomic makes,
// so that leftovers of a crash are recognised and removed.
const tmpPrefix = ".tmp-"

// writeData writes data to f. Tests replace it to simulate a crash part way
// through a write.
var writeData = func(f io.Writer, data []byte) error {
	_, err := f.Write(data)
	return err
}

// WriteFileAtomic replaces path with data so that, whatever happens, path
// holds either its old content or the new one: data goes to a temporary
// file in the same directory, which is synced, renamed over path, and the
// directory synced so that the rename itself is durable.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tmpPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = writeData(tmp, data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable. Some file systems refuse to sync
// a directory; that is not an error worth failing a save for.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	d.Sync()
	return d.Close()
}

// removeTemps deletes the temporary files a crash left in dir.
func removeTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
