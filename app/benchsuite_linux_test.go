package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
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

// TestBenchVsRead: bench --vs-read prints, per generation test, the
// weights streamed (the table's median t/s times the bytes a token reads)
// against the read probe, with a median share inside the runs' range; and
// the bytes a token reads count the token embedding only where it is also
// the output head.
func TestBenchVsRead(t *testing.T) {
	defer func(s int) { probeSize = s }(probeSize)
	probeSize = 32 << 20
	m := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	out, stderr, code := run(t, "bench", "-m", m, "-t", "1", "-p", "0", "-n", "16", "-r", "3", "--vs-read")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ts float64
	row := regexp.MustCompile(`\| 1 \| tg16 \| ([0-9.]+) \|`).FindStringSubmatch(out)
	if row == nil {
		t.Fatalf("no tg16 row in\n%s", out)
	}
	ts, _ = strconv.ParseFloat(row[1], 64)
	line := regexp.MustCompile(`tg16 at 1 threads ([0-9.]+) GB/s, probe ([0-9.]+) GB/s, ([0-9]+)% \(median of 3; runs ([0-9]+)–([0-9]+)%\)`).FindStringSubmatch(out)
	if line == nil {
		t.Fatalf("no read-probe line in\n%s", out)
	}
	var v [5]float64
	for i := range v {
		v[i], _ = strconv.ParseFloat(line[i+1], 64)
	}
	_, tok, err := weightBytes(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := ts * float64(tok) / 1e9; math.Abs(v[0]-want) > 0.05+0.01*want {
		t.Errorf("%v GB/s printed, want %.2f t/s × %d bytes = %.2f", v[0], ts, tok, want)
	}
	if v[1] <= 0 || v[2] < v[3] || v[2] > v[4] || v[3] <= 0 {
		t.Errorf("probe %v GB/s, share %v%% of runs %v–%v%%", v[1], v[2], v[3], v[4])
	}
	// stories260K has an output head; TinyStories-656K ties it to the
	// token embedding (1 MiB of F32), which a token then reads whole.
	_, tied, err := weightBytes(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all int64
	for _, tn := range f.Tensors {
		all += int64(tn.Size)
	}
	if tied != all {
		t.Errorf("TinyStories-656K: %d bytes a token, want all %d", tied, all)
	}
	g, err := gguf.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var less int64
	for _, tn := range g.Tensors {
		if tn.Name != "token_embd.weight" {
			less += int64(tn.Size)
		}
	}
	if tok != less {
		t.Errorf("stories260K: %d bytes a token, want %d (all but the embedding)", tok, less)
	}
}
