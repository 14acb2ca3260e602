//go:build amd64 && !noasm

package ggml

import "os"

// The Q4_K tile layout's assembly kernels (k16_amd64.s; k16EightGo,
// k16FourGo and k16OneGo are their twins). They need AVX-512 F, BW and VNNI (hasKVNNI).
//
//go:noescape
func k16q4k4(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q4k1(w *byte, nb int, x *byte, dst *float32)

// k16AsmFour and k16AsmOne run the kernels after checking their operands'
// extent.
func k16AsmFour(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
	_, _, _ = w[k16Bytes*nb-1], x[3*xs+292*nb-1], dst[3*ldd+15]
	k16q4k4(&w[0], nb, &x[0], xs, &dst[0], ldd)
}

func k16AsmOne(w []byte, nb int, x []byte, dst []float32) {
	_, _, _ = w[k16Bytes*nb-1], x[292*nb-1], dst[15]
	k16q4k1(&w[0], nb, &x[0], &dst[0])
}

// k16Asm is the assembly kernels; k16Go the twins.
var (
	k16Asm = k16Kernels{k16AsmEight, k16AsmFour, k16AsmOne}
	k16Go  = k16Kernels{k16EightGo, k16FourGo, k16OneGo}
)

//go:noescape
func k16q4k8(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

// k16AsmEight runs the eight-column kernel after checking its operands.
func k16AsmEight(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
	_, _, _ = w[k16Bytes*nb-1], x[7*xs+292*nb-1], dst[7*ldd+15]
	k16q4k8(&w[0], nb, &x[0], xs, &dst[0], ldd)
}

// The Q6_K tile layout's kernels (k16q6_amd64.s; k16q6EightGo,
// k16q6FourGo and k16q6OneGo are their twins).
//
//go:noescape
func k16q6k8(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q6k4(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q6k1(w *byte, nb int, x *byte, dst *float32)

func k16q6AsmEight(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
	_, _, _ = w[k16q6Bytes*nb-1], x[7*xs+292*nb-1], dst[7*ldd+15]
	k16q6k8(&w[0], nb, &x[0], xs, &dst[0], ldd)
}

func k16q6AsmFour(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
	_, _, _ = w[k16q6Bytes*nb-1], x[3*xs+292*nb-1], dst[3*ldd+15]
	k16q6k4(&w[0], nb, &x[0], xs, &dst[0], ldd)
}

func k16q6AsmOne(w []byte, nb int, x []byte, dst []float32) {
	_, _, _ = w[k16q6Bytes*nb-1], x[292*nb-1], dst[15]
	k16q6k1(&w[0], nb, &x[0], &dst[0])
}

var (
	k16q6Asm = k16Kernels{k16q6AsmEight, k16q6AsmFour, k16q6AsmOne}
	k16q6Go  = k16Kernels{k16q6EightGo, k16q6FourGo, k16q6OneGo}
)

// The Q5_K tile layout's kernels (k16q5_amd64.s; k16q5EightGo,
// k16q5FourGo and k16q5OneGo are their twins).
//
//go:noescape
func k16q5k8(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q5k4(w *byte, nb int, x *byte, xs int, dst *float32, ldd int)

//go:noescape
func k16q5k1(w *byte, nb int, x *byte, dst *float32)

func k16q5AsmEight(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
	_, _, _ = w[k16q5Bytes*nb-1], x[7*xs+292*nb-1], dst[7*ldd+15]
	k16q5k8(&w[0], nb, &x[0], xs, &dst[0], ldd)
}

func k16q5AsmFour(w []byte, nb int, x []byte, xs int, dst []float32, ldd int) {
	_, _, _ = w[k16q5Bytes*nb-1], x[3*xs+292*nb-1], dst[3*ldd+15]
	k16q5k4(&w[0], nb, &x[0], xs, &dst[0], ldd)
}

func k16q5AsmOne(w []byte, nb int, x []byte, dst []float32) {
	_, _, _ = w[k16q5Bytes*nb-1], x[292*nb-1], dst[15]
	k16q5k1(&w[0], nb, &x[0], &dst[0])
}

var (
	k16q5Asm = k16Kernels{k16q5AsmEight, k16q5AsmFour, k16q5AsmOne}
	k16q5Go  = k16Kernels{k16q5EightGo, k16q5FourGo, k16q5OneGo}
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
