package hip

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// testArchs are the targets every kernel must compile for: Vega 20
// (gfx906, wave64), MI200 (gfx90a, wave64) and RDNA2 (gfx1030, wave32).
// ROCm 5.2's compiler predates RDNA3 (gfx1100) and MI300 (gfx942); see
// TestCompileRefusesUnknownTarget.
var testArchs = []string{"gfx906", "gfx90a", "gfx1030"}

// needHIPRTC returns the system's hipRTC or skips, saying why.
func needHIPRTC(t *testing.T) *HIPRTC {
	t.Helper()
	n, err := LoadHIPRTC()
	if errors.Is(err, ErrNoHIPRTC) {
		t.Skipf("skipping: %v (Debian bookworm: make test-deps installs libamdhip64-5 and libhiprtc-builtins5)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCompileKernels compiles every kernel source for each test target
// and fails on any compiler error; warnings are logged.
func TestCompileKernels(t *testing.T) {
	n := needHIPRTC(t)
	t.Logf("hipRTC %s from %s", n.Version(), n.Path)
	srcs := KernelSources()
	if len(srcs) == 0 {
		t.Fatal("no kernel sources")
	}
	for _, src := range srcs {
		for _, arch := range testArchs {
			t.Run(fmt.Sprintf("%s/%s", src.Name, arch), func(t *testing.T) {
				compileAndCheck(t, n, src, arch)
			})
		}
	}
}

func compileAndCheck(t *testing.T, n *HIPRTC, src Source, arch string) *Image {
	t.Helper()
	img, err := n.Compile(src, arch)
	if err != nil {
		t.Fatal(err)
	}
	if img.Arch != arch || !ValidImage(img.Data) {
		t.Fatalf("image for %s: arch %q, starts % x", arch, img.Arch, img.Data[:min(8, len(img.Data))])
	}
	for _, k := range kernelNames(src) {
		if !bytes.Contains(img.Data, []byte(k)) {
			t.Errorf("code object lacks kernel %s", k)
		}
	}
	if img.Log != "" {
		t.Logf("compiler log:\n%s", img.Log)
	}
	return img
}

// TestCompileWavefrontSize checks that fc_port.h's FC_WARP_SIZE follows the
// target (64 on gfx9, 32 on gfx10+): a probe kernel fails to compile unless
// FC_WARP_SIZE equals WavefrontSize(arch).
func TestCompileWavefrontSize(t *testing.T) {
	n := needHIPRTC(t)
	port := KernelSources()[0].Headers
	for _, arch := range testArchs {
		code := fmt.Sprintf("#include \"fc_port.h\"\nstatic_assert(FC_WARP_SIZE == %d, \"FC_WARP_SIZE\");\nFC_KERNEL void probe(float* x) { x[0] = fc_warp_sum(x[threadIdx.x]); }\n", WavefrontSize(arch))
		if _, err := n.Compile(Source{Name: "wave.cu", Code: code, Headers: port}, arch); err != nil {
			t.Errorf("%s: %v", arch, err)
		}
	}
}

func TestCompileError(t *testing.T) {
	n := needHIPRTC(t)
	_, err := n.Compile(Source{Name: "bad.cu", Code: "extern \"C\" __global__ void k() { undeclared_thing(); }\n"}, "gfx90a")
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Arch != "gfx90a" || !strings.Contains(ce.Log, "undeclared_thing") {
		t.Fatalf("error = %v, want a CompileError whose log names the bad call", err)
	}
	var r HIPRTCResult
	if !errors.As(err, &r) || r != 6 {
		t.Errorf("error = %v, want HIPRTC_ERROR_COMPILATION inside", err)
	}
}

func TestCompileRejectsBadArch(t *testing.T) {
	n := &HIPRTC{} // never reaches the library
	for _, arch := range []string{"", "sm_80", "gfx", "gfx90a:xnack", "gfxzz", "gfx90a:wavefrontsize64+"} {
		if _, err := n.Compile(Source{Name: "x.cu"}, arch); err == nil {
			t.Errorf("Compile(%q) accepted", arch)
		}
	}
}

func TestWavefrontSize(t *testing.T) {
	for arch, want := range map[string]int{"gfx906": 64, "gfx90a:sramecc+:xnack-": 64, "gfx942": 64,
		"gfx1030": 32, "gfx1100": 32, "gfx1201": 32, "gfx803": 64} {
		if got := WavefrontSize(arch); got != want {
			t.Errorf("WavefrontSize(%q) = %d, want %d", arch, got, want)
		}
	}
}

// TestCompileRefusesUnknownTarget: ROCm 5.2's hipRTC aborts the process on
// a target it does not know; Compile must refuse it first, with an error.
func TestCompileRefusesUnknownTarget(t *testing.T) {
	n := needHIPRTC(t)
	if n.SupportedArchs() == nil {
		t.Skipf("hipRTC %s: no probed target list (only ROCm 5.2's is known)", n.Version())
	}
	for _, arch := range []string{"gfx1100", "gfx942", "gfx9999:xnack-", "gfx1030:xnack-", "gfx900:sramecc+"} {
		_, err := n.Compile(Source{Name: "x.cu", Code: "extern \"C\" __global__ void k() {}\n"}, arch)
		if !errors.Is(err, ErrUnsupportedArch) {
			t.Errorf("Compile(%s) = %v, want ErrUnsupportedArch", arch, err)
		}
	}
	if _, err := n.Compile(Source{Name: "x.cu", Code: "extern \"C\" __global__ void k() {}\n"}, "gfx90a:sramecc+:xnack-"); err != nil {
		t.Errorf("gfx90a with features: %v", err)
	}
}
