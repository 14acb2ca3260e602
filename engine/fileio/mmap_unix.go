//go:build unix

package fileio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Map maps path read-only and returns the bytes and a release function. An
// empty file maps to an empty slice.
func Map(path string) ([]byte, func() error, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 {
		return nil, func() error { return nil }, nil
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}

// Unmap drops data's pages from this process's resident set (a range of
// a mapping Map returned): they stay in the page cache, and a later read
// faults them back in. For a model whose weights all moved to a GPU, the
// host copies are then not counted in its memory (engine.Load).
func Unmap(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	return unix.Madvise(data, unix.MADV_DONTNEED)
}
