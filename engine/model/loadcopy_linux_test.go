package model

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// evict drops the file at path from the page cache but for the pages
// mapped; it skips the test where the file system keeps the file cached
// (tmpfs).
func evict(t *testing.T, path string) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := unix.Fadvise(int(fh.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Skip("posix_fadvise:", err)
	}
	if in := cachedFraction(t, path); in > 0.1 {
		t.Skipf("%.0f%% of the file still cached after POSIX_FADV_DONTNEED (tmpfs?): no cold file to read", 100*in)
	}
}

// cachedFraction is the part of the file at path in the page cache.
func cachedFraction(t *testing.T, path string) float64 {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	m, err := unix.Mmap(int(fh.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer unix.Munmap(m)
	in, n := cachedPages(m)
	return float64(in) / float64(n)
}

// TestCopyToHugePagesColdFile: tensors of a file not in the page cache are
// read with direct I/O (they stay out of the cache) and arrive bit for bit,
// whatever their alignment in the file; tensors of a cached file are read
// through the cache. The file is written (and synced) here, 24 MiB of
// tensors at 32-byte aligned offsets, as in GGUF, and mapped as gguf.Open
// maps it.
func TestCopyToHugePagesColdFile(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	data := make([]byte, 24<<20+4000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "cold.bin")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, cold := range []bool{true, false} {
		m, err := unix.Mmap(int(fh.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Skip("mmap:", err)
		}
		src := &ggufSource{byName: map[string]*Weight{}, path: path, fileOff: map[string]int64{}}
		for i, off := 0, 96; off < len(data)-4000; i++ {
			n := min(1+r.IntN(5<<20), len(data)-off)
			name := fmt.Sprintf("blk.%d.w", i)
			src.byName[name] = &Weight{Name: name, Rows: 2, Data: m[off : off+n : off+n]}
			src.fileOff[name] = int64(off)
			off = (off + n + 31) &^ 31
		}
		if cold {
			evict(t, path)
		} else if _, err := fh.ReadAt(make([]byte, len(data)), 0); err != nil {
			t.Fatal(err)
		}
		release, err := src.copyToHugePages()
		if err != nil {
			t.Fatal(err)
		}
		in := cachedFraction(t, path)
		t.Logf("cold %v: %.0f%% of the file cached after the copy", cold, 100*in)
		if cold && in > 0.5 {
			t.Errorf("%.0f%% of a cold file cached after the copy: not read with direct I/O", 100*in)
		}
		for name, w := range src.byName {
			if off := src.fileOff[name]; !bytes.Equal(w.Data, data[off:off+int64(len(w.Data))]) {
				t.Fatalf("cold %v: tensor %s differs from the file", cold, name)
			}
			if isFileMapping(w.Data) || uintptr(unsafe.Pointer(&w.Data[0]))%64 != 0 {
				t.Fatalf("cold %v: tensor %s left in the mapping or not 64-byte aligned", cold, name)
			}
		}
		release()
		unix.Munmap(m)
	}
}
