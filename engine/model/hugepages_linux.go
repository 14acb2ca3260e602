package model

import (
	"golang.org/x/sys/unix"
)

// hugeAlloc returns n bytes of anonymous memory advised to be backed by
// transparent huge pages, and a function that releases it. Decode streams
// every weight once per token; with 2 MiB pages the TLB covers the whole
// model and reads run measurably faster (see docs/PERFORMANCE.md).
func hugeAlloc(n int) ([]byte, func() error, error) {
	const huge = 2 << 20
	size := (n + huge - 1) / huge * huge
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: fine if refused
	return b[:n], func() error { return unix.Munmap(b[:size]) }, nil
}
