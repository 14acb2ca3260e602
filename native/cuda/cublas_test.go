package cuda

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCUBLASCandidates: cuBLAS is searched as the other libraries: the
// variable, the sonames newest first, the toolkits, then the pip wheel's
// nvidia/cublas/lib; libcublasLt is not taken for it.
func TestCUBLASCandidates(t *testing.T) {
	files := []string{
		"/usr/local/cuda-12.4/lib64/libcublas.so.12",
		"/usr/local/cuda-12.4/lib64/libcublasLt.so.12",
		"/usr/local/cuda-11.8/lib64/libcublas.so.11",
		"/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12",
	}
	env := map[string]string{"FLOWCHAT_CUBLAS": "/opt/my/libcublas.so", "VIRTUAL_ENV": "/venv"}
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
	want := []string{
		"/opt/my/libcublas.so",
		"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so",
		"/usr/local/cuda-12.4/lib64/libcublas.so.12",
		"/usr/local/cuda-11.8/lib64/libcublas.so.11",
		"/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12",
	}
	if got := cublasSpec.candidates(e); !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	env["FLOWCHAT_CUBLAS"] = "off"
	if _, err := loadCUBLAS(e); !errors.Is(err, ErrNoCUBLAS) || !strings.Contains(err.Error(), "FLOWCHAT_CUBLAS=off") {
		t.Errorf("FLOWCHAT_CUBLAS=off: %v", err)
	}
}

// TestCUBLASUnusable: candidates that do not load, or lack an entry point
// (here the C library), are ErrNoCUBLAS naming each, never a panic; a
// Kernels without cuBLAS names the tiled path for prefill shapes.
func TestCUBLASUnusable(t *testing.T) {
	_, err := loadCUBLASFrom([]string{"/nonexistent/libcublas.so.12", "libc.so.6"})
	if !errors.Is(err, ErrNoCUBLAS) || !strings.Contains(err.Error(), "/nonexistent/libcublas.so.12") ||
		!strings.Contains(err.Error(), "libc.so.6: missing symbol cublasCreate_v2") {
		t.Errorf("loadCUBLASFrom = %v", err)
	}
	var k Kernels
	for cols, want := range map[int]string{1: "matvec", 16: "matvec", 17: "tiled", 512: "tiled"} {
		if got := k.MatMulPath(cols); got != want {
			t.Errorf("MatMulPath(%d) = %q without cuBLAS, want %q", cols, got, want)
		}
	}
}
