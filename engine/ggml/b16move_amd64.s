//go:build amd64 && !noasm

#include "textflag.h"

// The tile layout's rewrite of one 16-row group (b16.go: rows16InQ8,
// rows16InQ4, the plain-Go twins), as transposes of dwords: block b of
// the 16 rows, rs bytes apart in src, to the 16·TypeSize bytes at
// 16·TypeSize·b of dst. The load's copy runs it on every Q4_0/Q8_0
// matrix (engine/model/loadcopy.go); the twins moved 3–4 GB/s on a Zen 3
// core, the load's largest cost after the copy itself.

// Row pointers: SI row 0 of the block, R10 = rs, R11 = 3·rs, R12 = 5·rs,
// R13 = 7·rs; rows 0–7 at (SI), (SI)(R10*1), (SI)(R10*2), (SI)(R11*1),
// (SI)(R10*4), (SI)(R12*1), (SI)(R11*2), (SI)(R13*1), rows 8–15 the same
// from BX = SI + 8·rs.

// SCALES copies the 16 rows' fp16 scales (the first 2 bytes of each row's
// block) to 0(DI), 2(DI), … 30(DI).
#define SCALES \
	MOVWLZX (SI), AX; MOVW AX, 0(DI) \
	MOVWLZX (SI)(R10*1), AX; MOVW AX, 2(DI) \
	MOVWLZX (SI)(R10*2), AX; MOVW AX, 4(DI) \
	MOVWLZX (SI)(R11*1), AX; MOVW AX, 6(DI) \
	MOVWLZX (SI)(R10*4), AX; MOVW AX, 8(DI) \
	MOVWLZX (SI)(R12*1), AX; MOVW AX, 10(DI) \
	MOVWLZX (SI)(R11*2), AX; MOVW AX, 12(DI) \
	MOVWLZX (SI)(R13*1), AX; MOVW AX, 14(DI) \
	MOVWLZX (BX), AX; MOVW AX, 16(DI) \
	MOVWLZX (BX)(R10*1), AX; MOVW AX, 18(DI) \
	MOVWLZX (BX)(R10*2), AX; MOVW AX, 20(DI) \
	MOVWLZX (BX)(R11*1), AX; MOVW AX, 22(DI) \
	MOVWLZX (BX)(R10*4), AX; MOVW AX, 24(DI) \
	MOVWLZX (BX)(R12*1), AX; MOVW AX, 26(DI) \
	MOVWLZX (BX)(R11*2), AX; MOVW AX, 28(DI) \
	MOVWLZX (BX)(R13*1), AX; MOVW AX, 30(DI)

// Q8T8 transposes the 8 dwords at 2(P) of 8 rows (P's row pointers):
// dword k of the 8 rows goes to 32+64k+OFF(DI), side by side. Unpacking
// dwords pairs rows 0-1, 2-3, …, (d0 d1 | d4 d5 and d2 d3 | d6 d7 per
// lane); unpacking qwords makes rows 0-3 and 4-7 of d0 | d4, d1 | d5, …;
// VPERM2I128 joins the halves: d0 of rows 0-7, then d4 of rows 0-7, ….
#define Q8T8(P, OFF) \
	VMOVDQU    2(P), Y0 \
	VMOVDQU    2(P)(R10*1), Y1 \
	VMOVDQU    2(P)(R10*2), Y2 \
	VMOVDQU    2(P)(R11*1), Y3 \
	VMOVDQU    2(P)(R10*4), Y4 \
	VMOVDQU    2(P)(R12*1), Y5 \
	VMOVDQU    2(P)(R11*2), Y6 \
	VMOVDQU    2(P)(R13*1), Y7 \
	VPUNPCKLDQ Y1, Y0, Y8 \
	VPUNPCKHDQ Y1, Y0, Y9 \
	VPUNPCKLDQ Y3, Y2, Y10 \
	VPUNPCKHDQ Y3, Y2, Y11 \
	VPUNPCKLDQ Y5, Y4, Y12 \
	VPUNPCKHDQ Y5, Y4, Y13 \
	VPUNPCKLDQ Y7, Y6, Y14 \
	VPUNPCKHDQ Y7, Y6, Y15 \
	VPUNPCKLQDQ Y10, Y8, Y0 \
	VPUNPCKHQDQ Y10, Y8, Y1 \
	VPUNPCKLQDQ Y11, Y9, Y2 \
	VPUNPCKHQDQ Y11, Y9, Y3 \
	VPUNPCKLQDQ Y14, Y12, Y4 \
	VPUNPCKHQDQ Y14, Y12, Y5 \
	VPUNPCKLQDQ Y15, Y13, Y6 \
	VPUNPCKHQDQ Y15, Y13, Y7 \
	VPERM2I128 $0x20, Y4, Y0, Y8 \
	VPERM2I128 $0x31, Y4, Y0, Y9 \
	VPERM2I128 $0x20, Y5, Y1, Y10 \
	VPERM2I128 $0x31, Y5, Y1, Y11 \
	VPERM2I128 $0x20, Y6, Y2, Y12 \
	VPERM2I128 $0x31, Y6, Y2, Y13 \
	VPERM2I128 $0x20, Y7, Y3, Y14 \
	VPERM2I128 $0x31, Y7, Y3, Y15 \
	VMOVDQU    Y8, OFF+32(DI) \
	VMOVDQU    Y10, OFF+96(DI) \
	VMOVDQU    Y12, OFF+160(DI) \
	VMOVDQU    Y14, OFF+224(DI) \
	VMOVDQU    Y9, OFF+288(DI) \
	VMOVDQU    Y11, OFF+352(DI) \
	VMOVDQU    Y13, OFF+416(DI) \
	VMOVDQU    Y15, OFF+480(DI)

