//go:build !linux

package model

// hugeAlloc is a plain allocation where transparent huge pages are not
// available.
func hugeAlloc(n int) ([]byte, func() error, error) {
	return make([]byte, n), func() error { return nil }, nil
}

// dropPages is a no-op where pages cannot be given back (see the Linux
// version).
func dropPages(b []byte) {}

func isFileMapping(b []byte) bool { return false }
