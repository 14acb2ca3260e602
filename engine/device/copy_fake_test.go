//go:build linux

package device

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ebitengine/purego"

	"flowchat/native/cuda"
	"flowchat/native/hip"
)

// callLog is the fake driver's log of copies, events and peer calls.
func callLog(t *testing.T, path string) (read func() string, clear func()) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var log func() string
	purego.RegisterLibFunc(&log, h, "fakeCallLog")
	purego.RegisterLibFunc(&clear, h, "fakeClearLog")
	return log, clear
}

// matchLog holds the log's lines against want, whose {X} stand for
// numbers (streams, events) bound at their first use and equal after;
// {A} and {B} (the two devices' streams) and {R} and {M} (two events)
// must differ.
func matchLog(t *testing.T, what, log string, want []string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(log), "\n")
	if len(got) != len(want) {
		t.Fatalf("%s: the driver saw\n%s\nwant the shape\n%s", what, log, strings.Join(want, "\n"))
	}
	vars := map[string]string{}
	ph := regexp.MustCompile(`\{(\w+)\}`)
	for i, w := range want {
		names := ph.FindAllStringSubmatch(w, -1)
		quoted := strings.NewReplacer(`\{`, "{", `\}`, "}").Replace(regexp.QuoteMeta(w))
		m := regexp.MustCompile("^" + ph.ReplaceAllString(quoted, `(\d+)`) + "$").FindStringSubmatch(got[i])
		if m == nil {
			t.Fatalf("%s: line %d is %q, want %q\n%s", what, i, got[i], w, log)
		}
		for j, n := range names {
			v := m[j+1]
			if old, ok := vars[n[1]]; ok && old != v {
				t.Fatalf("%s: line %d: {%s} is %s, was %s\n%s", what, i, n[1], v, old, log)
			}
			vars[n[1]] = v
		}
	}
	for _, p := range [][2]string{{"A", "B"}, {"R", "M"}} {
		if x, ok := vars[p[0]]; ok && x == vars[p[1]] {
			t.Fatalf("%s: {%s} and {%s} are both %s\n%s", what, p[0], p[1], x, log)
		}
	}
}

// TestCUDAFakeTransfer: Write stages through pinned memory with an async
// copy and an event; a transfer between two CUDA devices that allow peer
// access enables it once and copies peer to peer on the destination's
// stream, after waiting for an event the source recorded, and the source's
// stream waits for the copy in turn: the driver sees exactly that, with
// each call on its own context's stream, and the bytes arrive. Without
// peer access (TestCUDAFakeTransferNoPeer) the copy goes through pinned
// host memory, ordered the same way.
func TestCUDAFakeTransfer(t *testing.T) {
	if os.Getenv(childEnv) == "" && fakePath == "" {
		t.Skip("skipping: " + fakeSkip)
	}
	path := fakePath
	if p := os.Getenv("FLOWCHAT_LIBCUDA"); p != "" {
		path = p
	}
	a, b := openFakeCUDA2(t)
	defer a.Close()
	defer b.Close()
	log, clear := callLog(t, path)
	peer := PeerAccess(a, b)
	if want := os.Getenv("FAKE_EXPECT_PEER") != "no"; peer != want {
		t.Fatalf("PeerAccess = %v, want %v", peer, want)
	}
	const n = 4096
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(rand.IntN(256))
	}
	sm, _ := b.Alloc(n)
	dm, _ := a.Alloc(n)
	clear()
	must(t, b.Write(sm, src))
	matchLog(t, "Write", log(), []string{"htod s{B} pinned", "record e{W} s{B}"})
	for round := range 2 {
		clear()
		must(t, Transfer(a, dm, b, sm, nil))
		want := []string{"record e{R} s{B}", "wait s{A} e{R}", "peer d0←d1 s{A}", "record e{M} s{A}", "wait s{B} e{M}"}
		if !peer {
			want = []string{"dtoh s{B} pinned", "record e{R} s{B}", "wait s{A} e{R}", "htod s{A} pinned", "record e{M} s{A}", "wait s{B} e{M}"}
		}
		matchLog(t, fmt.Sprintf("transfer %d", round), log(), want)
	}
	got := make([]byte, n)
	clear()
	must(t, a.Read(got, dm))
	matchLog(t, "Read", log(), []string{"dtoh s{A} pinned"})
	if string(got) != string(src) {
		t.Error("the transfer changed the bytes")
	}
	a.Free(dm)
	b.Free(sm)
}

// TestCUDAFakeTransferNoPeer: devices without peer access copy through
// pinned host memory (a child process over a driver built with
// FAKE_NO_PEER).
func TestCUDAFakeTransferNoPeer(t *testing.T) {
	if fakePath == "" {
		t.Skip("skipping: " + fakeSkip)
	}
	path, _ := buildFakeDriver(t.TempDir(), "FAKE_KERNELS", "FAKE_NO_PEER")
	child(t, "TestCUDAFakeTransfer", "FLOWCHAT_LIBCUDA="+path, "FAKE_EXPECT_PEER=no")
}

// openFakeCUDA2 opens fake devices 0 and 1.
func openFakeCUDA2(t *testing.T) (Device, Device) {
	if _, err := cuda.LoadNVRTC(); err != nil {
		t.Skipf("skipping: the CUDA device compiles its kernels with NVRTC: %v", err)
	}
	a, err := OpenCUDA(0)
	if err != nil {
		t.Fatalf("OpenCUDA(0) on the fake driver: %v", err)
	}
	b, err := OpenCUDA(1)
	if err != nil {
		a.Close()
		t.Fatalf("OpenCUDA(1) on the fake driver: %v", err)
	}
	return a, b
}

// TestHIPFakeTransfer: the same on two HIP devices (a child process over
// the fake libamdhip64 built with two wave64 gfx90a devices): staged
// writes and reads through pinned memory, and a peer copy on the
// destination's stream between the two streams' events.
func TestHIPFakeTransfer(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakeHIPPath == "" {
			t.Skip("skipping: " + fakeHIPSkip)
		}
		path, _ := buildFakeHIP(t.TempDir(), "FAKE_SAME_ARCH")
		child(t, t.Name(), "FLOWCHAT_LIBAMDHIP64="+path)
		return
	}
	if _, err := hip.LoadHIPRTC(); err != nil {
		t.Skipf("skipping: the HIP device compiles its kernels with hipRTC: %v", err)
	}
	a, err := OpenHIP(0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenHIP(1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	log, clear := callLog(t, os.Getenv("FLOWCHAT_LIBAMDHIP64"))
	if !PeerAccess(a, b) {
		t.Fatal("no peer access between the fake's devices")
	}
	const n = 4096
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(rand.IntN(256))
	}
	sm, _ := b.Alloc(n)
	dm, _ := a.Alloc(n)
	clear()
	must(t, b.Write(sm, src))
	matchLog(t, "Write", log(), []string{"htod s{B} pinned", "record e{W} s{B}"})
	clear()
	must(t, Transfer(a, dm, b, sm, nil))
	matchLog(t, "transfer", log(), []string{"record e{R} s{B}", "wait s{A} e{R}", "peer d0←d1 s{A}", "record e{M} s{A}", "wait s{B} e{M}"})
	got := make([]byte, n)
	must(t, a.Read(got, dm))
	if string(got) != string(src) {
		t.Error("the transfer changed the bytes")
	}
	a.Free(dm)
	b.Free(sm)
}
