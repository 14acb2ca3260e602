package hip

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// ErrNoHIPRTC is wrapped by every error that means "no usable hipRTC here".
var ErrNoHIPRTC = errors.New("hipRTC (the HIP runtime compiler) not available")

// HIPRTC is a loaded hipRTC. Its methods are safe for concurrent use
// (programs are independent).
type HIPRTC struct {
	api          hiprtcAPI
	Path         string // what was dlopened: a soname or a file path
	Major, Minor int    // as hiprtcVersion reports it: 9.0 from ROCm 5.2's libamdhip64
	// Runtime is the HIP_VERSION of the library hipRTC lives in (ROCm 5),
	// 0 when it is a separate libhiprtc; see Version.
	Runtime int
}

var defaultHIPRTC = sync.OnceValues(func() (*HIPRTC, error) {
	return loadHIPRTC(hiprtcCandidates(osSearchEnv))
})

// LoadHIPRTC returns the process's hipRTC, loading it on first use. It
// needs no device: compiling for any supported target works on a machine
// without an AMD GPU. The error wraps ErrNoHIPRTC and lists what was tried.
func LoadHIPRTC() (*HIPRTC, error) { return defaultHIPRTC() }

func loadHIPRTC(candidates []string) (*HIPRTC, error) {
	var tried []string
	for _, path := range candidates {
		n, err := openHIPRTC(path)
		if err == nil {
			return n, nil
		}
		tried = append(tried, err.Error())
	}
	return nil, fmt.Errorf("%w: tried %s", ErrNoHIPRTC, strings.Join(tried, "; "))
}

