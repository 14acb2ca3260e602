//go:build amd64 && !noasm

package ggml

//go:noescape
func readSumAVX(p *byte, n int) uint32

//go:noescape
func readStreamsAVX(p *byte, n int) uint32

//go:noescape
func readStreamsBusy4AVX(p *byte, n int) uint32

//go:noescape
func readStreamsBusy8AVX(p *byte, n int) uint32

func init() {
	if hasAVX2 {
		readSum = func(p []byte) uint32 { return readSumAVX(&p[0], len(p)) }
		readStreams = func(p []byte) uint32 { return readStreamsAVX(&p[0], len(p)) }
	}
}
