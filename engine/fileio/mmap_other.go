//go:build !unix

package fileio

import "os"

// Map reads the whole file where memory maps are not wired up.
func Map(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	return data, func() error { return nil }, err
}

// Unmap does nothing where Map read the file into memory.
func Unmap(data []byte) error { return nil }
