//go:build amd64 && !noasm

package ggml

// Accel names the kernels in use: "avx2+avx512-vnni+amx",
// "avx2+avx512-vnni", "avx2+avx512", "avx2" or "go" (AMXStatus says why
// the AMX tier is off).
func Accel() string {
	switch {
	case amxOn:
		return "avx2+avx512-vnni+amx"
	case hasVNNI:
		return "avx2+avx512-vnni"
	case hasAVX512:
		return "avx2+avx512"
	case hasAVXVNNI:
		return "avx2+avx-vnni"
	case hasAVX2:
		return "avx2"
	}
	return "go"
}
