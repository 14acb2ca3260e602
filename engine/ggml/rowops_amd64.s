//go:build amd64 && !noasm

#include "textflag.h"

// func sumSqAVX(x *float32, n int) float64
// n a multiple of 16. Y4-Y7 hold the float64 sums of values 0-3, 4-7,
// 8-11 and 12-15 of every group of 16; each square is a float32 VMULPS
// widened by VCVTPS2PD, as float64(v*v).
TEXT ·sumSqAVX(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	SHRQ   $4, CX
	JEQ    ssdone

ssloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VMULPS       Y0, Y0, Y0
	VMULPS       Y1, Y1, Y1
	VCVTPS2PD    X0, Y2
	VEXTRACTF128 $1, Y0, X0
	VCVTPS2PD    X0, Y0
	VADDPD       Y2, Y4, Y4
	VADDPD       Y0, Y5, Y5
	VCVTPS2PD    X1, Y2
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD    X1, Y1
	VADDPD       Y2, Y6, Y6
	VADDPD       Y1, Y7, Y7
	ADDQ         $64, SI
	DECQ         CX
	JNZ          ssloop

ssdone:
	VADDPD       Y6, Y4, Y4 // s[k] + s[k+8], k 0-3
	VADDPD       Y7, Y5, Y5 // s[k+4] + s[k+12]
	VADDPD       Y5, Y4, Y4 // u[k]
	VEXTRACTF128 $1, Y4, X5
	VADDPD       X5, X4, X4 // u0+u2, u1+u3
	VPERMILPD    $1, X4, X5
	VADDSD       X5, X4, X4
	VMOVSD       X4, ret+16(FP)
	VZEROUPPER
	RET

// func scaleMulAVX(dst, x *float32, n int, s float32, w *float32)
// n a multiple of 8: dst = (x·s)·w.
TEXT ·scaleMulAVX(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Y3
	MOVQ         w+32(FP), DX
	SHRQ         $3, CX
	JEQ          smdone

smloop:
	VMULPS  (SI), Y3, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     smloop

smdone:
	VZEROUPPER
	RET

// func ropePairsAVX(x, cos, sin *float32, n int)
// n pairs, a multiple of 4: P = x·C and Q = swap(x)·S with C and S each
// angle's value twice, then VADDSUBPS: x0·c − x1·s in the even lanes,
// x1·c + x0·s in the odd ones.
TEXT ·ropePairsAVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ cos+8(FP), SI
	MOVQ sin+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $2, CX
	JEQ  rpdone

rploop:
	VMOVUPS     (DI), Y0
	VMOVUPS     (SI), X1
	VMOVUPS     (DX), X2
	VUNPCKLPS   X1, X1, X3
	VUNPCKHPS   X1, X1, X4
	VINSERTF128 $1, X4, Y3, Y3
	VUNPCKLPS   X2, X2, X5
	VUNPCKHPS   X2, X2, X6
	VINSERTF128 $1, X6, Y5, Y5
	VMULPS      Y3, Y0, Y7
	VPERMILPS   $0xB1, Y0, Y8
	VMULPS      Y5, Y8, Y8
	VADDSUBPS   Y8, Y7, Y7
	VMOVUPS     Y7, (DI)
	ADDQ        $32, DI
	ADDQ        $16, SI
	ADDQ        $16, DX
	DECQ        CX
	JNZ         rploop

rpdone:
	VZEROUPPER
	RET

// func ropeHalvesAVX(x, cos, sin *float32, n int)
// n pairs (x[i], x[i+n]); the whole groups of 8 of them.
TEXT ·ropeHalvesAVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ cos+8(FP), SI
	MOVQ sin+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ CX, R8
	SHLQ $2, R8
	SHRQ $3, CX
	JEQ  rhdone

rhloop:
	VMOVUPS (DI), Y0
	VMOVUPS (DI)(R8*1), Y1
	VMOVUPS (SI), Y2
	VMOVUPS (DX), Y3
	VMULPS  Y2, Y0, Y4
	VMULPS  Y3, Y1, Y5
	VSUBPS  Y5, Y4, Y4
	VMULPS  Y3, Y0, Y6
	VMULPS  Y2, Y1, Y7
	VADDPS  Y7, Y6, Y6
	VMOVUPS Y4, (DI)
	VMOVUPS Y6, (DI)(R8*1)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     rhloop

rhdone:
	VZEROUPPER
	RET

// func fp16ToF32Y(x *uint16, y *float32, n int)
// y[i] = fp32(x[i]) for n a multiple of 8 (exact): fp16ToF32Z at 256 bits,
// for the AVX2 tier.
TEXT ·fp16ToF32Y(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JEQ  h2ydone

h2yloop:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       h2yloop

h2ydone:
	VZEROUPPER
	RET
