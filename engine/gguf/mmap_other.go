//go:build !unix

package gguf

import "os"

// mapFile reads the whole file where mmap is not wired up.
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	return data, func() error { return nil }, err
}
