//go:build linux

package cuda

import (
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

const gib = 1 << 30

// buildFake compiles testdata/fakecuda.c with the given -D flags into a
// shared library in t.TempDir and returns its path. The C compiler is only a
// test tool here: the package itself never needs cgo.
func buildFake(t testing.TB, defines ...string) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found; cannot build the fake libcuda")
	}
	out := filepath.Join(t.TempDir(), "libfakecuda.so")
	args := []string{"-shared", "-fPIC", "-O1", "-o", out, "testdata/fakecuda.c"}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	return out
}

func openFake(t *testing.T, defines ...string) *driver {
	t.Helper()
	d, err := openDriver(buildFake(t, defines...))
	if err != nil {
		t.Fatalf("openDriver(fake): %v", err)
	}
	return d
}

func TestProbeFakeDriver(t *testing.T) {
	info, err := openFake(t).probe()
	if err != nil {
		t.Fatal(err)
	}
	want := Info{DriverVersion: 12040, Devices: []Device{
		{Ordinal: 0, Name: "Fake GPU 0", TotalMem: 24 * gib, ComputeMajor: 8, ComputeMinor: 9},
		{Ordinal: 1, Name: "Fake GPU 1", TotalMem: 48 * gib, ComputeMajor: 9, ComputeMinor: 9},
	}}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("probe() = %+v\nwant      %+v", info, want)
	}
}

func TestProbeFakeNoDevices(t *testing.T) {
	info, err := openFake(t, "FAKE_DEVICES=0").probe()
	if !errors.Is(err, ErrNoGPU) {
		t.Fatalf("probe() error = %v, want one wrapping ErrNoGPU", err)
	}
	want := "no NVIDIA GPU found: CUDA driver 12.4 reports no devices; running on CPU"
	if err.Error() != want {
		t.Errorf("probe() error = %q, want %q", err, want)
	}
	if info.DriverVersion != 12040 || len(info.Devices) != 0 {
		t.Errorf("probe() info = %+v, want driver 12040 and no devices", info)
	}
}

func TestFakeInitFails(t *testing.T) {
	_, err := openDriver(buildFake(t, "FAKE_INIT_RESULT=100"))
	var r Result
	if !errors.Is(err, ErrNoGPU) || !errors.As(err, &r) || r != ErrorNoDevice {
		t.Fatalf("openDriver error = %v, want ErrNoGPU and CUDA_ERROR_NO_DEVICE", err)
	}
	want := "no NVIDIA GPU found: cuInit: CUDA_ERROR_NO_DEVICE (100); running on CPU"
	if err.Error() != want {
		t.Errorf("openDriver error = %q, want %q", err, want)
	}
}

func TestFakeMissingRequiredSymbol(t *testing.T) {
	_, err := openDriver(buildFake(t, "FAKE_OMIT_TOTALMEM"))
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "missing symbol cuDeviceTotalMem_v2") {
		t.Fatalf("openDriver error = %v, want ErrNoGPU naming the missing symbol", err)
	}
}

func TestFakeMemInfo(t *testing.T) {
	path := buildFake(t)
	d, err := openDriver(path)
	if err != nil {
		t.Fatal(err)
	}
	free, total, err := d.memInfo(1)
	if err != nil {
		t.Fatal(err)
	}
	if free != 16*gib || total != 48*gib {
		t.Errorf("memInfo(1) = %d, %d; want %d, %d", free, total, 16*gib, 48*gib)
	}
	retained, depth := fakeHooks(t, path)
	if retained(1) != 0 || depth() != 0 {
		t.Errorf("after memInfo: %d references held, context stack depth %d; want 0, 0", retained(1), depth())
	}
	var r Result
	if _, _, err := d.memInfo(5); !errors.As(err, &r) || r != ErrorInvalidDevice {
		t.Errorf("memInfo(5) error = %v, want CUDA_ERROR_INVALID_DEVICE", err)
	}
}

func TestFakeWithoutContextAPI(t *testing.T) {
	d := openFake(t, "FAKE_OMIT_CONTEXT")
	if _, err := d.probe(); err != nil {
		t.Fatalf("probe() without optional symbols: %v", err)
	}
	if _, _, err := d.memInfo(0); !errors.Is(err, ErrNotSupported) {
		t.Errorf("memInfo error = %v, want ErrNotSupported", err)
	}
}

// fakeHooks binds the fake's test-only bookkeeping functions.
func fakeHooks(t *testing.T, path string) (retained func(int32) int32, depth func() int32) {
	t.Helper()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	purego.RegisterLibFunc(&retained, h, "fakeRetained")
	purego.RegisterLibFunc(&depth, h, "fakeDepth")
	return retained, depth
}
