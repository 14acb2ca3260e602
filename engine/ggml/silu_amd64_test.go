//go:build amd64 && !noasm

package ggml

import "testing"

// TestSiLUMulAVX2MatchesTwin repeats the twin comparison with the 512-bit
// kernel off (TestSiLUMulMatchesTwin covers it where the CPU has it).
func TestSiLUMulAVX2MatchesTwin(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	defer func(v bool) { siluUse512 = v }(siluUse512)
	siluUse512 = false
	checkSiLUTwin(t)
}

func BenchmarkSiLUMulAVX2(b *testing.B) {
	defer func(v bool) { siluUse512 = v }(siluUse512)
	siluUse512 = false
	BenchmarkSiLUMul(b)
}
