//go:build amd64 && !noasm

package ggml

//go:noescape
func sumSqAVX(x *float32, n int) float64

//go:noescape
func scaleMulAVX(dst, x *float32, n int, s float32, w *float32)

func init() {
	if hasAVX2 {
		sumSquares, scaleMul = sumSquaresAsm, scaleMulAsm
	}
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
