//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ebitengine/purego"
)

// buildFakeWithKernels compiles the fake driver with FAKE_KERNELS (every
// kernel of kernels/*.cu run on the host by the CPU shim) and the fake
// libcublas, with g++ and gcc as test tools.
func buildFakeWithKernels(t *testing.T) (driver, cublas string) {
	t.Helper()
	for _, cc := range []string{"gcc", "g++"} {
		if _, err := exec.LookPath(cc); err != nil {
			t.Skipf("skipping: %s not found; cannot build the fake libraries", cc)
		}
	}
	dir := t.TempDir()
	driver, cublas = filepath.Join(dir, "libfakecuda.so"), filepath.Join(dir, "libfakecublas.so")
	for _, cmd := range [][]string{
		{"g++", "-shared", "-fPIC", "-O1", "-pthread", "-ffp-contract=off", "-DFC_WARP_SIZE=32", "-Ikernels",
			"-Itestdata/cpushim", "-DFAKE_KERNELS", "-o", driver, "-x", "c", "testdata/fakecuda.c",
			"-x", "c++", "-std=c++17", "testdata/fakekernels.cpp"},
		{"gcc", "-shared", "-fPIC", "-O1", "-o", cublas, "testdata/fakecublas.c"},
	} {
		if msg, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd[0], err, msg)
		}
	}
	return driver, cublas
}

// fakeKernels loads every kernel of the sources from the fake driver's
// kernel module (it takes any image that looks like NVRTC's), no NVRTC
// needed.
func fakeKernels(t *testing.T, c *Context) *Kernels {
	t.Helper()
	k := &Kernels{c: c, fn: map[string]*Function{}, warp: cudaWarp}
	m, err := c.LoadModule(&Image{Kind: PTX, Data: []byte("// fake PTX\x00")})
	if err != nil {
		t.Fatal(err)
	}
	k.mods = append(k.mods, m)
	for _, src := range KernelSources() {
		for _, name := range kernelNames(src) {
			if k.fn[name], err = c.Function(m, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	return k
}

// TestCUBLASFakePrefill: with a cuBLAS, prefill-shaped products go to
// GemmEx with the weights widened to F16 by dq16_<type> (in chunks of rows,
// the scratch made small here), the activations rounded to F16, and F32
// weights as they are: for every weight type the result is within 2⁻²³ of
// Σ|w·x| of the float64 product of exactly those F16 (or F32) inputs, the
// twins' halves. The fake GemmEx sums in double, so a missed conversion,
// transpose or chunk offset shows far beyond the bound. Unload frees the
// handle and the scratch.
func TestCUBLASFakePrefill(t *testing.T) {
	driverPath, cublasPath := buildFakeWithKernels(t)
	d, err := openDriver(driverPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lib, err := loadCUBLASFrom([]string{cublasPath})
	if err != nil {
		t.Fatal(err)
	}
	defer func(v int) { blasScratchHalves = v }(blasScratchHalves)
	blasScratchHalves = 40 * 256 // chunks of 40 rows of 256, 8 of 256·3
	r := rand.New(rand.NewPCG(97, 98))
	err = c.Do(func() error {
		k := fakeKernels(t, c)
		defer k.Unload()
		if err := k.UseCUBLAS(lib); err != nil {
			return err
		}
		if p := k.MatMulPath(17); p != "cuBLAS 12.4.1" {
			t.Errorf("MatMulPath(17) = %q", p)
		}
		for _, wt := range WeightTypes() {
			n := tiledSizes(wt)[1]
			if wt.BlockSize() == 256 {
				n = 3 * 256
			}
			const rows, cols = 70, 19
			w, _ := randWeights(r, wt, n, rows)
			x := randFloats(r, cols*n, 2)
			got := fakeMatMul(t, c, k, wt, w, x, n, rows, cols)
			checkTiledBound(t, fmt.Sprintf("cuBLAS %v n=%d", wt, n), got, blasReference(wt, w, x, n, rows), rows, cols)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := purego.Dlopen(cublasPath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	var handles, gemms func() int32
	purego.RegisterLibFunc(&handles, h, "fakeCublasHandles")
	purego.RegisterLibFunc(&gemms, h, "fakeCublasGemms")
	if handles() != 0 || gemms() < int32(len(WeightTypes())) {
		t.Errorf("%d cuBLAS handles left, %d GemmEx calls", handles(), gemms())
	}
}

// fakeMatMul runs k.MatMul on copies of w and x and returns y.
func fakeMatMul(t *testing.T, c *Context, k *Kernels, wt WeightType, w []byte, x []float32, n, rows, cols int) []float32 {
	t.Helper()
	s, err := c.NewStream()
	must(t, err)
	defer c.DestroyStream(s)
	var ps []DevicePtr
	up := func(b []byte) DevicePtr {
		p, err := c.Alloc(len(b))
		must(t, err)
		ps = append(ps, p)
		must(t, c.CopyToDevice(s, p, b))
		return p
	}
	y := make([]float32, rows*cols)
	dy := up(f32Bytes(y))
	must(t, k.MatMul(s, wt, up(w), up(f32Bytes(x)), dy, n, rows, cols))
	must(t, c.CopyToHost(s, f32Bytes(y), dy))
	must(t, c.SyncStream(s))
	for _, p := range ps {
		c.Free(p)
	}
	return y
}
