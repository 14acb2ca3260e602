//go:build amd64 && !noasm

#include "textflag.h"

// Flat GEMM kernels (FlashDecoding++'s flat GEMM for batches of 2-16
// columns): 4 rows by k column pairs (k = 1..4) of the group-of-8
// activation layout (Act group 8, see gemmz_amd64.s), each weight block
// read once for all the pairs. Unlike the tiles of gemmz_amd64.s they load
// each pair's activations (values, dx lanes, correction) once per block
// into registers and reuse them for the 4 rows, which cuts the loads per
// block from 3 per (row, pair) to 3 per pair, and prefetch the next 4 rows
// as the decode strips do (without it every tile starts with DRAM misses
// and the kernel runs at a third of the speed at 1-2 pairs). Every lane runs exactly the
// chain of the 256-bit kernels, so the values are bit-identical to them
// and to the lane twins (gemm_go.go):
//
//	for b := 0; b < nb; b++ {
//		for p := 0; p < k; p++ { // columns 2p and 2p+1, one per 256-bit half
//			for r := 0; r < 4; r++ {
//				acc[r][p] = fma(float32(corr[b][p] + Σ4 w[r][b]·x[b][p]), d_w[r][b]·dx[b][p], acc[r][p])
//			}
//		}
//	}
//	out[c·ldo/4 + r] = hsum_float_8(acc[r][c/2] half c%2)
//
//	func k(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
//
// Every function ends with VZEROUPPER.

// FHSUM reduces the 8 floats of Y10 as hsum_float_8 and stores lane 0 to
// dst; X15 is scratch.
#define FHSUM(dst) \
	VEXTRACTF128 $1, Y10, X15 \
	VADDPS       X15, X10, X10 \
	VMOVHLPS     X10, X10, X15 \
	VADDPS       X15, X10, X10 \
	VMOVSHDUP    X10, X15 \
	VADDSS       X15, X10, X10 \
	VMOVSS       X10, dst

// FSTORE writes acc (Z, Y name yacc) of row byte offset roff: low half to
// column 2p (DI), high half to column 2p+1 (DI+R13).
#define FSTORE(acc, yacc, roff) \
	VMOVAPS       yacc, Y10 \
	FHSUM(roff(DI)) \
	VEXTRACTF64X4 $1, acc, Y10 \
	FHSUM(roff(DI)(R13*1))

// FQ4W unpacks the Q4_0 block at (ptr): nibbles into both halves of zw
// (low nibbles low 128 bits, high nibbles ×16 high 128 bits), its scale
// broadcast into zdw; Z8 holds the mask.
#define FQ4W(ptr, zw, zdw) \
	VBROADCASTI32X4 2(ptr), zw \
	VPANDD          Z8, zw, zw \
	MOVWLZX         (ptr), AX \
	VBROADCASTSS    (R8)(AX*4), zdw

// FQ8W loads the Q8_0 block at (ptr) as uint8 w+128 into both halves.
#define FQ8W(ptr, zw, zdw) \
	VBROADCASTI64X4 2(ptr), zw \
	VPXORD          Z8, zw, zw \
	MOVWLZX         (ptr), AX \
	VBROADCASTSS    (R8)(AX*4), zdw

// FPAIR runs the 4 rows against the column pair at byte offset off of the
// block's group data: Z11 values, Z12 dx lanes, Z13 correction.
#define FPAIR(off, a0, a1, a2, a3) \
	VMOVDQU32   off(DI), Z11 \
	VMOVUPS     off(DX), Z12 \
	VMOVDQU32   off(R12), Z13 \
	FROW(Z0, Z4, a0) \
	FROW(Z1, Z5, a1) \
	FROW(Z2, Z6, a2) \
	FROW(Z3, Z7, a3)

#define FROW(zw, zdw, acc) \
	VMOVDQA32   Z13, Z9 \
	VPDPBUSD    Z11, zw, Z9 \
	VCVTDQ2PS   Z9, Z9 \
	VMULPS      Z12, zdw, Z10 \
	VFMADD231PS Z10, Z9, acc

#define FPAIRS1 \
	FPAIR(0, Z16, Z17, Z18, Z19)

#define FZERO1 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19

#define FSTORES1 \
	FSTORE(Z16, Y16, 0) \
	FSTORE(Z17, Y17, 4) \
	FSTORE(Z18, Y18, 8) \
	FSTORE(Z19, Y19, 12)

#define FPAIRS2 \
	FPAIR(0, Z16, Z17, Z18, Z19) \
	FPAIR(64, Z20, Z21, Z22, Z23)

#define FZERO2 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23

#define FSTORES2 \
	FSTORE(Z16, Y16, 0) \
	FSTORE(Z17, Y17, 4) \
	FSTORE(Z18, Y18, 8) \
	FSTORE(Z19, Y19, 12) \
	LEAQ (DI)(R13*2), DI \
	FSTORE(Z20, Y20, 0) \
	FSTORE(Z21, Y21, 4) \
	FSTORE(Z22, Y22, 8) \
	FSTORE(Z23, Y23, 12)

#define FPAIRS3 \
	FPAIR(0, Z16, Z17, Z18, Z19) \
	FPAIR(64, Z20, Z21, Z22, Z23) \
	FPAIR(128, Z24, Z25, Z26, Z27)

#define FZERO3 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27

