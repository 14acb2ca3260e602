//go:build amd64 && !noasm

package ggml

//go:noescape
func sumSqAVX(x *float32, n int) float64

//go:noescape
func scaleMulAVX(dst, x *float32, n int, s float32, w *float32)

//go:noescape
func ropePairsAVX(x, cos, sin *float32, n int)

//go:noescape
func ropeHalvesAVX(x, cos, sin *float32, n int)

//go:noescape
func fp16ToF32Y(x *uint16, y *float32, n int)

func init() {
	if hasAVX2 {
		sumSquares, scaleMul = sumSquaresAsm, scaleMulAsm
		ropePairs, ropeHalves = ropePairsAsm, ropeHalvesAsm
	}
	if hasAVX2 && !hasAVX512 { // the AVX-512 tier installs widenF16Asm (gemmf_amd64.go)
		widenF16 = widenF16Y
	}
}

// widenF16Y widens F16 columns for the AVX2 tier's F16 kernels: the table
// loop it replaces cost ~1 ms a TinyLlama F16 token on the one thread that
// prepares each matrix's input (its lines miss once a matrix has streamed).
func widenF16Y(h []uint16, f []float32) {
	n := len(h) &^ 7
	if n > 0 {
		fp16ToF32Y(&h[0], &f[0], n)
	}
	for i := n; i < len(h); i++ {
		f[i] = fp16Table[h[i]]
	}
}

// ropePairsAsm rotates 4 pairs a step, the rest through the twin.
func ropePairsAsm(x, cos, sin []float32) {
	n := len(cos) &^ 3
	if n > 0 {
		ropePairsAVX(&x[0], &cos[0], &sin[0], n)
	}
	ropePairsGo(x[2*n:], cos[n:], sin[n:])
}

// ropeHalvesAsm rotates 8 pairs a step, the rest as the twin does.
func ropeHalvesAsm(x, cos, sin []float32) {
	half := len(cos)
	n := half &^ 7
	if n > 0 {
		ropeHalvesAVX(&x[0], &cos[0], &sin[0], half)
	}
	ropeHalvesFrom(x, cos, sin, n)
}

// sumSquaresAsm runs the whole groups of 16 through the kernel (its four
// float64 vectors are sumSquaresGo's 16 sums, folded the same way) and
// adds the rest in order.
func sumSquaresAsm(x []float32) float64 {
	n := len(x) &^ 15
	sum := 0.0
	if n > 0 {
		sum = sumSqAVX(&x[0], n)
	}
	for _, v := range x[n:] {
		sum += float64(v * v)
	}
	return sum
}

func scaleMulAsm(dst, x []float32, s float32, w []float32) {
	n := len(dst) &^ 7
	if n > 0 {
		scaleMulAVX(&dst[0], &x[0], n, s, &w[0])
	}
	for i := n; i < len(dst); i++ {
		dst[i] = x[i] * s * w[i]
	}
}
