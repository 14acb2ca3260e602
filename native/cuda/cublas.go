package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// cuBLAS, optional: the prefill products' second path. Where a libcublas
// loads, Kernels.MatMul sends prefill-shaped products (MatMulTiled) to
// cublasGemmEx: the weight widened to F16 by dq16_<type> into a scratch
// buffer (F16 weights as stored; F32 weights stay F32 and so do their
// activations), the activations rounded to F16 by kv_store_f16, F16 × F16
// → F32 with F32 accumulation (CUBLAS_COMPUTE_32F). A missing or unusable
// cuBLAS is never an error: the tiled kernels run instead.
//
// Unlike every other path, cuBLAS's summation order is the library's, so
// no twin reproduces it bit for bit: the stand-in device keeps the tiled
// kernels, and the GPU test holds cuBLAS's results against the twin of
// its inputs within a rounding bound.

// ErrNoCUBLAS is wrapped by every error that means "no usable cuBLAS".
var ErrNoCUBLAS = errors.New("cuBLAS not available")

// cublasSpec: cuBLAS 11 to 13 (the soname carries the major version only).
// FLOWCHAT_CUBLAS names the file to use, or "off" for none.
var cublasSpec = libSpec{
	env:     "FLOWCHAT_CUBLAS",
	sonames: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"},
	glob:    "libcublas.so*",
	toolkit: true,
}

// CUBLAS is a loaded libcublas.
type CUBLAS struct {
	api  cublasAPI
	Path string // what was dlopened
}

var defaultCUBLAS = sync.OnceValues(func() (*CUBLAS, error) { return loadCUBLAS(osSearchEnv) })

// LoadCUBLAS returns the process's cuBLAS, loading it on first use; the
// error wraps ErrNoCUBLAS and lists what was tried.
func LoadCUBLAS() (*CUBLAS, error) { return defaultCUBLAS() }

func loadCUBLAS(e searchEnv) (*CUBLAS, error) {
	if v := strings.ToLower(e.getenv(cublasSpec.env)); v == "off" || v == "0" || v == "none" {
		return nil, fmt.Errorf("%w: %s=%s", ErrNoCUBLAS, cublasSpec.env, e.getenv(cublasSpec.env))
	}
	return loadCUBLASFrom(cublasSpec.candidates(e))
}

// loadCUBLASFrom loads the first candidate that has every required entry point.
func loadCUBLASFrom(candidates []string) (*CUBLAS, error) {
	var tried []string
	for _, path := range candidates {
		h, err := openLibrary(path)
		if err != nil {
			msg := err.Error() // dlerror's message names the file already
			if !strings.Contains(msg, path) {
				msg = path + ": " + msg
			}
			tried = append(tried, msg)
			continue
		}
		b := &CUBLAS{Path: path}
		if err := b.api.bind(h); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: tried %s", ErrNoCUBLAS, strings.Join(tried, "; "))
}

// blasScratchHalves caps the F16 weight scratch (32 MiB): larger matrices
// are widened and multiplied in chunks of rows (a multiple of 8 where
// possible, keeping each chunk's output 32-byte aligned). A variable so
// that tests can make chunks on small matrices.
var blasScratchHalves = 16 << 20

// blas is a cuBLAS handle in one context with its scratch buffers.
type blas struct {
	lib     *CUBLAS
	h       cublasHandle
	version int
	stream  cuStream
	wh, xh  DevicePtr // F16 weights (blasScratchHalves) and activations
	xhBytes int
}

// UseCUBLAS makes k send prefill-shaped products to lib's GemmEx (call
// inside the context's Do). On error k is unchanged and keeps the tiled
// kernels; the error says why, wrapping ErrNoCUBLAS.
func (k *Kernels) UseCUBLAS(lib *CUBLAS) error {
	b := &blas{lib: lib}
	if err := checkCUBLAS("cublasCreate_v2", lib.api.cublasCreate_v2(&b.h)); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNoCUBLAS, lib.Path, err)
	}
	if lib.api.cublasGetVersion_v2 != nil {
		var v int32
		if lib.api.cublasGetVersion_v2(b.h, &v) == 0 {
			b.version = int(v)
		}
	}
	k.blas = b
	return nil
}

