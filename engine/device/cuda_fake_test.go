//go:build linux

package device

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"flowchat/engine/ggml"
	"flowchat/native/cuda"
)

// The CUDA device's host logic (engine/device/gpu.go over native/cuda)
// runs here against native/cuda's fake driver built with FAKE_KERNELS: the
// kernels are compiled by the real NVRTC, loaded as modules by the fake,
// and executed on the host by the CPU shim from the same .cu sources. The
// driver is chosen once per process, so TestMain points FLOWCHAT_LIBCUDA
// at the fake before anything probes; the tests that need another driver
// (none at all, one without the compute set) run as child processes.

const childEnv = "FLOWCHAT_DEVICE_TEST_CHILD"

var (
	fakePath string // the fake libcuda with kernels, "" when it could not be built
	fakeSkip string // why not
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "flowchat-device-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir) // the kernel cache starts empty
	// The tiled kernels, whatever is installed (cuBLAS: cuda_fake_cublas_test.go).
	os.Setenv("FLOWCHAT_CUBLAS", "off")
	fakePath, fakeSkip = buildFakeDriver(dir, "FAKE_KERNELS")
	if fakePath != "" {
		os.Setenv("FLOWCHAT_LIBCUDA", fakePath)
	}
	fakeHIPPath, fakeHIPSkip = buildFakeHIP(dir)
	if fakeHIPPath != "" {
		os.Setenv("FLOWCHAT_LIBAMDHIP64", fakeHIPPath)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// nativeTestdata is native/cuda's testdata, which holds the fake and the shim.
const nativeTestdata = "../../native/cuda/testdata"

// buildFakeDriver compiles the fake libcuda (with the kernels when defines
// has FAKE_KERNELS) with g++, a test tool only: the packages stay cgo-free.
func buildFakeDriver(dir string, defines ...string) (path, skip string) {
	if _, err := exec.LookPath("g++"); err != nil {
		return "", "g++ not found; cannot build native/cuda's fake driver"
	}
	path = filepath.Join(dir, fmt.Sprintf("libfakecuda%d.so", len(defines)+len(strings.Join(defines, ""))))
	args := []string{"-shared", "-fPIC", "-O1", "-pthread", "-ffp-contract=off", "-DFC_WARP_SIZE=32", "-DFAKE_MINOR1=0",
		"-I../../native/cuda/kernels", "-I" + nativeTestdata + "/cpushim", "-o", path, "-x", "c", nativeTestdata + "/fakecuda.c"}
	for _, d := range defines {
		args = append(args, "-D"+d)
		if d == "FAKE_KERNELS" {
			args = append(args, "-x", "c++", "-std=c++17", nativeTestdata+"/fakekernels.cpp")
		}
	}
	if msg, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		panic(fmt.Sprintf("g++ %s: %v\n%s", strings.Join(args, " "), err, msg))
	}
	return path, ""
}

// openFakeCUDA opens fake device 0 (compute 8.9, 24 GiB, a third free).
func openFakeCUDA(t *testing.T) Device {
	t.Helper()
	if fakePath == "" {
		t.Skip("skipping: " + fakeSkip)
	}
	if _, err := cuda.LoadNVRTC(); err != nil {
		t.Skipf("skipping: the CUDA device compiles its kernels with NVRTC: %v", err)
	}
	d, err := OpenCUDA(0)
	if err != nil {
		t.Fatalf("OpenCUDA(0) on the fake driver: %v", err)
	}
	return d
}

type fakeHooks struct {
	allocs, objects, launches func() int32
	retained                  func(int32) int32
}

func hooks(t *testing.T) fakeHooks {
	h, err := purego.Dlopen(fakePath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var f fakeHooks
	purego.RegisterLibFunc(&f.allocs, h, "fakeAllocs")
	purego.RegisterLibFunc(&f.objects, h, "fakeObjects")
	purego.RegisterLibFunc(&f.launches, h, "fakeKernelLaunches")
	purego.RegisterLibFunc(&f.retained, h, "fakeRetained")
	return f
}

func f32b(f []float32) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))...)
}

func bf32(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(b)), b)
	return f
}

