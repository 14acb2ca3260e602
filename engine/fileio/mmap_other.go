//go:build !unix

package fileio

import "os"

// Map reads the whole file where memory maps are not wired up.
func Map(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	return data, func() error { return nil }, err
}
