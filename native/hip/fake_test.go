//go:build linux

package hip

import (
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

const gib = 1 << 30

// buildFake compiles testdata/fakehip.c with the given -D flags into a
// shared library in t.TempDir and returns its path. The C compiler is only a
// test tool here: the package itself never needs cgo.
func buildFake(t *testing.T, defines ...string) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found; cannot build the fake libamdhip64")
	}
	out := filepath.Join(t.TempDir(), "libfakehip.so")
	args := []string{"-shared", "-fPIC", "-O1", "-o", out, "testdata/fakehip.c"}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	return out
}

func openFake(t *testing.T, defines ...string) *hipRuntime {
	t.Helper()
	r, err := openRuntime(buildFake(t, defines...))
	if err != nil {
		t.Fatalf("openRuntime(fake): %v", err)
	}
	return r
}

func TestProbeFakeRuntime(t *testing.T) {
	info, err := openFake(t).probe()
	if err != nil {
		t.Fatal(err)
	}
	want := Info{RuntimeVersion: 60241134, Devices: []Device{
		{Ordinal: 0, Name: "Fake Instinct 0", TotalMem: 64 * gib, Arch: "gfx90a:sramecc+:xnack-", WarpSize: 64, ComputeUnits: 104},
		{Ordinal: 1, Name: "Fake Instinct 1", TotalMem: 128 * gib, Arch: "gfx1100", WarpSize: 32, ComputeUnits: 48},
	}}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("probe() = %+v\nwant      %+v", info, want)
	}
}

func TestProbeFakeNoDevices(t *testing.T) {
	info, err := openFake(t, "FAKE_DEVICES=0").probe()
	want := "no AMD GPU found: HIP 6.2.41134 reports no devices; running on CPU"
	if !errors.Is(err, ErrNoGPU) || err.Error() != want {
		t.Fatalf("probe() error = %v, want %q", err, want)
	}
	if info.RuntimeVersion != 60241134 || len(info.Devices) != 0 {
		t.Errorf("probe() info = %+v", info)
	}
}

func TestFakeInitFails(t *testing.T) {
	_, err := openRuntime(buildFake(t, "FAKE_INIT_RESULT=100"))
	var r Result
	if !errors.Is(err, ErrNoGPU) || !errors.As(err, &r) || r != ErrorNoDevice {
		t.Fatalf("openRuntime error = %v, want ErrNoGPU and hipErrorNoDevice", err)
	}
}

func TestFakeMissingRequiredSymbol(t *testing.T) {
	_, err := openRuntime(buildFake(t, "FAKE_OMIT_NAME"))
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "missing symbol hipDeviceGetName") {
		t.Fatalf("openRuntime error = %v, want ErrNoGPU naming the missing symbol", err)
	}
}

func TestFakeMemInfoRestoresDevice(t *testing.T) {
	path := buildFake(t)
	r, err := openRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	// The current device is per thread: stay on one to read it back.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	free, total, err := r.memInfo(1)
	if err != nil {
		t.Fatal(err)
	}
	if free != 32*gib || total != 128*gib {
		t.Errorf("memInfo(1) = %d, %d; want %d, %d", free, total, 32*gib, 128*gib)
	}
	var current func() int32
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	purego.RegisterLibFunc(&current, h, "fakeCurrent")
	if d := current(); d != 0 {
		t.Errorf("current device after memInfo(1) = %d, want 0 restored", d)
	}
	var res Result
	if _, _, err := r.memInfo(7); !errors.As(err, &res) || res != ErrorInvalidDevice {
		t.Errorf("memInfo(7) error = %v, want hipErrorInvalidDevice", err)
	}
}

// TestProbeFakeWithoutProps: without hipGetDeviceProperties and
// hipDeviceGetAttribute the arch is unknown and the warp size defaults to 64.
func TestProbeFakeWithoutProps(t *testing.T) {
	info, err := openFake(t, "FAKE_OMIT_PROPS").probe()
	if err != nil {
		t.Fatal(err)
	}
	if d := info.Devices[1]; d.Arch != "" || d.WarpSize != 64 || d.ComputeUnits != 0 {
		t.Errorf("device 1 = %+v, want no arch, warp 64, no compute units", d)
	}
}

func TestFakeWithoutMemInfo(t *testing.T) {
	r := openFake(t, "FAKE_OMIT_MEMINFO")
	if _, err := r.probe(); err != nil {
		t.Fatalf("probe() without optional symbols: %v", err)
	}
	if _, _, err := r.memInfo(0); !errors.Is(err, ErrNotSupported) {
		t.Errorf("memInfo error = %v, want ErrNotSupported", err)
	}
}
