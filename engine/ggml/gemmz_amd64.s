//go:build amd64 && !noasm

#include "textflag.h"

// 512-bit VNNI matrix kernels for Q8_0 against activation columns
// prepared in groups of 8 (Act with group 8: per block, the 8 columns' 32
// values contiguous, and likewise their dx8 and corr lanes). One 512-bit
// register holds two columns' 8 lanes side by side, so each instruction
// serves two (row, column) pairs; every lane runs exactly the chain of the
// 256-bit kernels (gemm_amd64.s), and the stores reduce each half as
// hsum_float_8: the values are bit-identical to theirs. Every function ends
// with VZEROUPPER.
//
//	func k(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
//
// out[c·ldo/4 + r] for the tile's rows r and the group's 8 columns c.
// (Q4_0's group layout is the pair layout of gemmflat_amd64.s, read by its
// flat kernels only.)

// The unpack mask, 32 bytes broadcast to both halves: Q8_0 flips the sign
// bit.
DATA zflip<>+0(SB)/8, $0x8080808080808080
DATA zflip<>+8(SB)/8, $0x8080808080808080
DATA zflip<>+16(SB)/8, $0x8080808080808080
DATA zflip<>+24(SB)/8, $0x8080808080808080
GLOBL zflip<>(SB), RODATA|NOPTR, $32

// ZHSUM reduces the 8 floats of Y10 as hsum_float_8 into X10 and stores
// lane 0 to dst; X15 is scratch.
#define ZHSUM(dst) \
	VEXTRACTF128 $1, Y10, X15 \
	VADDPS       X15, X10, X10 \
	VMOVHLPS     X10, X10, X15 \
	VADDPS       X15, X10, X10 \
	VMOVSHDUP    X10, X15 \
	VADDSS       X15, X10, X10 \
	VMOVSS       X10, dst

// ZSTORE writes accumulator acc (Z, its Y name yacc) of row r (byte offset
// roff) and column pair p to out: the low half is column 2p (at R13·2p),
// the high half column 2p+1. DI points at column 2p's row 0.
#define ZSTORE(acc, yacc, roff) \
	VMOVAPS       yacc, Y10 \
	ZHSUM(roff(DI)) \
	VEXTRACTF64X4 $1, acc, Y10 \
	ZHSUM(roff(DI)(R13*1))

// Q8WZ loads the Q8_0 block at (ptr) as uint8 w+128 into both halves.
#define Q8WZ(ptr, zw, zdw) \
	VBROADCASTI64X4 2(ptr), zw \
	VPXORD          Z8, zw, zw \
	MOVWLZX         (ptr), AX \
	VBROADCASTSS    (R8)(AX*4), zdw

// PAIRZ: acc += (d_w·d_x) · (corr + Σ w·x) per lane for one row and the
// column pair at byte offset off of the block's group data.
#define PAIRZ(off, zw, zdw, acc) \
	VMOVDQU32   off(R12), Z9 \
	VPDPBUSD    off(DI), zw, Z9 \
	VCVTDQ2PS   Z9, Z9 \
	VMULPS      off(DX), zdw, Z10 \
	VFMADD231PS Z10, Z9, acc

#define ZARGS \
	MOVQ w+0(FP), SI \
	MOVQ rs+8(FP), R9 \
	MOVQ qs+16(FP), DI \
	MOVQ dx+24(FP), DX \
	MOVQ corr+32(FP), R12 \
	MOVQ nb+40(FP), CX \
	MOVQ tab+48(FP), R8

// TILEZ4 is the 4-row by 8-column kernel; accumulators Z16-Z31, row r and
// pair p in Z(16+4p+r).
#define TILEZ4(unpack, sz, const, label) \
	ZARGS \
	LEAQ (SI)(R9*1), BX \
	LEAQ (BX)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	VBROADCASTI64X4 const<>(SB), Z8 \
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
	VPXORD Z31, Z31, Z31 \
label: \
	unpack(SI, Z0, Z4) \
	unpack(BX, Z1, Z5) \
	unpack(R10, Z2, Z6) \
	unpack(R11, Z3, Z7) \
	PAIRZ(0, Z0, Z4, Z16) \
	PAIRZ(0, Z1, Z5, Z17) \
	PAIRZ(0, Z2, Z6, Z18) \
	PAIRZ(0, Z3, Z7, Z19) \
	PAIRZ(64, Z0, Z4, Z20) \
	PAIRZ(64, Z1, Z5, Z21) \
	PAIRZ(64, Z2, Z6, Z22) \
	PAIRZ(64, Z3, Z7, Z23) \
	PAIRZ(128, Z0, Z4, Z24) \
	PAIRZ(128, Z1, Z5, Z25) \
	PAIRZ(128, Z2, Z6, Z26) \
	PAIRZ(128, Z3, Z7, Z27) \
	PAIRZ(192, Z0, Z4, Z28) \
	PAIRZ(192, Z1, Z5, Z29) \
	PAIRZ(192, Z2, Z6, Z30) \
	PAIRZ(192, Z3, Z7, Z31) \
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
	ZSTORE(Z16, Y16, 0) \
	ZSTORE(Z17, Y17, 4) \
	ZSTORE(Z18, Y18, 8) \
	ZSTORE(Z19, Y19, 12) \
	LEAQ (DI)(R13*2), DI \
	ZSTORE(Z20, Y20, 0) \
	ZSTORE(Z21, Y21, 4) \
	ZSTORE(Z22, Y22, 8) \
	ZSTORE(Z23, Y23, 12) \
	LEAQ (DI)(R13*2), DI \
	ZSTORE(Z24, Y24, 0) \
	ZSTORE(Z25, Y25, 4) \
	ZSTORE(Z26, Y26, 8) \
	ZSTORE(Z27, Y27, 12) \
	LEAQ (DI)(R13*2), DI \
	ZSTORE(Z28, Y28, 0) \
	ZSTORE(Z29, Y29, 4) \
	ZSTORE(Z30, Y30, 8) \
	ZSTORE(Z31, Y31, 12) \
	VZEROUPPER \
	RET

// TILEZ1 is the 1-row by 8-column kernel (leftover rows).
#define TILEZ1(unpack, sz, const, label) \
	ZARGS \
	VBROADCASTI64X4 const<>(SB), Z8 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z28, Z28, Z28 \
label: \
	unpack(SI, Z0, Z4) \
	PAIRZ(0, Z0, Z4, Z16) \
	PAIRZ(64, Z0, Z4, Z20) \
	PAIRZ(128, Z0, Z4, Z24) \
	PAIRZ(192, Z0, Z4, Z28) \
	ADDQ $sz, SI \
	ADDQ $256, DI \
	ADDQ $256, DX \
	ADDQ $256, R12 \
	DECQ CX \
	JNZ  label \
	MOVQ out+56(FP), DI \
	MOVQ ldo+64(FP), R13 \
	ZSTORE(Z16, Y16, 0) \
	LEAQ (DI)(R13*2), DI \
	ZSTORE(Z20, Y20, 0) \
	LEAQ (DI)(R13*2), DI \
	ZSTORE(Z24, Y24, 0) \
	LEAQ (DI)(R13*2), DI \
	ZSTORE(Z28, Y28, 0) \
	VZEROUPPER \
	RET

// func q80z48(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80z48(SB), NOSPLIT, $0-72
	TILEZ4(Q8WZ, 34, zflip, q80z48l)

// func q80z18(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80z18(SB), NOSPLIT, $0-72
	TILEZ1(Q8WZ, 34, zflip, q80z18l)
