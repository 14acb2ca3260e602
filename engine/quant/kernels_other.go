//go:build !amd64 || noasm

package quant

// Accel names the kernels in use: "avx2" or "go".
func Accel() string { return "go" }
