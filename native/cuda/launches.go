package cuda

import (
	"fmt"
	"math"
	"os"
	"strconv"
)

// A Launch is one kernel launch as kernels/*.cu document it: the kernel,
// its grid and block, and its parameters in order as 64-bit words (a
// device address, or the 32 bits of an int or a float32). Both backends'
// launchers (this package's Kernels and native/hip's) run these, so each
// operation's shapes and checks are written once; only the warp size
// differs between devices. An empty Kernel is a plain device copy of
// Copy bytes from parameter 0 to parameter 1 (StoreKV into an F32 cache).
type Launch struct {
	Kernel      string
	Grid, Block Dim3
	Params      [maxLaunchParams]uint64
	N           int // parameters used
	Copy        int
}

const maxLaunchParams = 12

// ptrs, ints and f32 append parameters: device addresses, ints, a float.
func (l *Launch) ptrs(ps ...uint64) *Launch {
	for _, p := range ps {
		l.Params[l.N] = p
		l.N++
	}
	return l
}

func (l *Launch) ints(vs ...int) *Launch {
	for _, v := range vs {
		l.Params[l.N] = uint64(uint32(int32(v)))
		l.N++
	}
	return l
}

func (l *Launch) f32(v float32) *Launch {
	l.Params[l.N] = uint64(math.Float32bits(v))
	l.N++
	return l
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// gridFor is a grid-stride kernel's grid for n items, threads a block.
func gridFor(n, threads int) Dim3 { return Dim3{X: min(ceilDiv(n, threads), 65535)} }

// MatMulLaunch is MatMul's launch at warp size warp: matmul.cu's matvec,
// or matmul_tiled.cu's tiled kernel where MatMulTiled(cols).
func MatMulLaunch(warp int, t WeightType, w, x, y uint64, n, rows, cols int) (Launch, error) {
	if n%t.BlockSize() != 0 {
		return Launch{}, fmt.Errorf("%v row of %d elements is not whole blocks", t, n)
	}
	if MatMulTiled(cols) {
		return matMulTiledLaunch(t, w, x, y, n, rows, cols), nil
	}
	R := MatMulRows(t, rows)
	l := Launch{Kernel: MatMulKernel(t, R), Grid: Dim3{X: ceilDiv(rows, mmWarps*R), Y: ceilDiv(cols, mmMaxCols)}, Block: Dim3{X: warp, Y: mmWarps}}
	l.ptrs(w, x, y).ints(n, rows, cols)
	return l, nil
}

// mmRowsOverride is FLOWCHAT_MM_ROWS (1, 2 or 4): every chunked matvec
// kernel's rows a warp, for measuring the choice MatMulRows makes; 0 (unset
// or anything else): MatMulRows's default.
var mmRowsOverride = func() int {
	switch os.Getenv("FLOWCHAT_MM_ROWS") {
	case "1":
		return 1
	case "2":
		return 2
	case "4":
		return 4
	}
	return 0
}()

// MatMulRows is how many weight rows a warp of the matvec kernel takes
// (matmul.cu's R): 2 for the chunked types (F16, Q8_0, Q4_0), which share
// each X load among their R rows, else 1. Every R gives the same bits (a
// row's arithmetic does not depend on it). Measured on an H200
// (2026-11-26, tg128, every chunked matvec at the same R; docs/
// PERFORMANCE.md): TinyLlama Q4_0 281, 331, 263 t/s at R = 1, 2, 4;
// Llama-3-8B Q4_0 73, 113, 91 t/s. A rule by rows (4 from 8192 rows, 2
// from 2048) gave 316 and 107: 4 rows a warp leave too few warps.
func MatMulRows(t WeightType, rows int) int {
	if t != WeightF16 && t != WeightQ8_0 && t != WeightQ4_0 {
		return 1
	}
	if mmRowsOverride > 0 {
		return mmRowsOverride
	}
	return 2
}

// MatMulKernel is the matvec kernel of t taking R rows a warp.
func MatMulKernel(t WeightType, R int) string {
	if R == 1 {
		return t.Kernel()
	}
	return t.Kernel() + "_r" + strconv.Itoa(R)
}

// RMSNormLaunch is RMSNorm's launch (norm.cu); g is 0 for no gain.
func RMSNormLaunch(x, g, y uint64, n, rows int, eps float32) Launch {
	l := Launch{Kernel: "rms_norm_f32", Grid: Dim3{X: rows}, Block: Dim3{X: normThreads}}
	l.ptrs(x, g, y).ints(n).f32(eps)
	return l
}

// RoPELaunch is RoPE's launch (rope.cu).
func RoPELaunch(x, pos uint64, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) Launch {
	neoxArg := 0
	if neox {
		neoxArg = 1
	}
	l := Launch{Kernel: "rope_f32", Grid: Dim3{X: nHeads, Y: tokens}, Block: Dim3{X: ropeThreads}}
	l.ptrs(x, pos).ints(rowStride, headDim, nRot).f32(ropeThetaScale(base, nRot)).f32(freqScale).ints(neoxArg)
	return l
}

// ropeThetaScale is the factor between consecutive rotation frequencies,
// base^(−2/nRot), as rope_f32 takes it.
func ropeThetaScale(base float64, nRot int) float32 { return float32(math.Pow(base, -2/float64(nRot))) }

// SiLUMulLaunch is SiLUMul's launch (act.cu): h = silu(g)·u over n floats.
func SiLUMulLaunch(h, g, u uint64, n int) Launch {
	l := Launch{Kernel: "silu_mul_f32", Grid: gridFor(n, actThreads), Block: Dim3{X: actThreads}}
	l.ptrs(h, g, u).ints(n)
	return l
}

// AddLaunch is Add's launch (act.cu): y += x over n floats.
func AddLaunch(y, x uint64, n int) Launch {
	l := Launch{Kernel: "add_f32", Grid: gridFor(n, actThreads), Block: Dim3{X: actThreads}}
	l.ptrs(y, x).ints(n)
	return l
}

// SoftmaxLaunch is Softmax's launch (act.cu): rows of n floats in place.
func SoftmaxLaunch(x uint64, n, rows int) Launch {
	l := Launch{Kernel: "softmax_f32", Grid: Dim3{X: rows}, Block: Dim3{X: actThreads}}
	l.ptrs(x).ints(n)
	return l
}

// AttnDecodeLaunch is AttnDecode's launch (attn.cu) for a cache of t.
func AttnDecodeLaunch(t WeightType, q, kc, vc, scratch, out uint64, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) (Launch, error) {
	name, _, ok := KVKernels(t)
	switch {
	case nKVHead <= 0 || nHead%nKVHead != 0:
		return Launch{}, fmt.Errorf("%d query heads over %d KV heads", nHead, nKVHead)
	case !ok:
		return Launch{}, fmt.Errorf("no attention kernel for a %v KV cache", t)
	case !KVWhole(t, headDim, kvStride):
		return Launch{}, fmt.Errorf("%v KV rows of %d with heads of %d are not whole blocks", t, kvStride, headDim)
	}
	l := Launch{Kernel: name, Grid: Dim3{X: nHead}, Block: Dim3{X: attnThreads}}
	l.ptrs(q, kc, vc, scratch, out).ints(nKV, headDim, nHead, nKVHead, kvStride).f32(scale)
	return l, nil
}

// StoreKVLaunch is StoreKV's launch (attn.cu): n floats at x into a cache
// of t at y; for F32 a copy.
func StoreKVLaunch(t WeightType, x, y uint64, n int) (Launch, error) {
	_, name, ok := KVKernels(t)
	switch {
	case !ok:
		return Launch{}, fmt.Errorf("no KV cache of %v", t)
	case !KVWhole(t, n):
		return Launch{}, fmt.Errorf("%d floats are not whole %v blocks", n, t)
	}
	l := Launch{Kernel: name, Grid: gridFor(n, attnThreads), Block: Dim3{X: attnThreads}}
	if name == "" {
		l.Copy = 4 * n
	}
	l.ptrs(x, y).ints(n)
	return l, nil
}
