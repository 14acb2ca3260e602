package cuda

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeWithoutDriver checks the message a user sees on a machine
// without the NVIDIA driver, through the public entry points.
func TestProbeWithoutDriver(t *testing.T) {
	if _, err := openLibrary(libraryName); err == nil {
		t.Skip("libcuda.so.1 is loadable here; covered by TestProbeRealGPU")
	}
	for range 2 { // the second call takes the cached path
		info, err := Probe()
		if !errors.Is(err, ErrNoGPU) {
			t.Fatalf("Probe error = %v, want one wrapping ErrNoGPU", err)
		}
		want := "no NVIDIA GPU found: libcuda.so.1 not loadable ("
		if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "); running on CPU") {
			t.Errorf("Probe error = %q, want %q…%q", msg, want, "); running on CPU")
		}
		if info.DriverVersion != 0 || info.Devices != nil {
			t.Errorf("Probe info = %+v, want zero", info)
		}
	}
	if _, _, err := MemInfo(0); !errors.Is(err, ErrNoGPU) {
		t.Errorf("MemInfo error = %v, want one wrapping ErrNoGPU", err)
	}
}

func TestOpenMissingLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libcuda.so.1")
	_, err := openDriver(path)
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), path+" not loadable") {
		t.Fatalf("openDriver(%q) error = %v", path, err)
	}
}

func TestResultError(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{ErrorNoDevice, "CUDA_ERROR_NO_DEVICE (100)"},
		{ErrorInsufficientDriver, "CUDA_ERROR_INSUFFICIENT_DRIVER (35)"},
		{Result(12345), "CUresult 12345"},
	}
	for _, tt := range tests {
		if got := tt.r.Error(); got != tt.want {
			t.Errorf("Result(%d).Error() = %q, want %q", int32(tt.r), got, tt.want)
		}
	}
	if err := check("cuInit", Success); err != nil {
		t.Errorf("check(Success) = %v, want nil", err)
	}
	var r Result
	if err := check("cuInit", ErrorNoDevice); !errors.As(err, &r) || r != ErrorNoDevice {
		t.Errorf("check(ErrorNoDevice) = %v, not unwrappable to the Result", err)
	}
}

func TestFormatVersion(t *testing.T) {
	for v, want := range map[int]string{12040: "12.4", 11080: "11.8", 13000: "13.0"} {
		if got := FormatVersion(v); got != want {
			t.Errorf("FormatVersion(%d) = %q, want %q", v, got, want)
		}
	}
}
