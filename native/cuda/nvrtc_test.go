package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// testArchs are the architectures every kernel must compile for: Ampere
// (A100, sm_80) and Hopper (H100, sm_90).
var testArchs = []int{80, 90}

// needNVRTC returns the system's NVRTC or skips, saying why.
func needNVRTC(t *testing.T) *NVRTC {
	t.Helper()
	n, err := LoadNVRTC()
	if errors.Is(err, ErrNoNVRTC) {
		t.Skipf("skipping: %v (Debian: make test-deps installs libnvrtc11.2 from non-free)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCompileKernels compiles every kernel source for sm_80 and sm_90 and
// fails on any compiler error; warnings are logged.
func TestCompileKernels(t *testing.T) {
	n := needNVRTC(t)
	t.Logf("NVRTC %s from %s; supported archs %v", n.Version(), n.Path, n.SupportedArchs())
	srcs := KernelSources()
	if len(srcs) == 0 {
		t.Fatal("no kernel sources embedded")
	}
	for _, src := range srcs {
		for _, arch := range testArchs {
			t.Run(fmt.Sprintf("%s/sm_%d", src.Name, arch), func(t *testing.T) {
				img, err := n.Compile(src, arch, sourceDefines(src)...) // FLOWCHAT_MM_UNROLL… as the engine would
				if err != nil {
					t.Fatal(err)
				}
				if img.Kind != CUBIN || img.Arch != arch {
					t.Errorf("got %v for sm_%d, want a cubin for sm_%d", img.Kind, img.Arch, arch)
				}
				if !bytes.HasPrefix(img.Data, []byte("\x7fELF")) {
					t.Errorf("cubin does not start with an ELF header: % x", img.Data[:min(8, len(img.Data))])
				}
				for _, k := range kernelNames(src) {
					if !bytes.Contains(img.Data, []byte(k)) {
						t.Errorf("cubin lacks kernel %s", k)
					}
				}
				if img.Log != "" {
					t.Logf("compiler log:\n%s", img.Log)
				}
			})
		}
	}
}

func TestKernelNamesFound(t *testing.T) {
	for _, src := range KernelSources() {
		if len(kernelNames(src)) == 0 {
			t.Errorf("%s: no FC_KERNEL functions found", src.Name)
		}
	}
}

// TestCompileNewerArchGivesPTX: a device newer than this NVRTC knows gets
// PTX for the newest architecture it does know, which the driver JITs.
func TestCompileNewerArchGivesPTX(t *testing.T) {
	n := needNVRTC(t)
	archs := n.SupportedArchs()
	if archs == nil {
		t.Skip("this NVRTC does not list its architectures")
	}
	newest := archs[len(archs)-1]
	src, _ := KernelSource("norm.cu")
	img, err := n.Compile(src, newest+30)
	if err != nil {
		t.Fatal(err)
	}
	if img.Kind != PTX || img.Arch != newest || !bytes.Contains(img.Data, []byte(".target sm_"+fmt.Sprint(newest))) {
		t.Errorf("sm_%d: got %v for %d, want PTX for compute_%d", newest+30, img.Kind, img.Arch, newest)
	}
	if img.Data[len(img.Data)-1] != 0 {
		t.Error("PTX image lacks its NUL terminator")
	}
	if _, err := n.Compile(src, 10); err == nil {
		t.Error("sm_10 compiled; want an error naming the oldest supported arch")
	}
}

func TestCompileErrorHasLog(t *testing.T) {
	n := needNVRTC(t)
	src := Source{Name: "broken.cu", Code: "extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }\n"}
	_, err := n.Compile(src, 80)
	var ce *CompileError
	var r NVRTCResult
	if !errors.As(err, &ce) || !errors.As(err, &r) || r != 6 {
		t.Fatalf("Compile(broken) error = %v, want a CompileError wrapping NVRTC_ERROR_COMPILATION", err)
	}
	if ce.Arch != 80 || !strings.Contains(ce.Log, "undefined_name") || !strings.Contains(err.Error(), "broken.cu") {
		t.Errorf("CompileError = %+v; want arch 80 and a log naming undefined_name", ce)
	}
}

func TestLoadNVRTCMissing(t *testing.T) {
	_, err := loadNVRTC([]string{t.TempDir() + "/libnvrtc.so.12", "libnvrtc-does-not-exist.so"})
	if !errors.Is(err, ErrNoNVRTC) || !strings.Contains(err.Error(), "libnvrtc-does-not-exist.so") {
		t.Fatalf("loadNVRTC error = %v, want ErrNoNVRTC listing what was tried", err)
	}
}
