//go:build amd64 && !noasm

#include "textflag.h"

// SiLU·gate kernel (see silu.go: siluMulGo and expSiLU are the Go twins it
// matches bit for bit). VEX-encoded AVX2/FMA only.

// One Horner step on both halves: p = p·r + tab[row].
#define POLY(off) \
	VFMADD213PD off(AX), Y2, Y6 \
	VFMADD213PD off(AX), Y3, Y7

// func siluMulAVX(h, gate, up *float32, n int, tab *[22][4]uint64)
//
// n a multiple of 8. Per 8 elements: y = −gate widened to two 4-lane
// float64 halves, clamped to [lo, hi] (NaN passes: it is the second
// source of VMAXPD/VMINPD), t = y·log2e + magic, k = t − magic,
// r = y − k·ln2hi − k·ln2lo, p = Horner(r), e = p with (t << 52) added to
// its bits, narrowed to float32; h = gate / (1 + e) · up.
TEXT ·siluMulAVX(SB), NOSPLIT, $0-40
	MOVQ h+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ tab+32(FP), AX

	VMOVUPD 0(AX), Y8    // lo
	VMOVUPD 32(AX), Y9   // hi
	VMOVUPD 64(AX), Y10  // log2e
	VMOVUPD 96(AX), Y11  // magic
	VMOVUPD 128(AX), Y12 // ln2hi
	VMOVUPD 160(AX), Y13 // ln2lo
	VMOVUPS 640(AX), Y14 // float32 sign mask
	VMOVUPS 672(AX), Y15 // float32 1

	SHRQ $3, CX
	JZ   done

loop:
	VMOVUPS      (SI), Y0
	VXORPS       Y14, Y0, Y1
	VEXTRACTF128 $1, Y1, X3
	VCVTPS2PD    X1, Y2
	VCVTPS2PD    X3, Y3
	VMAXPD       Y2, Y8, Y2
	VMAXPD       Y3, Y8, Y3
	VMINPD       Y2, Y9, Y2
	VMINPD       Y3, Y9, Y3
	VMOVAPD      Y11, Y4
	VMOVAPD      Y11, Y5
	VFMADD231PD  Y2, Y10, Y4
	VFMADD231PD  Y3, Y10, Y5
	VSUBPD       Y11, Y4, Y6
	VSUBPD       Y11, Y5, Y7
	VFNMADD231PD Y6, Y12, Y2
	VFNMADD231PD Y7, Y12, Y3
	VFNMADD231PD Y6, Y13, Y2
	VFNMADD231PD Y7, Y13, Y3
	VMOVUPD      192(AX), Y6
	VMOVAPD      Y6, Y7
	POLY(224)
	POLY(256)
	POLY(288)
	POLY(320)
	POLY(352)
	POLY(384)
	POLY(416)
	POLY(448)
	POLY(480)
	POLY(512)
	POLY(544)
	POLY(576)
	POLY(608)
	VPSLLQ       $52, Y4, Y4
	VPSLLQ       $52, Y5, Y5
	VPADDQ       Y4, Y6, Y6
	VPADDQ       Y5, Y7, Y7
	VCVTPD2PSY   Y6, X6
	VCVTPD2PSY   Y7, X7
	VINSERTF128  $1, X7, Y6, Y6
	VADDPS       Y15, Y6, Y6
	VDIVPS       Y6, Y0, Y0
	VMULPS       (DX), Y0, Y0
	VMOVUPS      Y0, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DX
	ADDQ         $32, DI
	DECQ         CX
	JNZ          loop

done:
	VZEROUPPER
	RET

// One Horner step on both halves, the coefficient broadcast from tab.
#define POLYZ(off) \
	VFMADD213PD.BCST off(AX), Z2, Z6 \
	VFMADD213PD.BCST off(AX), Z3, Z7

// func siluMulAVX512(h, gate, up *float32, n int, tab *[22][4]uint64)
//
// siluMulAVX's steps over 16 elements at a time (two 8-lane float64
// halves); n a multiple of 16. AVX-512F only.
TEXT ·siluMulAVX512(SB), NOSPLIT, $0-40
	MOVQ h+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ tab+32(FP), AX

	VBROADCASTSD 0(AX), Z8    // lo
	VBROADCASTSD 32(AX), Z9   // hi
	VBROADCASTSD 64(AX), Z10  // log2e
	VBROADCASTSD 96(AX), Z11  // magic
	VBROADCASTSD 128(AX), Z12 // ln2hi
	VBROADCASTSD 160(AX), Z13 // ln2lo
	VBROADCASTSS 640(AX), Z14 // float32 sign mask
	VBROADCASTSS 672(AX), Z15 // float32 1
	VBROADCASTSD 192(AX), Z16 // c13

	SHRQ $4, CX
	JZ   zdone

zloop:
	VMOVUPS       (SI), Z0
	VPXORD        Z14, Z0, Z1
	VEXTRACTF64X4 $1, Z1, Y3
	VCVTPS2PD     Y1, Z2
	VCVTPS2PD     Y3, Z3
	VMAXPD        Z2, Z8, Z2
	VMAXPD        Z3, Z8, Z3
	VMINPD        Z2, Z9, Z2
	VMINPD        Z3, Z9, Z3
	VMOVAPD       Z11, Z4
	VMOVAPD       Z11, Z5
	VFMADD231PD   Z2, Z10, Z4
	VFMADD231PD   Z3, Z10, Z5
	VSUBPD        Z11, Z4, Z6
	VSUBPD        Z11, Z5, Z7
	VFNMADD231PD  Z6, Z12, Z2
	VFNMADD231PD  Z7, Z12, Z3
	VFNMADD231PD  Z6, Z13, Z2
	VFNMADD231PD  Z7, Z13, Z3
	VMOVAPD       Z16, Z6
	VMOVAPD       Z16, Z7
	POLYZ(224)
	POLYZ(256)
	POLYZ(288)
	POLYZ(320)
	POLYZ(352)
	POLYZ(384)
	POLYZ(416)
	POLYZ(448)
	POLYZ(480)
	POLYZ(512)
	POLYZ(544)
	POLYZ(576)
	POLYZ(608)
	VPSLLQ        $52, Z4, Z4
	VPSLLQ        $52, Z5, Z5
	VPADDQ        Z4, Z6, Z6
	VPADDQ        Z5, Z7, Z7
	VCVTPD2PS     Z6, Y6
	VCVTPD2PS     Z7, Y7
	VINSERTF64X4  $1, Y7, Z6, Z6
	VADDPS        Z15, Z6, Z6
	VDIVPS        Z6, Z0, Z0
	VMULPS        (DX), Z0, Z0
	VMOVUPS       Z0, (DI)
	ADDQ          $64, SI
	ADDQ          $64, DX
	ADDQ          $64, DI
	DECQ          CX
	JNZ           zloop

zdone:
	VZEROUPPER
	RET
