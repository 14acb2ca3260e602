//go:build !linux

package model

import (
	"errors"
	"os"
)

// hugeAlloc is a plain allocation where transparent huge pages are not
// available.
func hugeAlloc(n int) ([]byte, func() error, error) {
	return make([]byte, n), func() error { return nil }, nil
}

// adviseSequential is a no-op where posix_fadvise is not at hand.
func adviseSequential(f *os.File) {}

func isFileMapping(b []byte) bool { return false }

// mappedInode is 0 (unknown) where /proc/self/maps is not at hand: the
// huge-page copy then copies from the mapping.
func mappedInode(b []byte) uint64 { return 0 }

func sameInode(f *os.File, ino uint64) bool { return false }

// openDirect: direct I/O is used on Linux only.
func openDirect(path string) (*os.File, int64, error) {
	return nil, 0, errors.New("no direct I/O")
}

func mostlyCached(b []byte) bool { return true }
