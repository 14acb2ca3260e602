package hip

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeWithoutRuntime checks the message a user sees on a machine
// without ROCm, through the public entry points.
func TestProbeWithoutRuntime(t *testing.T) {
	for _, path := range candidates() {
		if _, err := openLibrary(path); err == nil {
			t.Skipf("%s is loadable here; covered by TestProbeRealGPU", path)
		}
	}
	for range 2 { // the second call takes the cached path
		info, err := Probe()
		if !errors.Is(err, ErrNoGPU) {
			t.Fatalf("Probe error = %v, want one wrapping ErrNoGPU", err)
		}
		want := "no AMD GPU found: libamdhip64.so not loadable ("
		if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "); running on CPU") {
			t.Errorf("Probe error = %q, want %q…%q", msg, want, "); running on CPU")
		}
		if info.RuntimeVersion != 0 || info.Devices != nil {
			t.Errorf("Probe info = %+v, want zero", info)
		}
	}
	if _, _, err := MemInfo(0); !errors.Is(err, ErrNoGPU) {
		t.Errorf("MemInfo error = %v, want one wrapping ErrNoGPU", err)
	}
}

func TestOpenMissingLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libamdhip64.so")
	_, err := openRuntime(path)
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), path+" not loadable") {
		t.Fatalf("openRuntime(%q) error = %v", path, err)
	}
}

func TestResultError(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{ErrorNoDevice, "hipErrorNoDevice (100)"},
		{ErrorInvalidDevice, "hipErrorInvalidDevice (101)"},
		{Result(4242), "hipError_t 4242"},
	}
	for _, tt := range tests {
		if got := tt.r.Error(); got != tt.want {
			t.Errorf("Result(%d).Error() = %q, want %q", int32(tt.r), got, tt.want)
		}
	}
	var r Result
	if err := check("hipInit", ErrorNoDevice); !errors.As(err, &r) || r != ErrorNoDevice {
		t.Errorf("check(ErrorNoDevice) = %v, not unwrappable to the Result", err)
	}
}

func TestFormatVersion(t *testing.T) {
	// HIP_VERSION encodings: 10000000*major + 100000*minor + patch.
	for v, want := range map[int]string{60241134: "6.2.41134", 50422804: "5.4.22804"} {
		if got := FormatVersion(v); got != want {
			t.Errorf("FormatVersion(%d) = %q, want %q", v, got, want)
		}
	}
}
