package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// libSpec says where a CUDA library may be and how to recognize it.
type libSpec struct {
	env     string   // environment variable naming the file to use first
	sonames []string // names for the dynamic loader (ldconfig cache, LD_LIBRARY_PATH), newest first
	glob    string   // file-name pattern inside CUDA toolkit and pip-wheel lib dirs
	toolkit bool     // search /usr/local/cuda*/lib64 (false for the driver: only its stub is there)
}

// nvrtcSpec covers NVRTC 11.2 to 13: 11.2 kept the soname libnvrtc.so.11.2
// for every 11.x release (Debian's libnvrtc11.2 package is 11.8).
var nvrtcSpec = libSpec{
	env:     "FLOWCHAT_NVRTC",
	sonames: []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
	glob:    "libnvrtc.so*",
	toolkit: true,
}

// driverSpec is libcuda, which only the driver package installs (the
// toolkit's lib64/stubs/libcuda.so fails cuInit with CUDA_ERROR_STUB_LIBRARY).
var driverSpec = libSpec{
	env:     "FLOWCHAT_LIBCUDA",
	sonames: []string{libraryName},
}

// searchEnv is what candidates reads of the machine, so tests can fake it.
type searchEnv struct {
	getenv func(string) string
	glob   func(string) ([]string, error)
}

var osSearchEnv = searchEnv{getenv: os.Getenv, glob: filepath.Glob}

// candidates lists the paths or names to dlopen, in order: the environment
// variable, the sonames (resolved by the dynamic loader through the
// ldconfig cache), /usr/local/cuda*/lib64, then the lib directories of NVIDIA's
// pip wheels (…/site-packages/nvidia/*/lib) under the active virtual or
// conda environment, the user's and the system's Python. Within a glob,
// newer versions come first.
func (s libSpec) candidates(e searchEnv) []string {
	var out []string
	if p := e.getenv(s.env); p != "" {
		out = append(out, p)
	}
	out = append(out, s.sonames...)
	if s.glob == "" {
		return out
	}
	var dirs []string
	if s.toolkit {
		dirs = append(dirs, "/usr/local/cuda/lib64", "/usr/local/cuda-*/lib64")
	}
	for _, root := range pythonRoots(e) {
		for _, sp := range []string{"site-packages", "dist-packages"} {
			dirs = append(dirs, filepath.Join(root, "lib", "python3*", sp, "nvidia", "*", "lib"))
		}
	}
	for _, d := range dirs {
		m, _ := e.glob(filepath.Join(d, s.glob))
		slices.SortFunc(m, func(a, b string) int { return -compareVersions(a, b) })
		out = append(out, m...)
	}
	return dedupe(out)
}

// pythonRoots are the prefixes whose lib/python3*/… may hold pip wheels.
func pythonRoots(e searchEnv) []string {
	var roots []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := e.getenv(v); p != "" {
			roots = append(roots, p)
		}
	}
	if h := e.getenv("HOME"); h != "" {
		roots = append(roots, filepath.Join(h, ".local"))
	}
	return append(roots, "/usr/local", "/usr")
}

// compareVersions orders paths by the digit runs in them (cuda-12.4 after
// cuda-11.8, libnvrtc.so.12 after libnvrtc.so.11.2), then as strings.
func compareVersions(a, b string) int {
	na, nb := digitRuns(a), digitRuns(b)
	if c := slices.Compare(na, nb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func digitRuns(s string) []int {
	var out []int
	n, in := 0, false
	for _, r := range s + "x" {
		if r >= '0' && r <= '9' {
			n, in = n*10+int(r-'0'), true
			continue
		}
		if in {
			out = append(out, n)
		}
		n, in = 0, false
	}
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
