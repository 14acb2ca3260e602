//go:build arm64 && !noasm

package ggml

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The arm64 kernels (neon_arm64.s): dot products of F32, F16, Q8_0 and
// Q4_0 rows, and 4-row matrix-vector strips of the two 32-block types.
// Each runs the same operations in the same order as a plain-Go twin and
// agrees with it bit for bit:
//
//   - F32, F16: dotF32Go / dotF16Go, the reference kernels themselves (four
//     8-lane fused multiply-add accumulators over groups of 32, groups of 8
//     into the first, hsum_float_8, the tail one fused multiply-add at a
//     time; F16 widened exactly with fcvtl). This is also the AVX2 order, so
//     both architectures give the same bits.
//   - Q8_0, Q4_0 (against Q8_0 activations): dotQ8_0Lanes / dotQ4_0Lanes (8
//     lanes of exact sums of 4 consecutive products, one fused
//     multiply-add per lane and block by fp32(d_w·d_x), hsum_float_8), as
//     the AVX2 tiles. The lane sums come from sdot where the CPU has the
//     dotprod extension and otherwise from smull/saddlp/addp; both are
//     exact, so the two paths agree bit for bit too.

// hasNEON reports whether the kernels run here (Advanced SIMD is part of
// every ARMv8-A core Go supports; the check documents the dependency).
var hasNEON = cpu.ARM64.HasASIMD

// useSDOT selects the dotprod path of the 32-block kernels; the tests clear
// it to run the baseline path on CPUs that have both.
var useSDOT = cpu.ARM64.HasASIMDDP

func init() {
	if hasNEON {
		installNEON()
	}
}

//go:noescape
func dotF32NEON(a, b *float32, n int) float32

//go:noescape
func dotF16NEON(a, b *uint16, n int) float32

// The 32-block kernels over nb blocks of one row (x1, out[0]) or four rows
// rs bytes apart (x4, out[0:4]) against the Q8_0 row x.
//
//go:noescape
func q80x1NEON(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q80x1SDOT(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q80x4NEON(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q80x4SDOT(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q40x1NEON(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q40x1SDOT(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q40x4NEON(w *byte, rs int, x *byte, nb int, out *float32)

//go:noescape
func q40x4SDOT(w *byte, rs int, x *byte, nb int, out *float32)

func installNEON() {
	dotImpl[F32], dotImpl[F16] = dotF32Neon, dotF16Neon
	dotImpl[Q8_0], dotImpl[Q4_0] = dotQ8_0Neon, dotQ4_0Neon
	matVecImpl[Q8_0], matVecImpl[Q4_0] = matVecQ8_0Neon, matVecQ4_0Neon
}

func dotF32Neon(n int, w, x []byte) float32 {
	if n == 0 {
		return 0
	}
	return dotF32NEON((*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&x[0])), n)
}

func dotF16Neon(n int, w, x []byte) float32 {
	if n == 0 {
		return 0
	}
	return dotF16NEON((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&x[0])), n)
}

// run32Neon calls the x4 (four) or x1 kernel of t (Q8_0 or Q4_0) on the
// path useSDOT selects; direct calls keep out on the caller's stack.
func run32Neon(t Type, four bool, w *byte, rs int, x *byte, nb int, out *float32) {
	switch {
	case t == Q8_0 && four && useSDOT:
		q80x4SDOT(w, rs, x, nb, out)
	case t == Q8_0 && four:
		q80x4NEON(w, rs, x, nb, out)
	case t == Q8_0 && useSDOT:
		q80x1SDOT(w, rs, x, nb, out)
	case t == Q8_0:
		q80x1NEON(w, rs, x, nb, out)
	case four && useSDOT:
		q40x4SDOT(w, rs, x, nb, out)
	case four:
		q40x4NEON(w, rs, x, nb, out)
	case useSDOT:
		q40x1SDOT(w, rs, x, nb, out)
	default:
		q40x1NEON(w, rs, x, nb, out)
	}
}

func dot32Neon(t Type, n int, w, x []byte) float32 {
	nb := n / 32
	if nb == 0 {
		return 0
	}
	var out float32
	run32Neon(t, false, &w[0], t.RowSize(n), &x[0], nb, &out)
	return out
}

// matVec32Neon runs 4-row strips, then the leftover rows one by one.
func matVec32Neon(t Type, n int, w, x []byte, dst []float32) {
	nb := n / 32
	if nb == 0 {
		clear(dst)
		return
	}
	rs := t.RowSize(n)
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		run32Neon(t, true, &w[r*rs], rs, &x[0], nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		run32Neon(t, false, &w[r*rs], rs, &x[0], nb, &dst[r])
	}
}

func dotQ8_0Neon(n int, w, x []byte) float32 { return dot32Neon(Q8_0, n, w, x) }
func dotQ4_0Neon(n int, w, x []byte) float32 { return dot32Neon(Q4_0, n, w, x) }

func matVecQ8_0Neon(n int, w, x []byte, dst []float32) { matVec32Neon(Q8_0, n, w, x, dst) }
func matVecQ4_0Neon(n int, w, x []byte, dst []float32) { matVec32Neon(Q4_0, n, w, x, dst) }

// Accel names the kernels in use: "neon+dotprod", "neon" or "go".
func Accel() string {
	switch {
	case hasNEON && useSDOT:
		return "neon+dotprod"
	case hasNEON:
		return "neon"
	}
	return "go"
}
