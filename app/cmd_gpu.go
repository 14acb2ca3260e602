package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"flowchat/native/cuda"
	"flowchat/native/hip"
)

func init() {
	register(command{name: "gpu", summary: "list CUDA and ROCm devices, drivers and runtime compilers; gpu compile checks the kernels", run: cmdGPU})
}

// gpuReport is what `flowchat gpu` found: each vendor's devices (with free
// memory) or the reason there are none, and each runtime compiler or the
// reason it is missing. Gathered by probeGPUs, printed by printGPUReport,
// so the printing is tested on made-up machines.
type gpuReport struct {
	cuda     cuda.Info
	cudaErr  error
	cudaMem  []memReading // by device, as cuda.Devices
	nvrtc    *cuda.NVRTC
	nvrtcErr error
	hip      hip.Info
	hipErr   error
	hipMem   []memReading
	hiprtc   *hip.HIPRTC
	hipRTErr error

	// cuBLAS, optional (neither set: not probed, no line).
	cublas    *cuda.CUBLAS
	cublasErr error
}

type memReading struct {
	free, total uint64
	err         error
}

func probeGPUs() gpuReport {
	var r gpuReport
	if r.cuda, r.cudaErr = cuda.Probe(); r.cudaErr == nil {
		for _, d := range r.cuda.Devices {
			var m memReading
			m.free, m.total, m.err = cuda.MemInfo(d.Ordinal)
			r.cudaMem = append(r.cudaMem, m)
		}
	}
	r.nvrtc, r.nvrtcErr = cuda.LoadNVRTC()
	r.cublas, r.cublasErr = cuda.LoadCUBLAS()
	if r.hip, r.hipErr = hip.Probe(); r.hipErr == nil {
		for _, d := range r.hip.Devices {
			var m memReading
			m.free, m.total, m.err = hip.MemInfo(d.Ordinal)
			r.hipMem = append(r.hipMem, m)
		}
	}
	r.hiprtc, r.hipRTErr = hip.LoadHIPRTC()
	return r
}

func cmdGPU(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "compile" {
		return cmdGPUCompile(args[1:], stdout, stderr)
	}
	fs := newFlags("gpu", stdout, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unknown gpu subcommand %q (want: flowchat gpu, or flowchat gpu compile)", errUsage, fs.Arg(0))
	}
	printGPUReport(stdout, probeGPUs())
	return nil
}

// printGPUReport lists devices of both vendors, then the compilers, then
// one closing line when there is no device at all.
func printGPUReport(w io.Writer, r gpuReport) {
	if r.cudaErr != nil {
		fmt.Fprintf(w, "CUDA: no device: %s\n", noGPUReason(r.cudaErr))
	} else {
		fmt.Fprintf(w, "CUDA: driver %s, %d device(s)\n", cuda.FormatVersion(r.cuda.DriverVersion), len(r.cuda.Devices))
		for i, d := range r.cuda.Devices {
			fmt.Fprintf(w, "  cuda:%d  %s  compute %d.%d (sm_%d%d)  %s\n", d.Ordinal, d.Name,
				d.ComputeMajor, d.ComputeMinor, d.ComputeMajor, d.ComputeMinor, memText(r.cudaMem[i], d.TotalMem))
		}
	}
	if r.nvrtcErr != nil {
		fmt.Fprintf(w, "NVRTC: not found: %s\n", noGPUReason(r.nvrtcErr))
	} else {
		fmt.Fprintf(w, "NVRTC: %s (%s)%s\n", r.nvrtc.Version(), r.nvrtc.Path, archRange(r.nvrtc.SupportedArchs()))
	}
	printCUBLAS(w, r)
	if r.hipErr != nil {
		fmt.Fprintf(w, "ROCm: no device: %s\n", noGPUReason(r.hipErr))
	} else {
		fmt.Fprintf(w, "ROCm: HIP %s, %d device(s)\n", hip.FormatVersion(r.hip.RuntimeVersion), len(r.hip.Devices))
		for i, d := range r.hip.Devices {
			fmt.Fprintf(w, "  hip:%d  %s  %s  wavefront %d  %s\n", d.Ordinal, d.Name, cmpOr(d.Arch, "unknown target"),
				d.WarpSize, memText(r.hipMem[i], d.TotalMem))
		}
	}
	if r.hipRTErr != nil {
		fmt.Fprintf(w, "hipRTC: not found: %s\n", noGPUReason(r.hipRTErr))
	} else {
		fmt.Fprintf(w, "hipRTC: %s (%s)\n", r.hiprtc.Version(), r.hiprtc.Path)
	}
	if len(r.cuda.Devices)+len(r.hip.Devices) == 0 || r.cudaErr != nil && r.hipErr != nil {
		fmt.Fprintln(w, "\nNo CUDA/ROCm device or library was found: models run on the CPU. (flowchat gpu compile checks the kernels without a GPU.)")
	}
}

