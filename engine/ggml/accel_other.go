//go:build !amd64 || noasm

package ggml

// Accel names the kernels in use: "avx2" or "go". This build has only the
// plain-Go kernels (not amd64, or the noasm tag).
func Accel() string { return "go" }
