//go:build linux

package device

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ebitengine/purego"

	"flowchat/native/cuda"
)

// prefillOp is a prefill-shaped Q4_K product (more columns than the
// matvec takes).
func prefillOp() op {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, rows, cols = 512, 70, cuda.MatMulMatvecMaxCols + 17
	return op{name: "MatMul/prefill/Q4_K",
		bufs: [][]byte{randWeights(rng, Q4_K, n, rows), f32b(randFloats(rng, n*cols)), make([]byte, 4*rows*cols)},
		run:  func(d Device, m []Mem) error { return d.MatMul(Q4_K, m[0], m[1], m[2], n, rows, cols) }}
}

// TestCUDAFakeCUBLAS: where a libcublas loads ($FLOWCHAT_CUBLAS here names
// native/cuda's fake, built with gcc), OpenCUDA gives prefill-shaped
// products to its GemmEx: the fake is called, and the result is the
// stand-in's (the tiled kernel's float32 inputs) up to the F16 rounding of
// weights and activations, within 2⁻⁹ relative RMS. native/cuda's
// TestCUBLASFakePrefill checks the arithmetic per weight type.
func TestCUDAFakeCUBLAS(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakePath == "" {
			t.Skip("skipping: " + fakeSkip)
		}
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("skipping: gcc not found; cannot build the fake libcublas")
		}
		lib := filepath.Join(t.TempDir(), "libfakecublas.so")
		if msg, err := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-o", lib, nativeTestdata+"/fakecublas.c").CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, msg)
		}
		child(t, t.Name(), "FLOWCHAT_LIBCUDA="+fakePath, "FLOWCHAT_CUBLAS="+lib)
		return
	}
	fakePath = os.Getenv("FLOWCHAT_LIBCUDA") // the parent's fake driver
	d := openFakeCUDA(t)
	defer d.Close()
	o := prefillOp()
	got, want := runOp(t, d, o), runOp(t, NewStandIn("cpu:0", 0, 32), o)
	h, err := purego.Dlopen(os.Getenv("FLOWCHAT_CUBLAS"), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var gemms func() int32
	purego.RegisterLibFunc(&gemms, h, "fakeCublasGemms")
	if gemms() == 0 {
		t.Fatal("the prefill product did not reach cublasGemmEx")
	}
	g, w := bf32(got[2]), bf32(want[2])
	var num, den float64
	for i := range w {
		num += (float64(g[i]) - float64(w[i])) * (float64(g[i]) - float64(w[i]))
		den += float64(w[i]) * float64(w[i])
	}
	if e := math.Sqrt(num / den); e > 0x1p-9 || e == 0 || math.IsNaN(e) {
		t.Errorf("cuBLAS path vs the stand-in: rel RMS %.3g, want in (0, 2⁻⁹]", e)
	}
}

// TestCUDAWithoutCUBLAS: with no loadable cuBLAS the CUDA device opens as
// ever and runs prefill-shaped products on the tiled kernels: the
// stand-in's bits.
func TestCUDAWithoutCUBLAS(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakePath == "" {
			t.Skip("skipping: " + fakeSkip)
		}
		child(t, t.Name(), "FLOWCHAT_LIBCUDA="+fakePath, "FLOWCHAT_CUBLAS=/nonexistent/libcublas.so.12")
		return
	}
	if lib, err := cuda.LoadCUBLAS(); err == nil {
		t.Skipf("skipping: a cuBLAS is installed here (%s)", lib.Path)
	}
	fakePath = os.Getenv("FLOWCHAT_LIBCUDA") // the parent's fake driver
	d := openFakeCUDA(t)
	defer d.Close()
	o := prefillOp()
	got, want := runOp(t, d, o), runOp(t, NewStandIn("cpu:0", 0, 32), o)
	g, w := bf32(got[2]), bf32(want[2])
	for i := range w {
		if ulpDistance(g[i], w[i]) != 0 {
			t.Fatalf("y[%d] = %g, stand-in %g", i, g[i], w[i])
		}
	}
}