// MatMulPath names what MatMul runs for cols columns on k: "matvec",
// "tiled" or "cuBLAS <version>".
func (k *Kernels) MatMulPath(cols int) string {
	switch {
	case !MatMulTiled(cols):
		return "matvec"
	case k.blas == nil:
		return "tiled"
	case k.blas.version > 0:
		return fmt.Sprintf("cuBLAS %d.%d.%d", k.blas.version/10000, k.blas.version/100%100, k.blas.version%100)
	}
	return "cuBLAS"
}

func (b *blas) free(c *Context) {
	for _, p := range []DevicePtr{b.wh, b.xh} {
		if p != 0 {
			c.Free(p)
		}
	}
	b.lib.api.cublasDestroy_v2(b.h)
}

// matMulBLAS is MatMul through cuBLAS (see the top of this file).
func (k *Kernels) matMulBLAS(s *Stream, t WeightType, w, x, y DevicePtr, n, rows, cols int) error {
	b := k.blas
	if n%t.BlockSize() != 0 {
		return fmt.Errorf("cuda: %v row of %d elements is not whole blocks", t, n)
	}
	if b.stream != s.handle() || b.stream == 0 {
		if err := checkCUBLAS("cublasSetStream_v2", b.lib.api.cublasSetStream_v2(b.h, s.handle())); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		b.stream = s.handle()
	}
	if t == WeightF32 {
		return b.gemm(w, x, y, cudaR32F, n, rows, cols, rows)
	}
	if err := k.blasScratch(2 * n * cols); err != nil {
		return err
	}
	l, err := StoreKVLaunch(WeightF16, uint64(x), uint64(b.xh), n*cols)
	if err := k.run(s, l, err); err != nil {
		return err
	}
	if t == WeightF16 {
		return b.gemm(w, b.xh, y, cudaR16F, n, rows, cols, rows)
	}
	chunk := blasScratchHalves / n
	if chunk >= 8 {
		chunk &^= 7
	}
	chunk = max(1, min(rows, chunk))
	for r0 := 0; r0 < rows; r0 += chunk {
		nr := min(chunk, rows-r0)
		wr := w + DevicePtr(r0*t.RowBytes(n))
		l, err := DequantF16Launch(t, uint64(wr), uint64(b.wh), n, nr)
		if err := k.run(s, l, err); err != nil {
			return err
		}
		if err := b.gemm(b.wh, b.xh, y+DevicePtr(4*r0), cudaR16F, n, nr, cols, rows); err != nil {
			return err
		}
	}
	return nil
}

// blasScratch allocates the weight scratch once and grows the activation
// scratch to xBytes.
func (k *Kernels) blasScratch(xBytes int) (err error) {
	b := k.blas
	if b.wh == 0 {
		if b.wh, err = k.c.Alloc(2 * blasScratchHalves); err != nil {
			return fmt.Errorf("cuda: cuBLAS weight scratch: %w", err)
		}
	}
	if b.xhBytes < xBytes {
		if b.xh != 0 {
			k.c.Free(b.xh)
			b.xh, b.xhBytes = 0, 0
		}
		if b.xh, err = k.c.Alloc(xBytes); err != nil {
			return fmt.Errorf("cuda: cuBLAS activation scratch: %w", err)
		}
		b.xhBytes = xBytes
	}
	return nil
}

// gemm is Y[c·ldc + r] = Σ_i W[r·n + i]·X[c·n + i] for r < rows, c < cols:
// in cuBLAS's column-major terms C (rows × cols, ldc) = Aᵀ·B with A the
// weights as an n × rows matrix (lda n) and B the activations n × cols
// (ldb n), both of type typ, C float32, accumulated in float32.
func (b *blas) gemm(w, x, y DevicePtr, typ int32, n, rows, cols, ldc int) error {
	alpha, beta := float32(1), float32(0)
	st := b.lib.api.cublasGemmEx(b.h, cublasOpT, cublasOpN, int32(rows), int32(cols), int32(n),
		unsafe.Pointer(&alpha), w, typ, int32(n), x, typ, int32(n),
		unsafe.Pointer(&beta), y, cudaR32F, int32(ldc), cublasCompute32F, cublasGemmDefault)
	return checkCUBLAS("cublasGemmEx", st)
}
