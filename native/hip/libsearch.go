package hip

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// libraryName is what the loader tries first and what messages name.
const libraryName = "libamdhip64.so"

// libSpec says where a ROCm library may be and how to recognize it.
type libSpec struct {
	env     string   // environment variable naming the file to use first
	sonames []string // names for the dynamic loader (ldconfig cache, LD_LIBRARY_PATH), newest first
	glob    string   // file-name pattern inside $ROCM_PATH/lib and /opt/rocm*/lib
}

// runtimeSpec is libamdhip64: the unversioned name (a -dev package or a
// ROCm install), then the ROCm 6 and 5 sonames.
var runtimeSpec = libSpec{
	env:     "FLOWCHAT_LIBAMDHIP64",
	sonames: []string{libraryName, libraryName + ".6", libraryName + ".5"},
	glob:    libraryName + "*",
}

// hiprtcSpec is libhiprtc (ROCm 6 and later), then libamdhip64, which
// exports hipRTC itself in ROCm 5 (Debian bookworm's libamdhip64-5).
var hiprtcSpec = libSpec{
	env:     "FLOWCHAT_HIPRTC",
	sonames: []string{"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6"},
	glob:    "libhiprtc.so*",
}

// searchEnv is what candidates reads of the machine, so tests can fake it.
type searchEnv struct {
	getenv func(string) string
	glob   func(string) ([]string, error)
}

var osSearchEnv = searchEnv{getenv: os.Getenv, glob: filepath.Glob}

// candidates lists the runtime's paths or names to dlopen, in order.
func candidates() []string { return runtimeSpec.candidates(osSearchEnv) }

// hiprtcCandidates lists hipRTC's, ending with the runtime's own (ROCm 5).
func hiprtcCandidates(e searchEnv) []string {
	return dedupe(append(hiprtcSpec.candidates(e), runtimeSpec.candidates(e)...))
}

// candidates lists, in order: the environment variable, the sonames
// (resolved by the dynamic loader through the ldconfig cache), then
// $ROCM_PATH/lib, /opt/rocm/lib and the versioned /opt/rocm-*/lib, which
// ROCm installs and does not always add to the linker path. Within a glob,
// newer versions come first.
func (s libSpec) candidates(e searchEnv) []string {
	var out []string
	if p := e.getenv(s.env); p != "" {
		out = append(out, p)
	}
	out = append(out, s.sonames...)
	var dirs []string
	if root := e.getenv("ROCM_PATH"); root != "" {
		dirs = append(dirs, filepath.Join(root, "lib"))
	}
	dirs = append(dirs, "/opt/rocm/lib", "/opt/rocm-*/lib")
	for _, d := range dirs {
		m, _ := e.glob(filepath.Join(d, s.glob))
		slices.SortFunc(m, func(a, b string) int { return -compareVersions(a, b) })
		out = append(out, m...)
	}
	return dedupe(out)
}

// compareVersions orders paths by the digit runs in them (rocm-6.2.0 after
// rocm-5.7.1), then as strings.
func compareVersions(a, b string) int {
	if c := slices.Compare(digitRuns(a), digitRuns(b)); c != 0 {
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
