//go:build amd64 && !noasm

package ggml

import "os"

// The K-quant tile layouts' assembly kernels (k16_amd64.s, k16q5_amd64.s,
// k16q6_amd64.s, written by tools/asmgen; k16Twins are their twins). They
// need AVX-512 F, BW and VNNI (hasKVNNI).

//go:noescape
func k16q4k8(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q4k4(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q4k1(w *byte, nb int, x *byte, dst *float32)

//go:noescape
func k16q5k8(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q5k4(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q5k1(w *byte, nb int, x *byte, dst *float32)

//go:noescape
func k16q6k8(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q6k4(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q6k1(w *byte, nb int, x *byte, dst *float32)

type (
	k16ColsAsm func(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)
	k16OneAsm  func(w *byte, nb int, x *byte, dst *float32)
)

// k16AsmKernels wraps a layout's assembly kernels (gb bytes a group's
// super-block) so that each call first checks its operands' extent.
func k16AsmKernels(gb int, k8, k4 k16ColsAsm, k1 k16OneAsm) k16Kernels {
	cols := func(nc int, k k16ColsAsm) func(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
		return func(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
			_, _, _ = w[gb*nb-1], x[(nc-1)*xs+292*nb-1], dst[(nc-1)*ldd+15]
			k(&w[0], nb, &x[0], xs, &dst[0], ldd)
		}
	}
	one := func(w []byte, nb int, x []byte, dst []float32) {
		_, _, _ = w[gb*nb-1], x[292*nb-1], dst[15]
		k1(&w[0], nb, &x[0], &dst[0])
	}
	return k16Kernels{cols(8, k8), cols(4, k4), one}
}

// k16Asm, k16q5Asm and k16q6Asm are the three layouts' assembly kernels.
var (
	k16Asm   = k16AsmKernels(k16Bytes, k16q4k8, k16q4k4, k16q4k1)
	k16q5Asm = k16AsmKernels(k16q5Bytes, k16q5k8, k16q5k4, k16q5k1)
	k16q6Asm = k16AsmKernels(k16q6Bytes, k16q6k8, k16q6k4, k16q6k1)
)

// installK16 installs the K-quant tile layouts (Q4_K, Q5_K, Q6_K in
// groups of 16 rows: k16.go, k16q5.go, k16q6.go) on CPUs with AVX-512 BW
// and VNNI, which is all their kernels use: they run with or without the
// AMX tier. FLOWCHAT_KTILE=0 keeps those types row-major on the flat VNNI
// kernels (for comparisons, or as an escape hatch).
func installK16() {
	switch {
	case !hasKVNNI:
		k16State = "no k-quant tiles: they need AVX-512 BW and VNNI"
	case os.Getenv("FLOWCHAT_KTILE") == "0":
		k16State = "no k-quant tiles: FLOWCHAT_KTILE=0"
	default:
		useK16(k16Asm, k16q5Asm, k16q6Asm)
	}
}

// useK16 installs the K-quant tile layouts with kernels k4, k5 and k6 (the
// assembly; the Go twins in the dispatch test).
func useK16(k4, k5, k6 k16Kernels) {
	for t, k := range map[Type]k16Kernels{Q4_K: k4, Q5_K: k5, Q6_K: k6} {
		t, k := t, k
		gemmRows4[t] = func(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
			k16Gemm(t, n, w, rows, a, dst, ldd, &k)
		}
		rows4Pairs[t], tileRows16[t] = false, true
	}
	k16State = "k-quant tiles: Q4_K, Q5_K and Q6_K in 16-row groups by VPDPBUSD, one rounding"
}
