package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"flowchat/native/cuda"
	"flowchat/native/hip"
)

// TestGPUListing: `flowchat gpu` exits 0 and prints one line per vendor
// and compiler; on a machine without a GPU (CI) it says so in words.
func TestGPUListing(t *testing.T) {
	out, stderr, code := run(t, "gpu")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, prefix := range []string{"CUDA: ", "NVRTC: ", "ROCm: ", "hipRTC: "} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix)).MatchString(out) {
			t.Errorf("no line starting %q in:\n%s", prefix, out)
		}
	}
	_, cerr := cuda.Probe()
	_, herr := hip.Probe()
	if cerr == nil || herr == nil {
		t.Logf("a GPU is present (CUDA: %v, ROCm: %v); the no-device wording is checked by TestGPUReportText", cerr, herr)
		return
	}
	if !strings.Contains(out, "CUDA: no device: no NVIDIA GPU found") || !strings.Contains(out, "ROCm: no device: no AMD GPU found") ||
		!strings.Contains(out, "No CUDA/ROCm device or library was found: models run on the CPU.") {
		t.Errorf("no-device listing:\n%s", out)
	}
	if strings.Contains(out, "running on CPU") {
		t.Errorf("the probes' own tail leaked into the listing:\n%s", out)
	}
}

// TestGPUReportText: the listing of a machine with devices of both
// vendors, and of one with neither library.
func TestGPUReportText(t *testing.T) {
	r := gpuReport{
		cuda: cuda.Info{DriverVersion: 12040, Devices: []cuda.Device{
			{Ordinal: 0, Name: "NVIDIA H100 80GB HBM3", TotalMem: 80 << 30, ComputeMajor: 9, ComputeMinor: 0},
			{Ordinal: 1, Name: "NVIDIA RTX 4090", TotalMem: 24 << 30, ComputeMajor: 8, ComputeMinor: 9},
		}},
		cudaMem:  []memReading{{free: 79 << 30, total: 80 << 30}, {err: errors.New("CUDA_ERROR_OUT_OF_MEMORY (2)"), total: 24 << 30}},
		nvrtcErr: fmt.Errorf("%w: tried libnvrtc.so.12: not found", cuda.ErrNoNVRTC),
		cublas:   &cuda.CUBLAS{Path: "libcublas.so.12"},
		hip:      hip.Info{RuntimeVersion: 60241134, Devices: []hip.Device{{Ordinal: 0, Name: "AMD Instinct MI210", TotalMem: 64 << 30, Arch: "gfx90a:sramecc+:xnack-", WarpSize: 64}}},
		hipMem:   []memReading{{free: 32 << 30, total: 64 << 30}},
		hipRTErr: fmt.Errorf("%w: tried libhiprtc.so: not found", hip.ErrNoHIPRTC),
	}
	var b bytes.Buffer
	printGPUReport(&b, r)
	want := `CUDA: driver 12.4, 2 device(s)
  cuda:0  NVIDIA H100 80GB HBM3  compute 9.0 (sm_90)  79.0 GiB free of 80.0 GiB
  cuda:1  NVIDIA RTX 4090  compute 8.9 (sm_89)  24.0 GiB total, free unknown (CUDA_ERROR_OUT_OF_MEMORY (2))
NVRTC: not found: NVRTC (the CUDA runtime compiler) not available: tried libnvrtc.so.12: not found
cuBLAS: libcublas.so.12 (prefill products; FLOWCHAT_CUBLAS=off for flowchat's tiled kernels)
ROCm: HIP 6.2.41134, 1 device(s)
  hip:0  AMD Instinct MI210  gfx90a:sramecc+:xnack-  wavefront 64  32.0 GiB free of 64.0 GiB
hipRTC: not found: hipRTC (the HIP runtime compiler) not available: tried libhiprtc.so: not found
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	printGPUReport(&b, gpuReport{
		cudaErr:  fmt.Errorf("%w: libcuda.so.1 not loadable (no such file); running on CPU", cuda.ErrNoGPU),
		hipErr:   fmt.Errorf("%w: libamdhip64.so not loadable (no such file); running on CPU", hip.ErrNoGPU),
		nvrtcErr: cuda.ErrNoNVRTC, hipRTErr: hip.ErrNoHIPRTC, cublasErr: cuda.ErrNoCUBLAS,
	})
	want = `CUDA: no device: no NVIDIA GPU found: libcuda.so.1 not loadable (no such file)
NVRTC: not found: NVRTC (the CUDA runtime compiler) not available
cuBLAS: not used, prefill products run flowchat's tiled kernels: cuBLAS not available
ROCm: no device: no AMD GPU found: libamdhip64.so not loadable (no such file)
hipRTC: not found: hipRTC (the HIP runtime compiler) not available

No CUDA/ROCm device or library was found: models run on the CPU. (flowchat gpu compile checks the kernels without a GPU.)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

var compiledLine = regexp.MustCompile(`^(\S+) +(\S+\.cu) +ok \(`)

// checkCompiled: one "ok" line per (target, source), in that order.
func checkCompiled(t *testing.T, out string, targets []string, sources []string) {
	t.Helper()
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if m := compiledLine.FindStringSubmatch(l); m != nil {
			got = append(got, m[1]+" "+m[2])
		}
	}
	var want []string
	for _, a := range targets {
		for _, s := range sources {
			want = append(want, a+" "+s)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("compiled pairs:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
	if !strings.Contains(out, fmt.Sprintf("all %d compiled\n", len(want))) {
		t.Errorf("no closing count in:\n%s", out)
	}
}

func cudaSourceNames() (names []string) {
	for _, s := range cuda.KernelSources() {
		names = append(names, s.Name)
	}
	return names
}

// TestGPUCompileNVRTC: what make test runs: every kernel for sm_70 … sm_90
// with the NVRTC installed here (CUDA 11.8 from Debian's libnvrtc11.2),
// each to CUBIN for exactly that architecture.
func TestGPUCompileNVRTC(t *testing.T) {
	if _, err := cuda.LoadNVRTC(); err != nil {
		t.Skipf("skipping: %v (make test-deps installs it as root on Debian bookworm)", err)
	}
	out, stderr, code := run(t, "gpu", "compile", "--arch", "sm_70,sm_80,sm_86,sm_89,sm_90")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr, out)
	}
	checkCompiled(t, out, defaultCUDAArchs, cudaSourceNames())
	for _, a := range defaultCUDAArchs {
		if n := strings.Count(out, "(cubin for "+a+","); n != len(cudaSourceNames()) {
			t.Errorf("%s: %d CUBIN images, want %d", a, n, len(cudaSourceNames()))
		}
	}
}

// TestGPUCompileHIP: --hip-arch (and issue 16's --backend hip) compile
// every kernel with hipRTC (ROCm 5.2's, from bookworm's libamdhip64-5).
func TestGPUCompileHIP(t *testing.T) {
	if _, err := hip.LoadHIPRTC(); err != nil {
		t.Skipf("skipping: %v (make test-deps installs ROCm 5.2's hipRTC on Debian bookworm)", err)
	}
	for _, args := range [][]string{{"--hip-arch", "gfx906,gfx90a,gfx1030"}, {"--backend", "hip"}} {
		out, stderr, code := run(t, append([]string{"gpu", "compile"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %s\n%s", args, code, stderr, out)
		}
		checkCompiled(t, out, defaultHIPArchs, cudaSourceNames())
	}
}

// TestGPUCompileFailurePrintsLog: a source NVRTC rejects gets a FAILED
// line with the compiler's log under it, and the command exits 1.
func TestGPUCompileFailurePrintsLog(t *testing.T) {
	if _, err := cuda.LoadNVRTC(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	good := cuda.KernelSources()[0]
	bad := cuda.Source{Name: "broken.cu", Code: "extern \"C\" __global__ void k(float* y) { y[0] = undeclared_name; }\n"}
	var b bytes.Buffer
	failed, total, err := compileCUDA(&b, []int{80}, []cuda.Source{good, bad})
	if err != nil || failed != 1 || total != 2 {
		t.Fatalf("failed %d of %d, err %v\n%s", failed, total, err, b.String())
	}
	out := b.String()
	if !regexp.MustCompile(`(?m)^sm_80 +`+regexp.QuoteMeta(good.Name)+` +ok \(cubin for sm_80`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^sm_80 +broken\.cu +FAILED: nvrtc: broken\.cu for sm_80: `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^    .*undeclared_name.*$`).MatchString(out) {
		t.Errorf("output:\n%s", out)
	}

	// A target NVRTC cannot build for: one FAILED line per source, exit 1.
	out, stderr, code := run(t, "gpu", "compile", "--arch", "sm_20")
	ns := len(cudaSourceNames())
	if code != 1 || strings.Count(out, "FAILED: nvrtc: ") != ns || !strings.Contains(stderr, fmt.Sprintf("kernel compilation failed: %d of %d", ns, ns)) {
		t.Errorf("sm_20: exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
	}
}

// TestGPUCompileTargets: --arch takes sm_XY and gfx names (sorted to
// their compiler), --hip-arch adds hipRTC targets, --backend picks the
// defaults, and anything else is a usage error (exit 2).
func TestGPUCompileTargets(t *testing.T) {
	for _, c := range []struct {
		arch, hipArch, backend string
		sm                     []int
		gfx                    []string
	}{
		{"", "", "", []int{70, 80, 86, 89, 90}, nil},
		{"", "", "hip", nil, []string{"gfx906", "gfx90a", "gfx1030"}},
		{"sm_80, 90,gfx90a", "", "", []int{80, 90}, []string{"gfx90a"}},
		{"", "gfx1030", "", nil, []string{"gfx1030"}},
		{"sm_86", "gfx906", "", []int{86}, []string{"gfx906"}},
	} {
		sm, gfx, err := compileTargets(c.arch, c.hipArch, c.backend)
		if err != nil || fmt.Sprint(sm) != fmt.Sprint(c.sm) || fmt.Sprint(gfx) != fmt.Sprint(c.gfx) {
			t.Errorf("%q %q %q: %v %v %v; want %v %v", c.arch, c.hipArch, c.backend, sm, gfx, err, c.sm, c.gfx)
		}
	}
	for _, args := range [][]string{{"--arch", "sm_x"}, {"--arch", "volta"}, {"--backend", "metal"}, {"extra"}} {
		_, stderr, code := run(t, append([]string{"gpu", "compile"}, args...)...)
		if code != 2 || !strings.HasPrefix(stderr, "flowchat: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, stderr, code := run(t, "gpu", "nope"); code != 2 || !strings.Contains(stderr, `unknown gpu subcommand "nope"`) {
		t.Errorf("gpu nope: exit %d, stderr %q", code, stderr)
	}
}
