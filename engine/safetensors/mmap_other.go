//go:build !unix

package safetensors

import "os"

// MapFile reads the whole file where mmap is not wired up.
func MapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	return data, func() error { return nil }, err
}
