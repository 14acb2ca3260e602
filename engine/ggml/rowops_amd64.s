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