// TestCUDAFakeMemory: allocations count against the driver's free memory
// and come back on Free, copies both ways and within the device keep
// every byte (slices included), too large an allocation is
// ErrOutOfMemory carrying CUDA_ERROR_OUT_OF_MEMORY, and Close leaves no
// allocation, stream, module or context reference behind.
func TestCUDAFakeMemory(t *testing.T) {
	d := openFakeCUDA(t)
	h := hooks(t)
	if !strings.HasPrefix(d.Name(), "cuda:0 (Fake GPU 0)") {
		t.Errorf("Name() = %q", d.Name())
	}
	free0, total, err := d.MemInfo()
	if err != nil || total != 24<<30 || free0 != 8<<30 {
		t.Fatalf("MemInfo = %d, %d, %v; want 8 GiB free of 24 GiB", free0, total, err)
	}
	const n = 1 << 20
	a, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.Alloc(n)
	if free, _, _ := d.MemInfo(); free != free0-2*n {
		t.Errorf("free after 2 MiB: %d, want %d", free, free0-2*n)
	}
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	must(t, d.Write(a, src))
	must(t, d.Copy(b.Slice(1000, 5000), a.Slice(20000, 5000)))
	got := make([]byte, 5000)
	must(t, d.Read(got, b.Slice(1000, 5000)))
	if string(got) != string(src[20000:25000]) {
		t.Error("device copy between slices changed the bytes")
	}
	whole := make([]byte, n)
	must(t, d.Read(whole, a))
	if string(whole) != string(src) {
		t.Error("write then read changed the bytes")
	}

	_, err = d.Alloc(9 << 30)
	var r cuda.Result
	if !errors.Is(err, ErrOutOfMemory) || !errors.As(err, &r) || r != cuda.ErrorOutOfMemory {
		t.Errorf("Alloc(9 GiB) of 8 free: %v, want ErrOutOfMemory with CUDA_ERROR_OUT_OF_MEMORY", err)
	}
	d.Free(a)
	d.Free(b)
	if free, _, _ := d.MemInfo(); free != free0 {
		t.Errorf("free after Free: %d, want %d", free, free0)
	}
	must(t, d.Close())
	if h.allocs() != 0 || h.objects() != 0 || h.retained(0) != 0 {
		t.Errorf("after Close: %d allocations, %d streams/events/modules, %d context references",
			h.allocs(), h.objects(), h.retained(0))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// randHalf is a finite float16 in ±[2⁻³, 1) as bits.
func randHalf(rng *rand.Rand) uint16 {
	return uint16(rng.IntN(2))<<15 | uint16(0x3000+rng.IntN(0x0c00))
}

// randWeights is rows rows of n weights of type wt: random GGML blocks
// with finite float16 scales.
func randWeights(rng *rand.Rand, wt WeightType, n, rows int) []byte {
	var b []byte
	half := func(h uint16) { b = append(b, byte(h), byte(h>>8)) }
	for range rows {
		switch wt {
		case F32:
			for range n {
				b = append(b, f32b([]float32{float32(rng.NormFloat64())})...)
			}
		case F16:
			for range n {
				half(randHalf(rng))
			}
		case Q8_0, Q4_0:
			q := 32
			if wt == Q4_0 {
				q = 16
			}
			for range n / 32 {
				half(randHalf(rng))
				for range q {
					b = append(b, byte(rng.IntN(256)))
				}
			}
		default: // the other types as ggml's reference quantizer makes them
			gt := ggmlTypeOf(wt)
			row := make([]byte, gt.RowSize(n))
			ggml.QuantizeRow(gt, randFloats(rng, n), row)
			b = append(b, row...)
		}
	}
	return b
}

func ggmlTypeOf(wt WeightType) ggml.Type {
	for gt, t := range kernelTypes {
		if t == wt {
			return gt
		}
	}
	panic(fmt.Sprintf("no GGML type for %v", wt))
}

func randFloats(rng *rand.Rand, n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	return f
}

// op is one kernel call over buffers allocated on a device with the
// given initial bytes.
type op struct {
	name string
	bufs [][]byte
	run  func(d Device, m []Mem) error
	ulps uint32 // allowed distance from the stand-in per float
	// scratch is the index of a buffer the kernel may use as it likes
	// (attention's scores; the stand-in leaves it alone), 0 for none.
	scratch  int
	copyOnly bool // a device copy, no kernel (StoreKV into an F32 cache)
}

func kernelOps(rng *rand.Rand) []op {
	const rows, cols = 13, 3
	var ops []op
	for _, wt := range cuda.WeightTypes() {
		n := 96
		if wt.BlockSize() > 32 {
			n = 512
		}
		ops = append(ops, op{name: fmt.Sprintf("MatMul/%v", wt),
			bufs: [][]byte{randWeights(rng, wt, n, rows), f32b(randFloats(rng, n*cols)), make([]byte, 4*rows*cols)},
			run:  func(d Device, m []Mem) error { return d.MatMul(wt, m[0], m[1], m[2], n, rows, cols) }})
	}
	const nRMS, rowsRMS = 67, 3
	ops = append(ops, op{name: "RMSNorm", bufs: [][]byte{f32b(randFloats(rng, nRMS*rowsRMS)), f32b(randFloats(rng, nRMS)), make([]byte, 4*nRMS*rowsRMS)},
		run: func(d Device, m []Mem) error { return d.RMSNorm(m[0], m[1], m[2], nRMS, rowsRMS, 1e-5) }})
	const tokens, heads, headDim, stride = 3, 4, 16, 4*16 + 8
	pos := []int32{0, 7, 1000}
	for _, neox := range []bool{false, true} {
		ops = append(ops, op{name: fmt.Sprintf("RoPE/neox=%v", neox), ulps: 1,
			bufs: [][]byte{f32b(randFloats(rng, tokens*stride)), unsafe.Slice((*byte)(unsafe.Pointer(&pos[0])), 4*len(pos))},
			run: func(d Device, m []Mem) error {
				return d.RoPE(m[0], m[1], tokens, stride, heads, headDim, 12, 10000, 1, neox)
			}})
	}
	const nAct = 1001
	ops = append(ops, op{name: "SiLUMul", ulps: 1, bufs: [][]byte{make([]byte, 4*nAct), f32b(randFloats(rng, nAct)), f32b(randFloats(rng, nAct))},
		run: func(d Device, m []Mem) error { return d.SiLUMul(m[0], m[1], m[2], nAct) }})
	ops = append(ops, op{name: "Add/slice", bufs: [][]byte{f32b(randFloats(rng, nAct)), f32b(randFloats(rng, nAct))},
		run: func(d Device, m []Mem) error { return d.Add(m[0].Floats(10, 500), m[1].Floats(301, 500), 500) }})
	const nKV, hd, nHead, nKVHead = 9, 32, 4, 2
	kvStride := nKVHead * hd
	for _, kv := range []WeightType{F32, F16, Q8_0} {
		const nStore = 1024
		ops = append(ops, op{name: fmt.Sprintf("StoreKV/%v", kv), copyOnly: kv == F32,
			bufs: [][]byte{f32b(randFloats(rng, nStore)), make([]byte, kv.RowBytes(nStore))},
			run:  func(d Device, m []Mem) error { return d.StoreKV(kv, m[0], m[1], nStore) }})
		ops = append(ops, op{name: fmt.Sprintf("Attn/GQA/%v", kv), scratch: 3,
			bufs: [][]byte{f32b(randFloats(rng, nHead*hd)), randWeights(rng, kv, kvStride, nKV), randWeights(rng, kv, kvStride, nKV),
				make([]byte, 4*nHead*nKV), make([]byte, 4*nHead*hd)},
			run: func(d Device, m []Mem) error {
				return d.Attn(kv, m[0], m[1], m[2], m[3], m[4], nKV, hd, nHead, nKVHead, kvStride, 1/float32(math.Sqrt(hd)))
			}})
	}
	return ops
}

// runOp allocates o's buffers on d, runs it and reads every buffer back.
func runOp(t *testing.T, d Device, o op) [][]byte {
	t.Helper()
	mems := make([]Mem, len(o.bufs))
	for i, b := range o.bufs {
		m, err := d.Alloc(len(b))
		must(t, err)
		defer d.Free(m)
		must(t, d.Write(m, b))
		mems[i] = m
	}
	must(t, o.run(d, mems))
	out := make([][]byte, len(mems))
	for i, m := range mems {
		out[i] = make([]byte, m.Bytes())
		must(t, d.Read(out[i], m))
	}
	return out
}

func ulpDistance(a, b float32) uint32 {
	x, y := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if x>>31 != 0 {
		x = 0x80000000 - x
	}
	if y>>31 != 0 {
		y = 0x80000000 - y
	}
	if x > y {
		return uint32(x - y)
	}
	return uint32(y - x)
}

// TestCUDAFakeKernelsMatchStandIn: every operation of the CUDA device,
// through NVRTC, module loading, the launchers' grids and argument lists
// and the fake's cuLaunchKernel, gives what the stand-in (the twins) gives:
// bit for bit, or within one ulp where RoPE and SiLU take cos/sin/exp
// from glibc (the shim) rather than Go (the twins). Each launch must have
// happened on the fake (but for a plain copy).
func TestCUDAFakeKernelsMatchStandIn(t *testing.T) {
	d := openFakeCUDA(t)
	defer d.Close()
	kernelsMatchStandIn(t, d, 32, hooks(t).launches)
}

// kernelsMatchStandIn runs every operation on d and on a stand-in at
// warp size warp; launches counts the fake library's kernel runs.
func kernelsMatchStandIn(t *testing.T, d Device, warp int, launches func() int32) {
	ref := NewStandIn("cpu:0", 0, warp)
	for _, o := range kernelOps(rand.New(rand.NewPCG(1, 2))) {
		before := launches()
		got, want := runOp(t, d, o), runOp(t, ref, o)
		if launches() == before && !o.copyOnly {
			t.Errorf("%s: no kernel ran on the fake driver", o.name)
		}
		for i := range got {
			if i == o.scratch && i > 0 {
				continue
			}
			g, w := bf32(got[i]), bf32(want[i])
			bad := 0
			for j := range g {
				if ulpDistance(g[j], w[j]) > o.ulps || math.IsNaN(float64(g[j])) != math.IsNaN(float64(w[j])) {
					if bad++; bad <= 3 {
						t.Errorf("%s: buffer %d [%d] = %g, stand-in %g", o.name, i, j, g[j], w[j])
					}
				}
			}
		}
	}
}

// TestCUDAFakeBadOrdinal: a device the driver does not have is an error
// that names it, wrapping ErrNoDevice.
func TestCUDAFakeBadOrdinal(t *testing.T) {
	if fakePath == "" {
		t.Skip("skipping: " + fakeSkip)
	}
	_, err := OpenCUDA(7)
	var r cuda.Result
	if !errors.Is(err, ErrNoDevice) || !errors.As(err, &r) || r != cuda.ErrorInvalidDevice {
		t.Errorf("OpenCUDA(7) = %v, want ErrNoDevice with CUDA_ERROR_INVALID_DEVICE", err)
	}
}

// child runs test name in a new process with env added: the driver is
// chosen once per process.
func child(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+name+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Errorf("%s in a child process: %v\n%s", name, err, out)
	}
}

// TestCUDAMissingLibrary: with no loadable driver, OpenCUDA and Open
// fail with ErrNoDevice and name the library; Default gives both vendors'
// reasons. Nothing panics and nothing falls back.
func TestCUDAMissingLibrary(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		// without the fake libamdhip64 TestMain points at (a "ROCm device")
		child(t, t.Name(), "FLOWCHAT_LIBCUDA=/nonexistent/libcuda.so.1", "FLOWCHAT_LIBAMDHIP64=/nonexistent/libamdhip64.so")
		return
	}
	_, err := OpenCUDA(0)
	if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "/nonexistent/libcuda.so.1 not loadable") {
		t.Errorf("OpenCUDA(0) = %v", err)
	}
	if _, err := Open("cuda:1"); !errors.Is(err, ErrNoDevice) {
		t.Errorf(`Open("cuda:1") = %v`, err)
	}
	if _, herr := OpenHIP(0); herr == nil {
		t.Skip("a ROCm device is present: Default would open it")
	}
	_, err = Default()
	if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "no CUDA device (") || !strings.Contains(err.Error(), "and no ROCm device (") {
		t.Errorf("Default() = %v", err)
	}
}

// TestCUDADriverWithoutComputeAPI: a driver that lacks the entry points
// the device needs is refused with ErrNoDevice and native/cuda's
// ErrNotSupported, naming what is missing.
func TestCUDADriverWithoutComputeAPI(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakePath == "" {
			t.Skip("skipping: " + fakeSkip)
		}
		path, _ := buildFakeDriver(t.TempDir(), "FAKE_OMIT_COMPUTE")
		child(t, t.Name(), "FLOWCHAT_LIBCUDA="+path)
		return
	}
	_, err := OpenCUDA(0)
	if !errors.Is(err, ErrNoDevice) || !errors.Is(err, cuda.ErrNotSupported) || !strings.Contains(err.Error(), "(missing cu") {
		t.Errorf("OpenCUDA(0) = %v", err)
	}
}
