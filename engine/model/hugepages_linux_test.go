package model

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestIsFileMapping: the huge-page copy reads a mapped file with pread and
// copies data read into memory; heap memory must not be taken for a file
// mapping.
func TestIsFileMapping(t *testing.T) {
	heap := make([]byte, 1<<16)
	if isFileMapping(heap) {
		t.Fatal("heap memory taken for a file mapping")
	}
	path := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 1<<16)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	m, err := syscall.Mmap(int(fd.Fd()), 0, len(data), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(m)
	if !isFileMapping(m[100:]) {
		t.Fatal("file mapping not recognized")
	}
}
