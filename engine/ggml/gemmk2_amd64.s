//go:build amd64 && !noasm

#include "textflag.h"

// Q2_K prompt tiles: one weight row against k = 4 or 8 Q8_K columns
// (xs bytes apart), the row's 2-bit values, scales and mins unpacked once
// per super-block for all the columns. Each column runs dotQ2_KAVX's
// chain on its own registers (8 int32 lanes of exact sums, then per
// super-block one fused multiply-subtract of the mins and one fused
// multiply-add of the sums, hsum_float_8 at the end), so every value is
// bit-identical to the single-row kernel and to dotQ2_KLanes:
//
//	for b := 0; b < nb; b++ {
//		for c := 0; c < k; c++ {
//			acc[c][l] = fma(-float32(mn·bsum lanes), dmin·yd[c], acc[c][l])
//			acc[c][l] = fma(float32(Σ sc·q·y lanes), d·yd[c], acc[c][l])
//		}
//	}
//	out[c·ldo/4] = hsum_float_8(acc[c])
//
// The column registers live in Y16-Y31 (EVEX, AVX-512 VL/BW): 8 float
// accumulators Y16-Y23 and 8 int32 sums Y24-Y31.
//
//	func q2kt1k(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// Column c's operands: c0 (DI), c1 (DI)(R13*1), c2 (DI)(R13*2), c3 (BX),
// c4 (BX)(R13*1), c5 (DX), c6 (DX)(R13*1), c7 (DX)(R13*2), with BX =
// DI+3·xs and DX = DI+5·xs. Every function ends with VZEROUPPER.

DATA q2m03<>+0(SB)/8, $0x0303030303030303
DATA q2m03<>+8(SB)/8, $0x0303030303030303
DATA q2m03<>+16(SB)/8, $0x0303030303030303
DATA q2m03<>+24(SB)/8, $0x0303030303030303
GLOBL q2m03<>(SB), RODATA|NOPTR, $32

DATA q2nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q2nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q2nib<>(SB), RODATA|NOPTR, $16

// q2sel<>+16·g gathers the scale bytes 2g (8 times) and 2g+1 (8 times).
DATA q2sel<>+0(SB)/8, $0x0000000000000000
DATA q2sel<>+8(SB)/8, $0x0101010101010101
DATA q2sel<>+16(SB)/8, $0x0202020202020202
DATA q2sel<>+24(SB)/8, $0x0303030303030303
DATA q2sel<>+32(SB)/8, $0x0404040404040404
DATA q2sel<>+40(SB)/8, $0x0505050505050505
DATA q2sel<>+48(SB)/8, $0x0606060606060606
DATA q2sel<>+56(SB)/8, $0x0707070707070707
DATA q2sel<>+64(SB)/8, $0x0808080808080808
DATA q2sel<>+72(SB)/8, $0x0909090909090909
DATA q2sel<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q2sel<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA q2sel<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA q2sel<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA q2sel<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA q2sel<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q2sel<>(SB), RODATA|NOPTR, $128

// Column operand addressing: C0(off) … C7(off).
#define C0(off) off(DI)
#define C1(off) off(DI)(R13*1)
#define C2(off) off(DI)(R13*2)
#define C3(off) off(BX)
#define C4(off) off(BX)(R13*1)
#define C5(off) off(DX)
#define C6(off) off(DX)(R13*1)
#define C7(off) off(DX)(R13*2)

// Q2MIN starts column c's super-block: acc −= (dmin·yd)·float(mins lanes)
// (Y10: the 16 mins as words, Y2: dmin broadcast) and zeroes its sums.
#define Q2MIN(col, acc, isum) \
	VPMADDWD     col(260), Y10, Y9 \
	VCVTDQ2PS    Y9, Y9 \
	VBROADCASTSS col(0), Y7 \
	VMULPS       Y7, Y2, Y8 \
	VFNMADD231PS Y8, Y9, acc \
	VPXORD       isum, isum, isum

// Q2DOT adds column c's products with the unpacked values Y3, scaled per
// 16 by the words of Y5, to its sums.
#define Q2DOT(col, yoff, isum) \
	VPMADDUBSW col(yoff), Y3, Y6 \
	VPMADDWD   Y5, Y6, Y6 \
	VPADDD     Y6, isum, isum

// Q2SUM ends column c's super-block: acc += (d·yd)·float(sums) (Y0: d).
#define Q2SUM(col, acc, isum) \
	VCVTDQ2PS    isum, isum \
	VBROADCASTSS col(0), Y7 \
	VMULPS       Y7, Y0, Y8 \
	VFMADD231PS  Y8, isum, acc

// Q2GROUP unpacks group g (32 values: Y1 shifted right by sh, scales of
// mask m) and runs every column's Q2DOT on it through dots.
#define Q2GROUP(sh, yoff, m, dots) \
	VPSRLW    $sh, Y1, Y3 \
	VPAND     Y14, Y3, Y3 \
	VPSHUFB   m, X11, X5 \
	VPMOVZXBW X5, Y5 \
	dots(yoff)

#define DOTS4(yoff) \
	Q2DOT(C0, yoff, Y24) \
	Q2DOT(C1, yoff, Y25) \
	Q2DOT(C2, yoff, Y26) \
	Q2DOT(C3, yoff, Y27)

