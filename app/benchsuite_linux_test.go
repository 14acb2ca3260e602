package main

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestDropFileCache: a file just written is resident in the page cache;
// after dropFileCache none of its pages is (on ext4, whose page cache
// honours the advice; elsewhere the test says why it skips).
func TestDropFileCache(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("skipping: %s is not on ext4 (statfs type %#x, %v), where eviction is not guaranteed", dir, st.Type, err)
	}
	path := filepath.Join(dir, "f.bin")
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	resident := func() int {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := unix.Mmap(int(f.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(m)
		vec := make([]byte, (len(data)+4095)/4096)
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatal("mincore:", e)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	before := resident()
	if before == 0 {
		t.Skip("skipping: the written file was not resident to begin with")
	}
	dropFileCache(path)
	if after := resident(); after != 0 {
		t.Fatalf("%d of %d pages still resident after dropFileCache (%d before)", after, len(data)/4096, before)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(data) {
		t.Fatalf("file changed by dropFileCache (err %v)", err)
	}
}
