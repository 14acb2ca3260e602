//go:build linux

package hip

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func fakeEnv(vars map[string]string, files []string) searchEnv {
	return searchEnv{
		getenv: func(k string) string { return vars[k] },
		glob: func(pattern string) ([]string, error) {
			var out []string
			for _, f := range files {
				if ok, _ := filepath.Match(pattern, f); ok {
					out = append(out, f)
				}
			}
			return out, nil
		},
	}
}

// TestHIPRTCSearchOrder: the variable, libhiprtc's sonames, ROCm install
// directories (ROCM_PATH first, newest versioned install first), then the
// runtime's own names, which carry hipRTC in ROCm 5.
func TestHIPRTCSearchOrder(t *testing.T) {
	e := fakeEnv(map[string]string{"FLOWCHAT_HIPRTC": "/x/libhiprtc.so", "ROCM_PATH": "/r"}, []string{
		"/r/lib/libhiprtc.so.6", "/opt/rocm-5.7.1/lib/libhiprtc.so.5", "/opt/rocm-6.2.0/lib/libhiprtc.so.6",
		"/opt/rocm-6.2.0/lib/libamdhip64.so.6",
	})
	got := hiprtcCandidates(e)
	want := []string{"/x/libhiprtc.so", "libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6",
		"/r/lib/libhiprtc.so.6", "/opt/rocm-6.2.0/lib/libhiprtc.so.6", "/opt/rocm-5.7.1/lib/libhiprtc.so.5",
		"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm-6.2.0/lib/libamdhip64.so.6"}
	if !slices.Equal(got, want) {
		t.Errorf("hiprtcCandidates =\n%q\nwant\n%q", got, want)
	}
}

func TestLoadHIPRTCMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := loadHIPRTC([]string{filepath.Join(dir, "libhiprtc.so"), filepath.Join(dir, "libamdhip64.so.5")})
	if !errors.Is(err, ErrNoHIPRTC) || !strings.Contains(err.Error(), "libamdhip64.so.5") {
		t.Fatalf("loadHIPRTC error = %v, want ErrNoHIPRTC listing what was tried", err)
	}
}

// TestLoadHIPRTCWithoutSymbols: a library without hipRTC (the fake, like
// ROCm 6's libamdhip64) is a clean error naming the missing symbol.
func TestLoadHIPRTCWithoutSymbols(t *testing.T) {
	_, err := loadHIPRTC([]string{buildFake(t)})
	if !errors.Is(err, ErrNoHIPRTC) || !strings.Contains(err.Error(), "missing symbol hiprtcVersion") {
		t.Fatalf("loadHIPRTC error = %v", err)
	}
}
