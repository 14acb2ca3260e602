//go:build linux

package device

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"

	"flowchat/native/hip"
)

// The HIP device's host logic (gpu.go's generic adapter over native/hip)
// runs here against native/hip's fake libamdhip64 built with FAKE_KERNELS,
// as the CUDA device runs against the fake libcuda: the kernels are
// compiled by the real hipRTC (ROCm 5.2's, inside libamdhip64) for the
// fake's gfx90a device 0, loaded as code objects by the fake, and run on
// the host by the CPU shim from the same sources at wavefront 64. TestMain
// points FLOWCHAT_LIBAMDHIP64 at the fake; hipRTC is then found in the
// real libamdhip64 further down the search (the fake has no hiprtc*).

var (
	fakeHIPPath string // the fake libamdhip64 with kernels, "" when it could not be built
	fakeHIPSkip string // why not
)

// nativeHIPTestdata is native/hip's testdata, which holds its fake.
const nativeHIPTestdata = "../../native/hip/testdata"

// buildFakeHIP compiles the fake libamdhip64 with the kernels (g++, a
// test tool only: the packages stay cgo-free).
func buildFakeHIP(dir string, defines ...string) (path, skip string) {
	if _, err := exec.LookPath("g++"); err != nil {
		return "", "g++ not found; cannot build native/hip's fake runtime"
	}
	path = filepath.Join(dir, "libfakehip.so")
	args := []string{"-shared", "-fPIC", "-O1", "-pthread", "-ffp-contract=off", "-DFC_WARP_SIZE=64", "-DFAKE_KERNELS",
		"-I../../native/cuda/kernels", "-I" + nativeTestdata + "/cpushim", "-o", path,
		"-x", "c", nativeHIPTestdata + "/fakehip.c", "-x", "c++", "-std=c++17", nativeTestdata + "/fakekernels.cpp"}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	if msg, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		panic(fmt.Sprintf("g++ %s: %v\n%s", strings.Join(args, " "), err, msg))
	}
	return path, ""
}

// openFakeHIP opens fake device 0 (gfx90a, wave64, 64 GiB, a quarter free).
func openFakeHIP(t *testing.T) Device {
	t.Helper()
	if fakeHIPPath == "" {
		t.Skip("skipping: " + fakeHIPSkip)
	}
	if _, err := hip.LoadHIPRTC(); err != nil {
		t.Skipf("skipping: the HIP device compiles its kernels with hipRTC: %v", err)
	}
	d, err := OpenHIP(0)
	if err != nil {
		t.Fatalf("OpenHIP(0) on the fake runtime: %v", err)
	}
	return d
}

func hipHooks(t *testing.T) fakeHooks {
	h, err := purego.Dlopen(fakeHIPPath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var f fakeHooks
	purego.RegisterLibFunc(&f.allocs, h, "fakeAllocs")
	purego.RegisterLibFunc(&f.objects, h, "fakeObjects")
	purego.RegisterLibFunc(&f.launches, h, "fakeKernelLaunches")
	return f
}

// TestHIPFakeMemory: the HIP device's name and memory, copies both ways
// and within the device keep every byte (slices included), and Close
// leaves no allocation, stream or module behind.
func TestHIPFakeMemory(t *testing.T) {
	d := openFakeHIP(t)
	h := hipHooks(t)
	if !strings.HasPrefix(d.Name(), "hip:0 (Fake Instinct 0)") {
		t.Errorf("Name() = %q", d.Name())
	}
	free, total, err := d.MemInfo()
	if err != nil || total != 64<<30 || free != 16<<30 {
		t.Fatalf("MemInfo = %d, %d, %v; want 16 GiB free of 64 GiB", free, total, err)
	}
	allocs0 := h.allocs()
	const n = 1 << 20
	a, err := d.Alloc(n)
	must(t, err)
	b, _ := d.Alloc(n)
	if h.allocs() != allocs0+2 {
		t.Errorf("allocations %d, want %d", h.allocs(), allocs0+2)
	}
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	must(t, d.Write(a, src))
	must(t, d.Copy(b.Slice(1000, 5000), a.Slice(20000, 5000)))
	got := make([]byte, 5000)
	must(t, d.Read(got, b.Slice(1000, 5000)))
	if string(got) != string(src[20000:25000]) {
		t.Error("device copy between slices changed the bytes")
	}
	whole := make([]byte, n)
	must(t, d.Read(whole, a))
	if string(whole) != string(src) {
		t.Error("write then read changed the bytes")
	}
	d.Free(a)
	d.Free(b)
	must(t, d.Close())
	if h.allocs() != 0 || h.objects() != 0 {
		t.Errorf("after Close: %d allocations, %d streams/events/modules", h.allocs(), h.objects())
	}
}

// TestHIPFakeKernelsMatchStandIn: every operation of the HIP device,
// through hipRTC, code-object loading, the launchers' grids (wavefront 64)
// and argument lists and the fake's hipModuleLaunchKernel, gives what the
// stand-in at warp 64 gives, under CUDA's expectations (bit for bit, one
// ulp for RoPE and SiLU); each launch must have happened on the fake, on
// the device the context made current.
func TestHIPFakeKernelsMatchStandIn(t *testing.T) {
	d := openFakeHIP(t)
	defer d.Close()
	kernelsMatchStandIn(t, d, 64, hipHooks(t).launches)
}

// TestHIPFakeBadOrdinal: a device the runtime does not have is an error
// that names it, wrapping ErrNoDevice.
func TestHIPFakeBadOrdinal(t *testing.T) {
	if fakeHIPPath == "" {
		t.Skip("skipping: " + fakeHIPSkip)
	}
	_, err := OpenHIP(7)
	var r hip.Result
	if !errors.Is(err, ErrNoDevice) || !errors.As(err, &r) || r != hip.ErrorInvalidDevice {
		t.Errorf("OpenHIP(7) = %v, want ErrNoDevice with hipErrorInvalidDevice", err)
	}
}
