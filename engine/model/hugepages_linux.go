package model

import (
	"errors"
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
// (from /proc/self/maps).
func isFileMapping(b []byte) bool { return mappedInode(b) != 0 }

// mappedInode returns the inode of the file that b is a shared mapping of,
// or 0 if b is not in one (heap, anonymous or private memory).
func mappedInode(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
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
			ino, err := strconv.ParseUint(f[4], 10, 64)
			if err != nil || len(f[1]) != 4 || f[1][3] != 's' || f[5] == "" {
				return 0
			}
			return ino
		}
	}
	return 0
}

// sameInode reports whether f is the file with inode ino.
func sameInode(f *os.File, ino uint64) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && st.Ino == ino
}

// adviseSequential tells the kernel that f is about to be read from start
// to end: it doubles the read-ahead window (posix_fadvise SEQUENTIAL), so a
// cold file arrives in fewer, larger disk requests. Advice only.
func adviseSequential(f *os.File) {
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
}

// openDirect opens path for direct I/O (O_DIRECT: reads bypass the page
// cache) and returns the alignment its reads need in file offset, length
// and memory, or an error where the file system has none or needs more
// than a page.
func openDirect(path string) (*os.File, int64, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_DIOALIGN, &st); err != nil {
		return nil, 0, err
	}
	a := int64(max(st.Dio_mem_align, st.Dio_offset_align, st.Dio_read_offset_align))
	if st.Mask&unix.STATX_DIOALIGN == 0 || a == 0 || a > 4096 || a&(a-1) != 0 {
		return nil, 0, errors.New("no direct I/O")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return nil, 0, err
	}
	return f, a, nil
}

// mostlyCached reports whether at least half of the pages under b (part
// of a file mapping) are in the page cache, true if unknown.
func mostlyCached(b []byte) bool {
	in, n := cachedPages(b)
	return 2*in >= n
}

// cachedPages counts the pages under b (part of a file mapping) that are
// in the page cache (mincore), of n; all of them if unknown.
func cachedPages(b []byte) (in, n int) {
	const page = 4096
	if len(b) == 0 {
		return 0, 0
	}
	skip := int(uintptr(unsafe.Pointer(&b[0])) % page)
	vec := make([]byte, (skip+len(b)+page-1)/page)
	lo := unsafe.Add(unsafe.Pointer(&b[0]), -skip)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(lo), uintptr(skip+len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return len(vec), len(vec)
	}
	for _, v := range vec {
		in += int(v & 1)
	}
	return in, len(vec)
}
