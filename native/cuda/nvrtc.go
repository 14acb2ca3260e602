package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// ErrNoNVRTC is wrapped by every error that means "no usable NVRTC here".
// Kernels cannot be compiled without it; callers fall back to the CPU.
var ErrNoNVRTC = errors.New("NVRTC (the CUDA runtime compiler) not available")

// NVRTC is a loaded libnvrtc. Its methods are safe for concurrent use
// (NVRTC itself is thread-safe across programs).
type NVRTC struct {
	api          nvrtcAPI
	Path         string // what was dlopened: a soname or a file path
	Major, Minor int    // NVRTC's version (11.8 for Debian's libnvrtc11.2)
	archs        []int  // supported SM versions (80 for sm_80), ascending; nil if unknown
}

// defaultNVRTC loads the first usable library of the search order once.
var defaultNVRTC = sync.OnceValues(func() (*NVRTC, error) {
	return loadNVRTC(nvrtcSpec.candidates(osSearchEnv))
})

// LoadNVRTC returns the process's NVRTC, loading it on first use. The error
// wraps ErrNoNVRTC and lists what was tried.
func LoadNVRTC() (*NVRTC, error) { return defaultNVRTC() }

func loadNVRTC(candidates []string) (*NVRTC, error) {
	var tried []string
	for _, path := range candidates {
		n, err := openNVRTC(path)
		if err == nil {
			return n, nil
		}
		tried = append(tried, err.Error())
	}
	return nil, fmt.Errorf("%w: tried %s", ErrNoNVRTC, strings.Join(tried, "; "))
}