// Q4T4 transposes the 4 dwords at 2(P) of 4 rows (P, P+rs, P+2·rs,
// P+3·rs): dword k of the 4 rows goes to 32+64k+OFF(DI), side by side.
#define Q4T4(P, OFF) \
	VMOVDQU    2(P), X0 \
	VMOVDQU    2(P)(R10*1), X1 \
	VMOVDQU    2(P)(R10*2), X2 \
	VMOVDQU    2(P)(R11*1), X3 \
	VPUNPCKLDQ X1, X0, X4 \
	VPUNPCKHDQ X1, X0, X5 \
	VPUNPCKLDQ X3, X2, X6 \
	VPUNPCKHDQ X3, X2, X7 \
	VPUNPCKLQDQ X6, X4, X0 \
	VPUNPCKHQDQ X6, X4, X1 \
	VPUNPCKLQDQ X7, X5, X2 \
	VPUNPCKHQDQ X7, X5, X3 \
	VMOVDQU    X0, OFF+32(DI) \
	VMOVDQU    X1, OFF+96(DI) \
	VMOVDQU    X2, OFF+160(DI) \
	VMOVDQU    X3, OFF+224(DI)

// ARGS loads both functions' arguments: DI dst, SI src, CX nb, and the
// row registers from rs.
#define ARGS \
	MOVQ dst+0(FP), DI \
	MOVQ src+8(FP), SI \
	MOVQ nb+16(FP), CX \
	MOVQ rs+24(FP), R10 \
	LEAQ (R10)(R10*2), R11 \
	LEAQ (R10)(R10*4), R12 \
	MOVQ R10, R13 \
	SHLQ $3, R13 \
	SUBQ R10, R13

// func rows16InQ8AVX(dst, src *byte, nb, rs int)
TEXT ·rows16InQ8AVX(SB), NOSPLIT, $0-32
	ARGS
	TESTQ CX, CX
	JEQ   q8done

q8loop:
	LEAQ (SI)(R10*8), BX
	SCALES
	Q8T8(SI, 0)
	Q8T8(BX, 32)
	ADDQ $34, SI
	ADDQ $544, DI
	DECQ CX
	JNE  q8loop

q8done:
	VZEROUPPER
	RET

// func rows16InQ4AVX(dst, src *byte, nb, rs int)
TEXT ·rows16InQ4AVX(SB), NOSPLIT, $0-32
	ARGS
	TESTQ CX, CX
	JEQ   q4done

q4loop:
	LEAQ (SI)(R10*8), BX
	SCALES
	LEAQ (SI)(R10*4), DX
	Q4T4(SI, 0)
	Q4T4(DX, 16)
	LEAQ (BX)(R10*4), DX
	Q4T4(BX, 32)
	Q4T4(DX, 48)
	ADDQ $18, SI
	ADDQ $288, DI
	DECQ CX
	JNE  q4loop

q4done:
	VZEROUPPER
	RET
