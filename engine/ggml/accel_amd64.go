//go:build amd64 && !noasm

package ggml

// Accel names the kernels in use: "avx2" or "go".
func Accel() string {
	if hasAVX2 {
		return "avx2"
	}
	return "go"
}