// noGPUReason drops the "running on CPU" tail the probes add: here the
// closing line says what happens.
func noGPUReason(err error) string {
	s := strings.ReplaceAll(err.Error(), "; running on CPU", "")
	if i := strings.Index(s, "; tried "); i < 0 && len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

func memText(m memReading, total uint64) string {
	if m.err != nil {
		return fmt.Sprintf("%s total, free unknown (%v)", gibText(total), m.err)
	}
	return fmt.Sprintf("%s free of %s", gibText(m.free), gibText(m.total))
}

func gibText(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func archRange(a []int) string {
	if len(a) == 0 {
		return ""
	}
	return fmt.Sprintf(", sm_%d … sm_%d", a[0], a[len(a)-1])
}

// Default targets of gpu compile: Volta to Hopper, and the three AMD
// targets ROCm 5.2's hipRTC is checked on (Vega 20, MI200, RDNA2).
var (
	defaultCUDAArchs = []string{"sm_70", "sm_80", "sm_86", "sm_89", "sm_90"}
	defaultHIPArchs  = []string{"gfx906", "gfx90a", "gfx1030"}
)

// errCompileFailed marks a gpu compile run in which some compilation
// failed (each failure is already printed with its log).
var errCompileFailed = errors.New("kernel compilation failed")

func cmdGPUCompile(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gpu compile", stdout, stderr)
	archs := fs.String("arch", "", "targets, comma-separated: sm_XY for NVRTC, gfxNNN for hipRTC (default "+strings.Join(defaultCUDAArchs, ",")+"; with --backend hip "+strings.Join(defaultHIPArchs, ",")+")")
	hipArchs := fs.String("hip-arch", "", "hipRTC targets, comma-separated, e.g. "+strings.Join(defaultHIPArchs, ","))
	backend := fs.String("backend", "", "cuda or hip: which compiler --arch means when it is left out (default cuda)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: gpu compile takes no arguments (got %q)", errUsage, fs.Arg(0))
	}
	sm, gfx, err := compileTargets(*archs, *hipArchs, *backend)
	if err != nil {
		return err
	}
	failed, total := 0, 0
	if len(sm) > 0 {
		f, n, err := compileCUDA(stdout, sm, cuda.KernelSources())
		if err != nil {
			return err
		}
		failed, total = failed+f, total+n
	}
	if len(gfx) > 0 {
		f, n, err := compileHIP(stdout, gfx, hip.KernelSources())
		if err != nil {
			return err
		}
		failed, total = failed+f, total+n
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d (source, target) pairs", errCompileFailed, failed, total)
	}
	fmt.Fprintf(stdout, "all %d compiled\n", total)
	return nil
}

// compileTargets sorts the requested targets by compiler: sm numbers (70
// for sm_70) for NVRTC and gfx names for hipRTC.
func compileTargets(archs, hipArchs, backend string) (sm []int, gfx []string, err error) {
	switch backend {
	case "", "cuda":
	case "hip", "rocm":
	default:
		return nil, nil, fmt.Errorf("%w: --backend %q: want cuda or hip", errUsage, backend)
	}
	list := splitList(archs)
	if len(list) == 0 && hipArchs == "" {
		list = defaultCUDAArchs
		if backend == "hip" || backend == "rocm" {
			list = defaultHIPArchs
		}
	}
	for _, a := range append(list, splitList(hipArchs)...) {
		if strings.HasPrefix(a, "gfx") {
			gfx = append(gfx, a)
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(a, "sm_"))
		if err != nil || n < 10 || n > 200 {
			return nil, nil, fmt.Errorf("%w: target %q: want sm_XY (e.g. sm_80) or gfxNNN (e.g. gfx90a)", errUsage, a)
		}
		sm = append(sm, n)
	}
	return sm, gfx, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// compileCUDA compiles every source for every sm target with the NVRTC
// found, one line per pair; failed counts the pairs that did not compile
// (a missing NVRTC is an error of its own).
func compileCUDA(w io.Writer, archs []int, srcs []cuda.Source) (failed, total int, err error) {
	n, err := cuda.LoadNVRTC()
	if err != nil {
		return 0, 0, fmt.Errorf("gpu compile: %w", err)
	}
	fmt.Fprintf(w, "NVRTC %s (%s)\n", n.Version(), n.Path)
	for _, arch := range archs {
		for _, src := range srcs {
			img, err := n.Compile(src, arch)
			total++
			if printCompiled(w, fmt.Sprintf("sm_%d", arch), src.Name, err) {
				failed++
				continue
			}
			fmt.Fprintf(w, " (%s for %s_%d, %d bytes)\n", img.Kind, map[cuda.ImageKind]string{cuda.CUBIN: "sm", cuda.PTX: "compute"}[img.Kind], img.Arch, len(img.Data))
		}
	}
	return failed, total, nil
}

func compileHIP(w io.Writer, archs []string, srcs []hip.Source) (failed, total int, err error) {
	n, err := hip.LoadHIPRTC()
	if err != nil {
		return 0, 0, fmt.Errorf("gpu compile: %w", err)
	}
	fmt.Fprintf(w, "hipRTC %s (%s)\n", n.Version(), n.Path)
	for _, arch := range archs {
		for _, src := range srcs {
			img, err := n.Compile(src, arch)
			total++
			if printCompiled(w, arch, src.Name, err) {
				failed++
				continue
			}
			fmt.Fprintf(w, " (code object, %d bytes)\n", len(img.Data))
		}
	}
	return failed, total, nil
}

// printCompiled starts a result line: "sm_80 matmul.cu ok" (the caller
// ends it), or the failure and the compiler's log, indented; it reports
// whether the pair failed.
func printCompiled(w io.Writer, target, source string, err error) bool {
	fmt.Fprintf(w, "%-8s %-10s ", target, source)
	if err == nil {
		fmt.Fprint(w, "ok")
		return false
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	fmt.Fprintf(w, "FAILED: %s\n", lines[0])
	for _, l := range slices.DeleteFunc(lines[1:], func(s string) bool { return strings.TrimSpace(s) == "" }) {
		fmt.Fprintf(w, "    %s\n", l)
	}
	return true
}

// printCUBLAS says which path prefill-shaped matrix products take on CUDA.
func printCUBLAS(w io.Writer, r gpuReport) {
	switch {
	case r.cublas != nil:
		fmt.Fprintf(w, "cuBLAS: %s (prefill products; FLOWCHAT_CUBLAS=off for flowchat's tiled kernels)\n", r.cublas.Path)
	case r.cublasErr != nil:
		fmt.Fprintf(w, "cuBLAS: not used, prefill products run flowchat's tiled kernels: %s\n", noGPUReason(r.cublasErr))
	}
}