#define FSTORES3 \
	FSTORE(Z16, Y16, 0) \
	FSTORE(Z17, Y17, 4) \
	FSTORE(Z18, Y18, 8) \
	FSTORE(Z19, Y19, 12) \
	LEAQ (DI)(R13*2), DI \
	FSTORE(Z20, Y20, 0) \
	FSTORE(Z21, Y21, 4) \
	FSTORE(Z22, Y22, 8) \
	FSTORE(Z23, Y23, 12) \
	LEAQ (DI)(R13*2), DI \
	FSTORE(Z24, Y24, 0) \
	FSTORE(Z25, Y25, 4) \
	FSTORE(Z26, Y26, 8) \
	FSTORE(Z27, Y27, 12)

#define FPAIRS4 \
	FPAIR(0, Z16, Z17, Z18, Z19) \
	FPAIR(64, Z20, Z21, Z22, Z23) \
	FPAIR(128, Z24, Z25, Z26, Z27) \
	FPAIR(192, Z28, Z29, Z30, Z31)

#define FZERO4 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z28, Z28, Z28 \
	VPXORD Z29, Z29, Z29 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31

#define FSTORES4 \
	FSTORE(Z16, Y16, 0) \
	FSTORE(Z17, Y17, 4) \
	FSTORE(Z18, Y18, 8) \
	FSTORE(Z19, Y19, 12) \
	LEAQ (DI)(R13*2), DI \
	FSTORE(Z20, Y20, 0) \
	FSTORE(Z21, Y21, 4) \
	FSTORE(Z22, Y22, 8) \
	FSTORE(Z23, Y23, 12) \
	LEAQ (DI)(R13*2), DI \
	FSTORE(Z24, Y24, 0) \
	FSTORE(Z25, Y25, 4) \
	FSTORE(Z26, Y26, 8) \
	FSTORE(Z27, Y27, 12) \
	LEAQ (DI)(R13*2), DI \
	FSTORE(Z28, Y28, 0) \
	FSTORE(Z29, Y29, 4) \
	FSTORE(Z30, Y30, 8) \
	FSTORE(Z31, Y31, 12)

// FLAT is the 4-row kernel over k pairs: zero, loop over the blocks,
// store.
#define FLAT(unpack, sz, const, zero, pairs, stores, label) \
	MOVQ w+0(FP), SI \
	MOVQ rs+8(FP), R9 \
	MOVQ qs+16(FP), DI \
	MOVQ dx+24(FP), DX \
	MOVQ corr+32(FP), R12 \
	MOVQ nb+40(FP), CX \
	MOVQ tab+48(FP), R8 \
	LEAQ (SI)(R9*1), BX \
	LEAQ (BX)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	VBROADCASTI64X4 const<>(SB), Z8 \
	zero \
label: \
	PREFETCHT0 (SI)(R9*4) \
	PREFETCHT0 (BX)(R9*4) \
	PREFETCHT0 (R10)(R9*4) \
	PREFETCHT0 (R11)(R9*4) \
	unpack(SI, Z0, Z4) \
	unpack(BX, Z1, Z5) \
	unpack(R10, Z2, Z6) \
	unpack(R11, Z3, Z7) \
	pairs \
	ADDQ $sz, SI \
	ADDQ $sz, BX \
	ADDQ $sz, R10 \
	ADDQ $sz, R11 \
	ADDQ $256, DI \
	ADDQ $256, DX \
	ADDQ $256, R12 \
	DECQ CX \
	JNZ  label \
	MOVQ out+56(FP), DI \
	MOVQ ldo+64(FP), R13 \
	stores \
	VZEROUPPER \
	RET

// The masks as in gemmz_amd64.s.
DATA fq4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA fq4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA fq4mask<>+16(SB)/8, $0xf0f0f0f0f0f0f0f0
DATA fq4mask<>+24(SB)/8, $0xf0f0f0f0f0f0f0f0
GLOBL fq4mask<>(SB), RODATA|NOPTR, $32

DATA fflip<>+0(SB)/8, $0x8080808080808080
DATA fflip<>+8(SB)/8, $0x8080808080808080
DATA fflip<>+16(SB)/8, $0x8080808080808080
DATA fflip<>+24(SB)/8, $0x8080808080808080
GLOBL fflip<>(SB), RODATA|NOPTR, $32

// func q40f4p1(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p1(SB), NOSPLIT, $0-72
	FLAT(FQ4W, 18, fq4mask, FZERO1, FPAIRS1, FSTORES1, q40f4p1l)

// func q40f4p2(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p2(SB), NOSPLIT, $0-72
	FLAT(FQ4W, 18, fq4mask, FZERO2, FPAIRS2, FSTORES2, q40f4p2l)

// func q40f4p3(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p3(SB), NOSPLIT, $0-72
	FLAT(FQ4W, 18, fq4mask, FZERO3, FPAIRS3, FSTORES3, q40f4p3l)

// func q40f4p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p4(SB), NOSPLIT, $0-72
	FLAT(FQ4W, 18, fq4mask, FZERO4, FPAIRS4, FSTORES4, q40f4p4l)

// func q80f4p1(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p1(SB), NOSPLIT, $0-72
	FLAT(FQ8W, 34, fflip, FZERO1, FPAIRS1, FSTORES1, q80f4p1l)

// func q80f4p2(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p2(SB), NOSPLIT, $0-72
	FLAT(FQ8W, 34, fflip, FZERO2, FPAIRS2, FSTORES2, q80f4p2l)

// func q80f4p3(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p3(SB), NOSPLIT, $0-72
	FLAT(FQ8W, 34, fflip, FZERO3, FPAIRS3, FSTORES3, q80f4p3l)

// func q80f4p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p4(SB), NOSPLIT, $0-72
	FLAT(FQ8W, 34, fflip, FZERO4, FPAIRS4, FSTORES4, q80f4p4l)