// openHIPRTC loads and binds the library at path and reads its version.
// libamdhip64 of ROCm 6 loads but lacks the hiprtc symbols: that is a
// "missing symbol" error and the search goes on.
func openHIPRTC(path string) (*HIPRTC, error) {
	h, err := openLibrary(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n := &HIPRTC{Path: path}
	if err := n.api.bind(h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var major, minor int32
	if err := checkRTC("hiprtcVersion", n.api.hiprtcVersion(&major, &minor)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n.Major, n.Minor = int(major), int(minor)
	var rv int32
	if n.api.hipRuntimeGetVersion != nil && n.api.hipRuntimeGetVersion(&rv) == Success {
		n.Runtime = int(rv)
	}
	return n, nil
}

// Version identifies the compiler for the cache: hiprtcVersion's
// "major.minor", followed by the runtime's HIP version where hipRTC is part
// of libamdhip64 ("9.0-5.2.21153" on Debian bookworm), since ROCm 5's
// hiprtcVersion stays the same across releases.
func (n *HIPRTC) Version() string {
	if n.Runtime != 0 {
		return fmt.Sprintf("%d.%d-%s", n.Major, n.Minor, FormatVersion(n.Runtime))
	}
	return fmt.Sprintf("%d.%d", n.Major, n.Minor)
}

// Source is one HIP (CUDA-dialect) translation unit and the headers it may
// #include; hipRTC gets them by name, as NVRTC does.
type Source struct {
	Name    string
	Code    string
	Headers map[string]string // include name → contents
}

// Image is a compiled AMDGPU code object for one target, loadable with
// hipModuleLoadData.
type Image struct {
	Arch string // the target, "gfx90a"
	Data []byte // an ELF code object or a clang offload bundle holding one
	Log  string // the compiler's warnings, if any
}

// CompileError is a failed compilation with the compiler's log.
type CompileError struct {
	Source string
	Arch   string
	Log    string
	Err    error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("hiprtc: %s for %s: %v\n%s", e.Source, e.Arch, e.Err, strings.TrimSpace(e.Log))
}

func (e *CompileError) Unwrap() error { return e.Err }

// CompileOptions are always passed; they are NVRTC's --fmad=false in clang's
// words: no contraction of a*b+c into a fused multiply-add except where the
// source writes fmaf, so the kernels keep their Go twins' arithmetic.
var CompileOptions = []string{"-ffp-contract=off", "-O3", "-std=c++17"}

// ErrUnsupportedArch is wrapped when hipRTC does not know a target.
var ErrUnsupportedArch = errors.New("target not supported by this hipRTC")

// rocm52Targets are the targets ROCm 5.2's hipRTC compiles for, probed one
// by one on Debian bookworm's libamdhip64-5 (5.2.21153). Given any other
// target (gfx940–942, gfx1100–1103, …), or a feature the target lacks
// (gfx1030:xnack-), it aborts the whole process (SIGABRT in the
// code-object manager) instead of returning an error, so Compile refuses
// those before calling it.
var rocm52Targets = strings.Fields(`gfx600 gfx601 gfx602 gfx700 gfx701 gfx702 gfx703 gfx704 gfx705
	gfx801 gfx802 gfx803 gfx805 gfx810 gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c
	gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036`)

// rocm52Features are the targets that take each feature (LLVM's AMDGPU
// processor table, checked against ROCm 5.2): a feature on any other
// target aborts hipRTC like an unknown target.
var rocm52Features = map[string][]string{
	"xnack":   strings.Fields("gfx801 gfx810 gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx1010 gfx1011 gfx1012 gfx1013"),
	"sramecc": strings.Fields("gfx906 gfx908 gfx90a"),
}

// knownTarget reports whether this hipRTC is known to take arch; true
// when it has no probed list.
func (n *HIPRTC) knownTarget(arch string) bool {
	known := n.SupportedArchs()
	if known == nil {
		return true
	}
	base, feats, _ := strings.Cut(arch, ":")
	if !slices.Contains(known, base) {
		return false
	}
	for f := range strings.SplitSeq(feats, ":") {
		if f != "" && !slices.Contains(rocm52Features[f[:len(f)-1]], base) {
			return false
		}
	}
	return true
}

// SupportedArchs lists the targets this hipRTC is known to accept; nil
// when unknown (only ROCm 5.2's list has been probed: other releases are
// not guarded, and an unknown target may abort the process).
func (n *HIPRTC) SupportedArchs() []string {
	if n.Runtime/100000 == 502 { // HIP 5.2.x
		return slices.Clone(rocm52Targets)
	}
	return nil
}

// Compile builds src for arch, a gcnArchName such as "gfx90a" or
// "gfx90a:sramecc+:xnack-" (the features are kept: they select the code
// object variant). The wavefront size is the target's default (64 on
// gfx9 and older, 32 on gfx10 and later); see WavefrontSize.
func (n *HIPRTC) Compile(src Source, arch string, extra ...string) (*Image, error) {
	if !validArch(arch) {
		return nil, &CompileError{Source: src.Name, Arch: arch, Err: fmt.Errorf("not an AMDGPU target name: %q", arch)}
	}
	if !n.knownTarget(arch) {
		return nil, &CompileError{Source: src.Name, Arch: arch, Err: fmt.Errorf("%w: %s (hipRTC %s)", ErrUnsupportedArch, arch, n.Version())}
	}
	opts := append(append([]string{"--offload-arch=" + arch}, CompileOptions...), extra...)
	img, err := n.compile(src, opts)
	if err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			ce.Arch = arch
		}
		return nil, err
	}
	img.Arch = arch
	return img, nil
}

func (n *HIPRTC) compile(src Source, opts []string) (*Image, error) {
	names, bodies := headerArrays(src.Headers)
	var prog hiprtcProgram
	r := n.api.hiprtcCreateProgram(&prog, src.Code, src.Name, int32(len(names)), ptrOrNil(bodies), ptrOrNil(names))
	runtime.KeepAlive(names)
	runtime.KeepAlive(bodies)
	if err := checkRTC("hiprtcCreateProgram", r); err != nil {
		return nil, err
	}
	defer n.api.hiprtcDestroyProgram(&prog)
	copts := cStrings(opts)
	r = n.api.hiprtcCompileProgram(prog, int32(len(copts)), ptrOrNil(copts))
	runtime.KeepAlive(copts)
	log := n.programLog(prog)
	if r != hiprtcSuccess {
		return nil, &CompileError{Source: src.Name, Log: log, Err: fmt.Errorf("hiprtcCompileProgram: %w", r)}
	}
	var size uint64
	if err := checkRTC("hiprtcGetCodeSize", n.api.hiprtcGetCodeSize(prog, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, &CompileError{Source: src.Name, Log: log, Err: errors.New("hiprtcGetCode: empty code object")}
	}
	data := make([]byte, size)
	if err := checkRTC("hiprtcGetCode", n.api.hiprtcGetCode(prog, &data[0])); err != nil {
		return nil, err
	}
	return &Image{Data: data, Log: log}, nil
}

func (n *HIPRTC) programLog(prog hiprtcProgram) string {
	var size uint64
	if n.api.hiprtcGetProgramLogSize(prog, &size) != hiprtcSuccess || size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	if n.api.hiprtcGetProgramLog(prog, &buf[0]) != hiprtcSuccess {
		return ""
	}
	s, _, _ := bytes.Cut(buf, []byte{0})
	return string(s)
}

// ValidImage reports whether data looks like what hipModuleLoadData
// takes: an ELF code object or a clang offload bundle.
func ValidImage(data []byte) bool {
	return bytes.HasPrefix(data, []byte("\x7fELF")) || bytes.HasPrefix(data, []byte("__CLANG_OFFLOAD_BUNDLE__"))
}

// validArch accepts gfx<hex digits> with optional :sramecc± and :xnack±
// (the only target features AMDGPU code objects have).
func validArch(arch string) bool {
	base, feats, _ := strings.Cut(arch, ":")
	if len(base) < 4 || !strings.HasPrefix(base, "gfx") || strings.Trim(base[3:], "0123456789abcdef") != "" {
		return false
	}
	if feats == "" {
		return true
	}
	for f := range strings.SplitSeq(feats, ":") {
		switch f {
		case "sramecc+", "sramecc-", "xnack+", "xnack-":
		default:
			return false
		}
	}
	return true
}

// WavefrontSize is the wavefront size a target's code is compiled for by
// default, and so the FC_WARP_SIZE of our kernels built for it: 32 on RDNA
// (gfx10xx, gfx11xx, gfx12xx), 64 on GCN and CDNA (gfx9xx and older).
func WavefrontSize(arch string) int {
	base, _, _ := strings.Cut(arch, ":")
	if len(base) >= len("gfx1030") { // four digits: major version 10 or more
		return 32
	}
	return 64
}

// headerArrays returns the include names and bodies as C string arrays,
// sorted by name so the program (and the cache key) is deterministic.
func headerArrays(h map[string]string) (names, bodies []*byte) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
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
