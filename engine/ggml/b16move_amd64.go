//go:build amd64 && !noasm

package ggml

//go:noescape
func rows16InQ8AVX(dst, src *byte, nb, rs int)

//go:noescape
func rows16InQ4AVX(dst, src *byte, nb, rs int)

func init() {
	if hasAVX2 {
		rows16InQ8Impl, rows16InQ4Impl = rows16InQ8Asm, rows16InQ4Asm
	}
}

// rows16InQ8Asm is rows16InQ8 by transposes of dwords (b16move_amd64.s).
func rows16InQ8Asm(dst, src []byte, nb, rs int) {
	if nb <= 0 {
		return
	}
	_, _ = dst[544*nb-1], src[15*rs+34*nb-1]
	rows16InQ8AVX(&dst[0], &src[0], nb, rs)
}

// rows16InQ4Asm is rows16InQ4 by transposes of dwords.
func rows16InQ4Asm(dst, src []byte, nb, rs int) {
	if nb <= 0 {
		return
	}
	_, _ = dst[288*nb-1], src[15*rs+18*nb-1]
	rows16InQ4AVX(&dst[0], &src[0], nb, rs)
}
