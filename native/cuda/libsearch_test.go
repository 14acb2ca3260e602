package cuda

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCandidatesOrder checks the search order on a faked machine: the
// variable, the sonames, the toolkit directories (newest first), then the
// pip wheels of the virtual environment, the user and the system.
func TestCandidatesOrder(t *testing.T) {
	files := []string{
		"/usr/local/cuda-11.8/lib64/libnvrtc.so.11.2",
		"/usr/local/cuda-12.4/lib64/libnvrtc.so.12",
		"/usr/local/cuda-12.4/lib64/libnvrtc-builtins.so.12.4",
		"/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
		"/home/u/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.13",
		"/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", // Debian's system Python
		"/usr/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
	}
	env := map[string]string{"FLOWCHAT_NVRTC": "/opt/my/libnvrtc.so", "VIRTUAL_ENV": "/venv", "HOME": "/home/u"}
	e := searchEnv{
		getenv: func(k string) string { return env[k] },
		glob: func(pattern string) ([]string, error) {
			var m []string
			for _, f := range files {
				if ok, _ := filepath.Match(pattern, f); ok {
					m = append(m, f)
				}
			}
			return m, nil
		},
	}
	got := nvrtcSpec.candidates(e)
	want := []string{
		"/opt/my/libnvrtc.so",
		"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so",
		"/usr/local/cuda-12.4/lib64/libnvrtc.so.12",
		"/usr/local/cuda-11.8/lib64/libnvrtc.so.11.2",
		"/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
		"/home/u/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.13",
		"/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := driverSpec.candidates(e); !reflect.DeepEqual(d, []string{"libcuda.so.1"}) {
		t.Errorf("driver candidates = %v, want only libcuda.so.1 (no stubs from lib64)", d)
	}
}

func TestCompareVersions(t *testing.T) {
	if compareVersions("libnvrtc.so.12", "libnvrtc.so.11.2") <= 0 ||
		compareVersions("/usr/local/cuda-12.10/lib64", "/usr/local/cuda-12.9/lib64") <= 0 ||
		compareVersions("a.so.12", "a.so.12") != 0 {
		t.Error("compareVersions does not order by numbers")
	}
}