// openNVRTC loads and binds the library at path and reads its version.
func openNVRTC(path string) (*NVRTC, error) {
	h, err := openLibrary(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n := &NVRTC{Path: path}
	if err := n.api.bind(h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var major, minor int32
	if err := checkNVRTC("nvrtcVersion", n.api.nvrtcVersion(&major, &minor)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n.Major, n.Minor = int(major), int(minor)
	n.archs = n.supportedArchs()
	return n, nil
}

// Version is "major.minor", e.g. "11.8".
func (n *NVRTC) Version() string { return fmt.Sprintf("%d.%d", n.Major, n.Minor) }

// SupportedArchs lists the SM versions this NVRTC compiles for (ascending,
// 52 for sm_52); nil when the library predates nvrtcGetSupportedArchs.
func (n *NVRTC) SupportedArchs() []int { return slices.Clone(n.archs) }

func (n *NVRTC) supportedArchs() []int {
	if n.api.nvrtcGetNumSupportedArchs == nil || n.api.nvrtcGetSupportedArchs == nil {
		return nil
	}
	var count int32
	if n.api.nvrtcGetNumSupportedArchs(&count) != nvrtcSuccess || count <= 0 || count > 1024 {
		return nil
	}
	archs := make([]int32, count)
	if n.api.nvrtcGetSupportedArchs(&archs[0]) != nvrtcSuccess {
		return nil
	}
	out := make([]int, count)
	for i, a := range archs {
		out[i] = int(a)
	}
	slices.Sort(out)
	return out
}

// Source is one CUDA C translation unit and the headers it may #include
// (NVRTC gets them by name; it searches no directories).
type Source struct {
	Name    string // file name, used in the compiler's messages
	Code    string
	Headers map[string]string // include name → contents
}

// ImageKind says what a compiled image holds.
type ImageKind int

const (
	CUBIN ImageKind = iota // machine code for exactly Image.Arch
	PTX                    // virtual ISA the driver JIT-compiles for its device
)

func (k ImageKind) String() string { return [...]string{"cubin", "ptx"}[k] }

// Image is a compiled module, loadable with cuModuleLoadData.
type Image struct {
	Kind ImageKind
	Arch int    // the SM version compiled for (CUBIN) or the virtual one (PTX)
	Data []byte // a PTX image ends with its NUL terminator, as cuModuleLoadData wants
	Log  string // the compiler's warnings, if any
}

// CompileError is a failed compilation with the compiler's log.
type CompileError struct {
	Source string
	Arch   int
	Log    string
	Err    error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("nvrtc: %s for sm_%d: %v\n%s", e.Source, e.Arch, e.Err, strings.TrimSpace(e.Log))
}

func (e *CompileError) Unwrap() error { return e.Err }

// CompileOptions are always passed: fused multiply-adds only where the
// source writes fmaf (the Go twins depend on it), IEEE division and square
// root, and no device-side debug code.
var CompileOptions = []string{"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--std=c++17"}

// target decides what to build for a device of compute capability arch
// (86 for 8.6): CUBIN for arch itself when this NVRTC knows it and has the
// CUBIN API, else PTX for the newest virtual architecture it knows that is
// not newer than arch (the driver JIT-compiles PTX forward).
func (n *NVRTC) target(arch int) (ImageKind, int, error) {
	hasCubin := n.api.nvrtcGetCUBINSize != nil && n.api.nvrtcGetCUBIN != nil
	if n.archs == nil {
		if hasCubin {
			return CUBIN, arch, nil
		}
		return PTX, arch, nil
	}
	if slices.Contains(n.archs, arch) && hasCubin {
		return CUBIN, arch, nil
	}
	best := -1
	for _, a := range n.archs {
		if a <= arch {
			best = a
		}
	}
	if best < 0 {
		return 0, 0, fmt.Errorf("nvrtc %s cannot build for sm_%d (oldest supported: sm_%d)", n.Version(), arch, n.archs[0])
	}
	return PTX, best, nil
}

// Compile builds src for compute capability arch (e.g. 80) with
// CompileOptions and extra. See target for CUBIN versus PTX.
func (n *NVRTC) Compile(src Source, arch int, extra ...string) (*Image, error) {
	kind, tarch, err := n.target(arch)
	if err != nil {
		return nil, &CompileError{Source: src.Name, Arch: arch, Err: err}
	}
	flag := fmt.Sprintf("--gpu-architecture=sm_%d", tarch)
	if kind == PTX {
		flag = fmt.Sprintf("--gpu-architecture=compute_%d", tarch)
	}
	opts := append(append([]string{flag}, CompileOptions...), extra...)
	img, err := n.compile(src, kind, opts)
	if err != nil {
		if ce, ok := err.(*CompileError); ok {
			ce.Arch = arch
		}
		return nil, err
	}
	img.Arch = tarch
	return img, nil
}

func (n *NVRTC) compile(src Source, kind ImageKind, opts []string) (*Image, error) {
	names, bodies := headerArrays(src.Headers)
	var prog nvrtcProgram
	r := n.api.nvrtcCreateProgram(&prog, src.Code, src.Name, int32(len(names)), ptrOrNil(bodies), ptrOrNil(names))
	runtime.KeepAlive(names)
	runtime.KeepAlive(bodies)
	if err := checkNVRTC("nvrtcCreateProgram", r); err != nil {
		return nil, err
	}
	defer n.api.nvrtcDestroyProgram(&prog)
	copts := cStrings(opts)
	r = n.api.nvrtcCompileProgram(prog, int32(len(copts)), ptrOrNil(copts))
	runtime.KeepAlive(copts)
	log := n.programLog(prog)
	if r != nvrtcSuccess {
		return nil, &CompileError{Source: src.Name, Log: log, Err: fmt.Errorf("nvrtcCompileProgram: %w", r)}
	}
	data, err := n.output(prog, kind)
	if err != nil {
		return nil, err
	}
	return &Image{Kind: kind, Data: data, Log: log}, nil
}

// output reads the CUBIN or the PTX (keeping its trailing NUL).
func (n *NVRTC) output(prog nvrtcProgram, kind ImageKind) ([]byte, error) {
	sizeFn, getFn, name := n.api.nvrtcGetPTXSize, n.api.nvrtcGetPTX, "nvrtcGetPTX"
	if kind == CUBIN {
		sizeFn, getFn, name = n.api.nvrtcGetCUBINSize, n.api.nvrtcGetCUBIN, "nvrtcGetCUBIN"
	}
	var size uint64
	if err := checkNVRTC(name+"Size", sizeFn(prog, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%s: empty output", name)
	}
	buf := make([]byte, size)
	if err := checkNVRTC(name, getFn(prog, &buf[0])); err != nil {
		return nil, err
	}
	return buf, nil
}

func (n *NVRTC) programLog(prog nvrtcProgram) string {
	var size uint64
	if n.api.nvrtcGetProgramLogSize(prog, &size) != nvrtcSuccess || size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	if n.api.nvrtcGetProgramLog(prog, &buf[0]) != nvrtcSuccess {
		return ""
	}
	s, _, _ := bytes.Cut(buf, []byte{0})
	return string(s)
}

// headerArrays returns the include names and bodies as C string arrays,
// sorted by name so the program (and the cache key) is deterministic.
func headerArrays(h map[string]string) (names, bodies []*byte) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		names = append(names, cString(k))
		bodies = append(bodies, cString(h[k]))
	}
	return names, bodies
}

// cString copies s into a NUL-terminated Go byte array. The Go heap does
// not move objects, and callers keep the arrays alive across the C call.
func cString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

func cStrings(ss []string) []*byte {
	out := make([]*byte, len(ss))
	for i, s := range ss {
		out[i] = cString(s)
	}
	return out
}

func ptrOrNil(p []*byte) **byte {
	if len(p) == 0 {
		return nil
	}
	return (**byte)(unsafe.Pointer(&p[0]))
}