#define DOTS8(yoff) \
	DOTS4(yoff) \
	Q2DOT(C4, yoff, Y28) \
	Q2DOT(C5, yoff, Y29) \
	Q2DOT(C6, yoff, Y30) \
	Q2DOT(C7, yoff, Y31)

#define MINS4 \
	Q2MIN(C0, Y16, Y24) \
	Q2MIN(C1, Y17, Y25) \
	Q2MIN(C2, Y18, Y26) \
	Q2MIN(C3, Y19, Y27)

#define MINS8 \
	MINS4 \
	Q2MIN(C4, Y20, Y28) \
	Q2MIN(C5, Y21, Y29) \
	Q2MIN(C6, Y22, Y30) \
	Q2MIN(C7, Y23, Y31)

#define SUMS4 \
	Q2SUM(C0, Y16, Y24) \
	Q2SUM(C1, Y17, Y25) \
	Q2SUM(C2, Y18, Y26) \
	Q2SUM(C3, Y19, Y27)

#define SUMS8 \
	SUMS4 \
	Q2SUM(C4, Y20, Y28) \
	Q2SUM(C5, Y21, Y29) \
	Q2SUM(C6, Y22, Y30) \
	Q2SUM(C7, Y23, Y31)

#define ADV4 \
	ADDQ $292, DI \
	ADDQ $292, BX

#define ADV8 \
	ADV4 \
	ADDQ $292, DX

// Q2STORE reduces acc as hsum_float_8 (through Y0, as dotQ2_KAVX's HSUM)
// to (R9), then moves R9 to the next output column.
#define Q2STORE(acc) \
	VMOVAPS      acc, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0 \
	VMOVSS       X0, (R9) \
	ADDQ         R10, R9

#define STORES4 \
	Q2STORE(Y16) \
	Q2STORE(Y17) \
	Q2STORE(Y18) \
	Q2STORE(Y19)

#define STORES8 \
	STORES4 \
	Q2STORE(Y20) \
	Q2STORE(Y21) \
	Q2STORE(Y22) \
	Q2STORE(Y23)

#define ZERO4 \
	VPXORD Y16, Y16, Y16 \
	VPXORD Y17, Y17, Y17 \
	VPXORD Y18, Y18, Y18 \
	VPXORD Y19, Y19, Y19

#define ZERO8 \
	ZERO4 \
	VPXORD Y20, Y20, Y20 \
	VPXORD Y21, Y21, Y21 \
	VPXORD Y22, Y22, Y22 \
	VPXORD Y23, Y23, Y23

// Q2TILE is the whole kernel over the columns named by the macros.
#define Q2TILE(zero, mins, dots, sums, adv, stores, label) \
	MOVQ    w+0(FP), SI \
	MOVQ    x+8(FP), DI \
	MOVQ    xs+16(FP), R13 \
	MOVQ    nb+24(FP), CX \
	MOVQ    tab+32(FP), R8 \
	LEAQ    (DI)(R13*2), BX \
	ADDQ    R13, BX \
	LEAQ    (BX)(R13*2), DX \
	VMOVDQU q2m03<>(SB), Y14 \
	VMOVDQU q2nib<>(SB), X13 \
	zero \
label: \
	PREFETCHT0   512(SI) \
	VMOVDQU      (SI), X12 \
	VPSRLW       $4, X12, X10 \
	VPAND        X13, X10, X10 \
	VPMOVZXBW    X10, Y10 \
	VPAND        X13, X12, X11 \
	MOVWLZX      82(SI), AX \
	VBROADCASTSS (R8)(AX*4), Y2 \
	MOVWLZX      80(SI), AX \
	VBROADCASTSS (R8)(AX*4), Y0 \
	mins \
	VMOVDQU      16(SI), Y1 \
	Q2GROUP(0, 4, q2sel<>+0(SB), dots) \
	Q2GROUP(2, 36, q2sel<>+16(SB), dots) \
	Q2GROUP(4, 68, q2sel<>+32(SB), dots) \
	Q2GROUP(6, 100, q2sel<>+48(SB), dots) \
	VMOVDQU      48(SI), Y1 \
	Q2GROUP(0, 132, q2sel<>+64(SB), dots) \
	Q2GROUP(2, 164, q2sel<>+80(SB), dots) \
	Q2GROUP(4, 196, q2sel<>+96(SB), dots) \
	Q2GROUP(6, 228, q2sel<>+112(SB), dots) \
	sums \
	ADDQ         $84, SI \
	adv \
	DECQ         CX \
	JNZ          label \
	MOVQ         out+40(FP), R9 \
	MOVQ         ldo+48(FP), R10 \
	stores \
	VZEROUPPER \
	RET

// func q2kt14(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q2kt14(SB), NOSPLIT, $0-56
	Q2TILE(ZERO4, MINS4, DOTS4, SUMS4, ADV4, STORES4, q2kt14l)

// func q2kt18(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q2kt18(SB), NOSPLIT, $0-56
	Q2TILE(ZERO8, MINS8, DOTS8, SUMS8, ADV8, STORES8, q2kt18l)
