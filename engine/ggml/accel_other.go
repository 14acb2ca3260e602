//go:build !(amd64 || arm64) || noasm

package ggml

// Accel names the kernels in use: "avx2", "neon", "neon+dotprod" or "go".
// This build has only the plain-Go kernels (neither amd64 nor arm64, or the
// noasm tag).
func Accel() string { return "go" }
