package model

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

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

// isFileMapping reports whether b lies in a shared mapping of a file
// (from /proc/self/maps): only such pages may be dropped, since dropping
// private or heap pages would discard their contents.
func isFileMapping(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return false
	}
	p := uint64(uintptr(unsafe.Pointer(&b[0])))
	for _, line := range strings.Split(string(maps), "\n") {
		// start-end perms offset dev inode path
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && start <= p && p < end {
			return len(f[1]) == 4 && f[1][3] == 's' && f[5] != "" && f[4] != "0"
		}
	}
	return false
}

// dropPages tells the kernel that the whole pages inside b (a read-only
// file mapping whose contents were just copied) are not needed: they leave
// the process's resident set (the page cache keeps them, and a later read
// faults them back in). Copying tensor by tensor and dropping each source
// keeps the load's peak RSS near one copy of the weights instead of two.
// The caller checks isFileMapping first.
func dropPages(b []byte) {
	const page = 4096
	if len(b) < 2*page {
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := int((start+page-1)&^(page-1) - start)
	hi := int((start+uintptr(len(b)))&^(page-1) - start)
	if hi > lo {
		_ = unix.Madvise(b[lo:hi], unix.MADV_DONTNEED)
	}
}
