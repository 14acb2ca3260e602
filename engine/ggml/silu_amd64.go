//go:build amd64 && !noasm

package ggml

//go:noescape
func siluMulAVX(h, gate, up *float32, n int, tab *[22][4]uint64)

//go:noescape
func siluMulAVX512(h, gate, up *float32, n int, tab *[22][4]uint64)

// siluUse512 selects the 512-bit kernel (a variable so that tests can run
// both).
var siluUse512 = hasAVX512

func init() {
	if hasAVX2 {
		siluMul = siluMulAsm
	}
}

// siluMulAsm runs groups of 16 in the 512-bit kernel where there is one,
// groups of 8 in the AVX2 kernel and the tail through the twin.
func siluMulAsm(h, gate, up []float32) {
	i := 0
	if n16 := len(h) &^ 15; siluUse512 && n16 > 0 {
		siluMulAVX512(&h[0], &gate[0], &up[0], n16, &siluTab)
		i = n16
	}
	if n8 := (len(h) - i) &^ 7; n8 > 0 {
		siluMulAVX(&h[i], &gate[i], &up[i], n8, &siluTab)
		i += n8
	}
	siluMulGo(h[i:], gate[i:], up[i:])
}
