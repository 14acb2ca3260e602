//go:build amd64 && !noasm

#include "textflag.h"

// func cpuVendor() (b, d, c uint32): CPUID leaf 0's vendor string
// registers ("Genu" "ineI" "ntel", "Auth" "enti" "cAMD"). Only called
// where AVX2 was found (so the VZEROUPPER, which TestAssemblyIsVEXOnly
// asks of every function, is safe).
TEXT ·cpuVendor(SB), NOSPLIT, $0-12
	XORL AX, AX
	XORL CX, CX
	CPUID
	MOVL BX, b+0(FP)
	MOVL DX, d+4(FP)
	MOVL CX, c+8(FP)
	VZEROUPPER
	RET

// func cpuSignature() uint32: CPUID leaf 1's EAX (stepping, model,
// family and their extensions). Only called where AVX2 was found.
TEXT ·cpuSignature(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL AX, ret+0(FP)
	VZEROUPPER
	RET
