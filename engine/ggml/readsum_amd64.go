//go:build amd64 && !noasm

package ggml

//go:noescape
func readSumAVX(p *byte, n int) uint32

//go:noescape
func prefetchL2Asm(p *byte, n int)

func init() {
	if hasAVX2 {
		prefetchL2 = func(p []byte) { prefetchL2Asm(&p[0], len(p)) }
		readSum = func(p []byte) uint32 { return readSumAVX(&p[0], len(p)) }
	}
}
