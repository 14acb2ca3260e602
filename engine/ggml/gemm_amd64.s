//go:build amd64 && !noasm

#include "textflag.h"

// Matrix kernels for the 32-block weight types against prepared Q8_0
// activations (see Act): register tiles of R weight rows by C activation
// columns. Every (row, column) pair runs exactly the chain of the
// matrix-vector kernel: per block, the 8 int32 lane sums of 4 products
// (exact), the scale d_w·d_x rounded to float32, one fused multiply-add per
// lane into the pair's accumulator; at the end the lanes are summed as
// ggml's hsum_float_8. So a tile, a 4-row strip and a single row give
// bit-identical values, and the plain-Go lane twins (gemm_go.go) agree bit
// for bit.
//
// Two tiers: AVX2 (vpmaddubsw + vpmaddwd, 16 registers) and AVX-512 VNNI
// on 256-bit registers (vpdpbusd, 32 registers: EVEX-encoded, no 512-bit
// instructions, so no frequency penalty). Every function ends with
// VZEROUPPER and uses only VEX/EVEX vector instructions.
//
// Uniform signature (cs: column stride of qs, dx and corr in bytes; ldo:
// column stride of out in bytes; corr unused by the Q8_0 AVX2 kernels):
//
//	func k(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

DATA gnibble<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gnibble<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gnibble<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gnibble<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gnibble<>(SB), RODATA|NOPTR, $32

DATA gones16<>+0(SB)/8, $0x0001000100010001
DATA gones16<>+8(SB)/8, $0x0001000100010001
DATA gones16<>+16(SB)/8, $0x0001000100010001
DATA gones16<>+24(SB)/8, $0x0001000100010001
GLOBL gones16<>(SB), RODATA|NOPTR, $32

// Shift counts per qword for VPSRLVQ: the low 128 bits keep the low
// nibbles, the high 128 bits get the high nibbles of a broadcast payload.
DATA ghishift<>+0(SB)/8, $0
DATA ghishift<>+8(SB)/8, $0
DATA ghishift<>+16(SB)/8, $4
DATA ghishift<>+24(SB)/8, $4
GLOBL ghishift<>(SB), RODATA|NOPTR, $32

// gq4mask keeps the low nibbles in the low 128 bits and the high nibbles,
// unshifted (16·q), in the high 128 bits of a broadcast Q4_0 payload: the
// VNNI tier's Q4_0 unpack is one AND, and its activation columns carry
// d_x/16 and 16·corr in lanes 4-7 (Act.hi16), which gives the same
// products bit for bit (a power of two moves through the rounding).
DATA gq4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gq4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gq4mask<>+16(SB)/8, $0xf0f0f0f0f0f0f0f0
DATA gq4mask<>+24(SB)/8, $0xf0f0f0f0f0f0f0f0
GLOBL gq4mask<>(SB), RODATA|NOPTR, $32

// flip80 turns int8 w into the uint8 w+128 (the offset moves to corr).
DATA gflip80<>+0(SB)/8, $0x8080808080808080
DATA gflip80<>+8(SB)/8, $0x8080808080808080
DATA gflip80<>+16(SB)/8, $0x8080808080808080
DATA gflip80<>+24(SB)/8, $0x8080808080808080
GLOBL gflip80<>(SB), RODATA|NOPTR, $32

// GHSUM reduces the 8 floats of Y register acc (X register xacc) as
// ggml's hsum_float_8 and stores lane 0 to dst; X15 is scratch.
#define GHSUM(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X15 \
	VADDPS       X15, xacc, xacc \
	VMOVHLPS     xacc, xacc, X15 \
	VADDPS       X15, xacc, xacc \
	VMOVSHDUP    xacc, X15 \
	VADDSS       X15, xacc, xacc \
	VMOVSS       xacc, dst

// ARGS loads the uniform arguments: SI w, R9 rs, DI qs, DX dx, R12 corr,
// R13 cs, CX nb, R8 tab; R14 = 3·cs.
#define ARGS \
	MOVQ w+0(FP), SI \
	MOVQ rs+8(FP), R9 \
	MOVQ qs+16(FP), DI \
	MOVQ dx+24(FP), DX \
	MOVQ corr+32(FP), R12 \
	MOVQ cs+40(FP), R13 \
	MOVQ nb+48(FP), CX \
	MOVQ tab+56(FP), R8 \
	LEAQ (R13)(R13*2), R14

// ROWS4 points BX, R10, R11 at rows 1-3.
#define ROWS4 \
	LEAQ (SI)(R9*1), BX \
	LEAQ (BX)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11

// STEP advances the activation pointers one block.
#define STEP \
	ADDQ $32, DI \
	ADDQ $32, DX \
	ADDQ $32, R12

// NEXT4 ends a step of a 4-row loop: the row pointers SI, BX, R10 and R11
// sz bytes on, the activation pointers one block, and back to label
// while blocks remain.
#define NEXT4(sz, label) \
	ADDQ $sz, SI \
	ADDQ $sz, BX \
	ADDQ $sz, R10 \
	ADDQ $sz, R11 \
	STEP \
	DECQ CX \
	JNZ  label

// SCALE broadcasts the fp32 value of the fp16 scale at (ptr) into ydw,
// through the fp16Table at R8: two loads and no vector ALU work, where a
// VPBROADCASTW and VCVTPH2PS pair takes shuffle and FP-port uops.
#define SCALE(ptr, ydw) \
	MOVWLZX      (ptr), AX \
	VBROADCASTSS (R8)(AX*4), ydw

// SCALEC converts the fp16 scale at (ptr) instead of looking it up (the
// same float32, exactly): in a stream of weights the 256 KiB table leaves
// the cache, and the Q4_0 strip, at 18 bytes per lookup, read 12-15
// against 15-17 GB/s of weights (BenchmarkKStream, 1 thread, 2026-11-25).
#define SCALEC(ptr, ydw) \
	VPBROADCASTW (ptr), X13 \
	VCVTPH2PS    X13, ydw

// Q4N unpacks the 32 nibbles of the Q4_0 block at (ptr) into yw (uint8,
// element order), mask the nibble mask (Y14, or gnibble in memory).
#define Q4N(ptr, yw, mask) \
	VBROADCASTI128 2(ptr), yw \
	VPSRLVQ        ghishift<>(SB), yw, yw \
	VPAND          mask, yw, yw

// Q4W is Q4N with the mask in Y14 and the block's scale into ydw; Q4WC
// converts the scale (SCALEC), for the decode strips.
#define Q4W(ptr, yw, ydw) \
	Q4N(ptr, yw, Y14) \
	SCALE(ptr, ydw)

#define Q4WC(ptr, yw, ydw) \
	Q4N(ptr, yw, Y14) \
	SCALEC(ptr, ydw)

// Q4WV is the VNNI tier's Q4_0 unpack: low nibbles in the low half, the
// high ones times 16 in the high half (see gq4mask).
#define Q4WV(ptr, yw, ydw) \
	VBROADCASTI128 2(ptr), yw \
	VPAND          gq4mask<>(SB), yw, yw \
	SCALE(ptr, ydw)

// Q8WV loads the Q8_0 block at (ptr) as uint8 w+128 into yw (VNNI tier).
#define Q8WV(ptr, yw, ydw) \
	VMOVDQU 2(ptr), yw \
	VPXOR   gflip80<>(SB), yw, yw \
	SCALE(ptr, ydw)

// PAIRA (AVX2, Q4_0): acc += (d_w·d_x) · (Σ nib·x − corr) per lane; yw
// holds the nibbles, Y15 int16 ones; Y12, Y13 scratch.
#define PAIRA(xq, xd, xc, yw, ydw, acc) \
	VPMADDUBSW  xq, yw, Y12 \
	VPMADDWD    Y15, Y12, Y12 \
	VPSUBD      xc, Y12, Y12 \
	VCVTDQ2PS   Y12, Y12 \
	VMULPS      xd, ydw, Y13 \
	VFMADD231PS Y13, Y12, acc

// PAIRS (AVX2, Q8_0): the sign trick; Y14 holds the activation values,
// yabs |w|, wsrc the weights (memory).
#define PAIRS(wsrc, xd, yabs, ydw, acc) \
	VPSIGNB     wsrc, Y14, Y12 \
	VPMADDUBSW  Y12, yabs, Y12 \
	VPMADDWD    Y15, Y12, Y12 \
	VCVTDQ2PS   Y12, Y12 \
	VMULPS      xd, ydw, Y13 \
	VFMADD231PS Y13, Y12, acc

// PAIRV (VNNI): acc += (d_w·d_x) · (corr + Σ w·x) per lane, w uint8 in yw,
// corr the negated offset correction; Y12, Y13 scratch.
#define PAIRV(xq, xd, xc, yw, ydw, acc) \
	VMOVDQU     xc, Y12 \
	VPDPBUSD    xq, yw, Y12 \
	VCVTDQ2PS   Y12, Y12 \
	VMULPS      xd, ydw, Y13 \
	VFMADD231PS Y13, Y12, acc

// Column c's operands: its qs, dx and corr addresses.
#define XQ0 (DI)
#define XD0 (DX)
#define XC0 (R12)
#define XQ1 (DI)(R13*1)
#define XD1 (DX)(R13*1)
#define XC1 (R12)(R13*1)
#define XQ2 (DI)(R13*2)
#define XD2 (DX)(R13*2)
#define XC2 (R12)(R13*2)
#define XQ3 (DI)(R14*1)
#define XD3 (DX)(R14*1)
#define XC3 (R12)(R14*1)

// STORE24 writes the 2x4 tile in Y0-Y7 (Y[2c+r]) to out[c·ldo/4 + r]
// and returns.
#define STORE24 \
	MOVQ out+64(FP), DI \
	MOVQ ldo+72(FP), R13 \
	LEAQ (R13)(R13*2), R14 \
	GHSUM(Y0, X0, (DI)) \
	GHSUM(Y1, X1, 4(DI)) \
	GHSUM(Y2, X2, (DI)(R13*1)) \
	GHSUM(Y3, X3, 4(DI)(R13*1)) \
	GHSUM(Y4, X4, (DI)(R13*2)) \
	GHSUM(Y5, X5, 4(DI)(R13*2)) \
	GHSUM(Y6, X6, (DI)(R14*1)) \
	GHSUM(Y7, X7, 4(DI)(R14*1)) \
	VZEROUPPER \
	RET

// ---- Q4_0, AVX2 ----

// func q40x1AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
//
// out[0] = dot(row at w, column at qs).
TEXT ·q40x1AVX2(SB), NOSPLIT, $0-80
	ARGS
	VMOVDQU gnibble<>(SB), Y14
	VMOVDQU gones16<>(SB), Y15
	VXORPS  Y0, Y0, Y0

q40x1a:
	Q4W(SI, Y8, Y10)
	PAIRA(XQ0, XD0, XC0, Y8, Y10, Y0)
	ADDQ $18, SI
	STEP
	DECQ CX
	JNZ  q40x1a
	MOVQ out+64(FP), DI
	GHSUM(Y0, X0, (DI))
	VZEROUPPER
	RET

// ZACC8A zeroes the AVX2 tiles' accumulators Y0-Y7.
#define ZACC8A \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3 \
	VXORPS  Y4, Y4, Y4 \
	VXORPS  Y5, Y5, Y5 \
	VXORPS  Y6, Y6, Y6 \
	VXORPS  Y7, Y7, Y7

// STRIP4AEND ends a step of the AVX2 4-row strips (4 row pointers sz
// bytes on) and, after the last, stores the rows' sums Y0-Y3.
#define STRIP4AEND(sz, label) \
	NEXT4(sz, label) \
	MOVQ out+64(FP), DI \
	GHSUM(Y0, X0, (DI)) \
	GHSUM(Y1, X1, 4(DI)) \
	GHSUM(Y2, X2, 8(DI)) \
	GHSUM(Y3, X3, 12(DI)) \
	VZEROUPPER \
	RET

// TILE24AEND ends a step of the AVX2 2x4 tiles and stores them after the
// last.
#define TILE24AEND(sz, label) \
	ADDQ $sz, SI \
	ADDQ $sz, BX \
	STEP \
	DECQ CX \
	JNZ  label \
	STORE24

// STRIP4A40 is the AVX2 Q4_0 loop of 4 rows against one column (decode):
// sz bytes from one block of a row to its next, pf the prefetch of each
// step.
#define STRIP4A40(sz, label, pf) \
	ARGS \
	ROWS4 \
	VMOVDQU gnibble<>(SB), Y14 \
	VMOVDQU gones16<>(SB), Y15 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3 \
label: \
	pf \
	Q4WC(SI, Y8, Y10) \
	Q4WC(BX, Y9, Y11) \
	PAIRA(XQ0, XD0, XC0, Y8, Y10, Y0) \
	PAIRA(XQ0, XD0, XC0, Y9, Y11, Y1) \
	Q4WC(R10, Y8, Y10) \
	Q4WC(R11, Y9, Y11) \
	PAIRA(XQ0, XD0, XC0, Y8, Y10, Y2) \
	PAIRA(XQ0, XD0, XC0, Y9, Y11, Y3) \
	STRIP4AEND(sz, label)

// PFA4 is the row-major AVX2 strips' prefetch: the lines of the strip two
// ahead (rows are contiguous: 8 rows ahead). The hardware prefetcher does
// little for four streams on the EPYC VM: prefetching 512 bytes ahead in
// each row, Q4_0 streamed 6.6-7.4 GB/s of weights on one core against
// 15-18 in cache; two strips ahead 10-12 (BenchmarkKStream, 2026-11-26).
#define PFA4 \
	PREFETCHT0 (SI)(R9*8) \
	PREFETCHT0 (BX)(R9*8) \
	PREFETCHT0 (R10)(R9*8) \
	PREFETCHT0 (R11)(R9*8)

// func q40x4AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
//
// out[0:4] = the dots of the 4 rows at w (rs bytes apart) with one column.
TEXT ·q40x4AVX2(SB), NOSPLIT, $0-80
	STRIP4A40(18, q40x4a, PFA4)

// TILE24A40 is the AVX2 Q4_0 tile of 2 rows (rs bytes apart) by 4
// columns; sz as in STRIP4A40: out[c·ldo/4 + r].
#define TILE24A40(sz, label) \
	ARGS \
	LEAQ    (SI)(R9*1), BX \
	VMOVDQU gnibble<>(SB), Y14 \
	VMOVDQU gones16<>(SB), Y15 \
	ZACC8A \
label: \
	Q4W(SI, Y8, Y10) \
	Q4W(BX, Y9, Y11) \
	PAIRA(XQ0, XD0, XC0, Y8, Y10, Y0) \
	PAIRA(XQ0, XD0, XC0, Y9, Y11, Y1) \
	PAIRA(XQ1, XD1, XC1, Y8, Y10, Y2) \
	PAIRA(XQ1, XD1, XC1, Y9, Y11, Y3) \
	PAIRA(XQ2, XD2, XC2, Y8, Y10, Y4) \
	PAIRA(XQ2, XD2, XC2, Y9, Y11, Y5) \
	PAIRA(XQ3, XD3, XC3, Y8, Y10, Y6) \
	PAIRA(XQ3, XD3, XC3, Y9, Y11, Y7) \
	TILE24AEND(sz, label)

// func q40t24AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
//
// The 2-row by 4-column tile: out[c·ldo/4 + r].
TEXT ·q40t24AVX2(SB), NOSPLIT, $0-80
	TILE24A40(18, q40t24a)

// ---- Q8_0, AVX2 ----

// Q8A loads |w| of the Q8_0 block at (ptr) into yabs and its scale.
#define Q8A(ptr, yabs, ydw) \
	VPABSB 2(ptr), yabs \
	SCALE(ptr, ydw)

// Q8AC is Q8A with the scale converted (SCALEC), for the decode strips.
#define Q8AC(ptr, yabs, ydw) \
	VPABSB 2(ptr), yabs \
	SCALEC(ptr, ydw)

// func q80x1AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80x1AVX2(SB), NOSPLIT, $0-80
	ARGS
	VMOVDQU gones16<>(SB), Y15
	VXORPS  Y0, Y0, Y0

q80x1a:
	VMOVDQU XQ0, Y14
	Q8A(SI, Y8, Y10)
	PAIRS(2(SI), XD0, Y8, Y10, Y0)
	ADDQ $34, SI
	STEP
	DECQ CX
	JNZ  q80x1a
	MOVQ out+64(FP), DI
	GHSUM(Y0, X0, (DI))
	VZEROUPPER
	RET

// STRIP4A80 is STRIP4A40 for Q8_0 (34 bytes a block row-major, 136
// interleaved).
#define STRIP4A80(sz, label, pf) \
	ARGS \
	ROWS4 \
	VMOVDQU gones16<>(SB), Y15 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3 \
label: \
	pf \
	VMOVDQU XQ0, Y14 \
	Q8AC(SI, Y8, Y10) \
	Q8AC(BX, Y9, Y11) \
	PAIRS(2(SI), XD0, Y8, Y10, Y0) \
	PAIRS(2(BX), XD0, Y9, Y11, Y1) \
	Q8AC(R10, Y8, Y10) \
	Q8AC(R11, Y9, Y11) \
	PAIRS(2(R10), XD0, Y8, Y10, Y2) \
	PAIRS(2(R11), XD0, Y9, Y11, Y3) \
	STRIP4AEND(sz, label)

// PFA8 prefetches the next strip of Q8_0 rows (8.5 KiB ahead for rows of
// 2048): Q8_0 streamed 9.4-11.5 GB/s prefetching 512 bytes ahead in
// each row, 21.7-22.8 this way (BenchmarkKStream, EPYC VM, 2026-11-26).
#define PFA8 \
	PREFETCHT0 (SI)(R9*4) \
	PREFETCHT0 (BX)(R9*4) \
	PREFETCHT0 (R10)(R9*4) \
	PREFETCHT0 (R11)(R9*4)

// func q80x4AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80x4AVX2(SB), NOSPLIT, $0-80
	STRIP4A80(34, q80x4a, PFA8)

// TILE24A80 is TILE24A40 for Q8_0.
#define TILE24A80(sz, label) \
	ARGS \
	LEAQ    (SI)(R9*1), BX \
	VMOVDQU gones16<>(SB), Y15 \
	ZACC8A \
label: \
	Q8A(SI, Y8, Y10) \
	Q8A(BX, Y9, Y11) \
	VMOVDQU XQ0, Y14 \
	PAIRS(2(SI), XD0, Y8, Y10, Y0) \
	PAIRS(2(BX), XD0, Y9, Y11, Y1) \
	VMOVDQU XQ1, Y14 \
	PAIRS(2(SI), XD1, Y8, Y10, Y2) \
	PAIRS(2(BX), XD1, Y9, Y11, Y3) \
	VMOVDQU XQ2, Y14 \
	PAIRS(2(SI), XD2, Y8, Y10, Y4) \
	PAIRS(2(BX), XD2, Y9, Y11, Y5) \
	VMOVDQU XQ3, Y14 \
	PAIRS(2(SI), XD3, Y8, Y10, Y6) \
	PAIRS(2(BX), XD3, Y9, Y11, Y7) \
	TILE24AEND(sz, label)

// func q80t24AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80t24AVX2(SB), NOSPLIT, $0-80
	TILE24A80(34, q80t24a)

// ---- VNNI tier (AVX-512 VNNI + VL on 256-bit registers) ----

// ZACC zeroes the 16 tile accumulators Y16-Y31.
#define ZACC \
	VPXORD Y16, Y16, Y16 \
	VPXORD Y17, Y17, Y17 \
	VPXORD Y18, Y18, Y18 \
	VPXORD Y19, Y19, Y19 \
	VPXORD Y20, Y20, Y20 \
	VPXORD Y21, Y21, Y21 \
	VPXORD Y22, Y22, Y22 \
	VPXORD Y23, Y23, Y23 \
	VPXORD Y24, Y24, Y24 \
	VPXORD Y25, Y25, Y25 \
	VPXORD Y26, Y26, Y26 \
	VPXORD Y27, Y27, Y27 \
	VPXORD Y28, Y28, Y28 \
	VPXORD Y29, Y29, Y29 \
	VPXORD Y30, Y30, Y30 \
	VPXORD Y31, Y31, Y31

// COL4V runs the 4 rows in Y4-Y7 (scales Y8-Y11) against one column into
// the accumulators a0-a3.
#define COL4V(xq, xd, xc, a0, a1, a2, a3) \
	PAIRV(xq, xd, xc, Y4, Y8, a0) \
	PAIRV(xq, xd, xc, Y5, Y9, a1) \
	PAIRV(xq, xd, xc, Y6, Y10, a2) \
	PAIRV(xq, xd, xc, Y7, Y11, a3)

// STORE4V writes accumulators a0-a3 (rows 0-3 of one column) to
// (p)..12(p).
#define STORE4V(a0, a1, a2, a3, p) \
	VMOVAPS a0, Y0 \
	VMOVAPS a1, Y1 \
	VMOVAPS a2, Y2 \
	VMOVAPS a3, Y3 \
	GHSUM(Y0, X0, (p)) \
	GHSUM(Y1, X1, 4(p)) \
	GHSUM(Y2, X2, 8(p)) \
	GHSUM(Y3, X3, 12(p))

// TILE44V is the loop of a 4x4 tile whose rows are unpacked by the
// macro unpack (Q4W or Q8WV) every sz bytes, then the stores.
#define TILE44V(unpack, sz, label) \
	ARGS \
	ROWS4 \
	VMOVDQU gnibble<>(SB), Y14 \
	ZACC \
label: \
	unpack(SI, Y4, Y8) \
	unpack(BX, Y5, Y9) \
	unpack(R10, Y6, Y10) \
	unpack(R11, Y7, Y11) \
	COL4V(XQ0, XD0, XC0, Y16, Y17, Y18, Y19) \
	COL4V(XQ1, XD1, XC1, Y20, Y21, Y22, Y23) \
	COL4V(XQ2, XD2, XC2, Y24, Y25, Y26, Y27) \
	COL4V(XQ3, XD3, XC3, Y28, Y29, Y30, Y31) \
	NEXT4(sz, label) \
	MOVQ out+64(FP), DI \
	MOVQ ldo+72(FP), R13 \
	STORE4V(Y16, Y17, Y18, Y19, DI) \
	ADDQ R13, DI \
	STORE4V(Y20, Y21, Y22, Y23, DI) \
	ADDQ R13, DI \
	STORE4V(Y24, Y25, Y26, Y27, DI) \
	ADDQ R13, DI \
	STORE4V(Y28, Y29, Y30, Y31, DI) \
	VZEROUPPER \
	RET

// PF4 prefetches the next strip's block of each of the 4 rows (row-major
// weights, rows R9 bytes apart).
#define PF4 \
	PREFETCHT0 (SI)(R9*4) \
	PREFETCHT0 (BX)(R9*4) \
	PREFETCHT0 (R10)(R9*4) \
	PREFETCHT0 (R11)(R9*4)

// PFR4 prefetches the two lines 8 KiB ahead of a 4-row group in the
// interleaved layout (Rows4: the group's blocks one after the other, 72
// bytes per block, so two lines per block cover every line once). 8 KiB
// against 4: TinyLlama Q4_0 generation +2.5-4% in each of five paired
// runs at 1 and 2 threads (2026-11-26 01:14-01:18 UTC); 2 KiB was slower.
#define PFR4 \
	PREFETCHT0 8192(SI) \
	PREFETCHT0 8256(SI)

// PFR8 is PFR4 for Q8_0's 136 bytes per block of the group: three lines.
#define PFR8 \
	PREFETCHT0 8192(SI) \
	PREFETCHT0 8256(SI) \
	PREFETCHT0 8320(SI)

// The AVX2 kernels on the interleaved layout (Rows4): the row-major ones
// with a group's rows one block apart (rs = the block size), 4 blocks per
// step, and the interleaved prefetch; the same arithmetic, bit for bit.

// Q4_0 on the AVX2 tier's pair layout (rows4.go: each pair of a group's
// blocks stored as [d_a d_b qs_a qs_b], 36 bytes, so one 32-byte load
// holds both rows' nibbles and one 4-byte load both scales). One vector
// then carries the two rows' lanes 0-3 (low nibbles: elements 0-15 of row
// a in its low half, of row b in its high half) and another their lanes
// 4-7, against the column's halves broadcast ([x0..15 | x0..15]); the
// accumulators hold [a L0-3 | b L0-3] and [a L4-7 | b L4-7] and are
// regrouped by row before the sum. Every lane goes through the row-major
// kernel's operations (PAIRA: the same byte pairs, correction, scale
// product and fused multiply-add), so the results are theirs bit for bit,
// with 16 vector instructions per pair of rows and block against PAIRA's
// 20: one core streamed 20.0-21.9 GB/s of weights against 16.9-17.5
// (BenchmarkRows4Stream, masked, 2026-11-26).

// gq4dup spreads the dword [d_a d_b] into [d_a ×4, d_b ×4] (VPSHUFB).
DATA gq4dup<>+0(SB)/8, $0x0100010001000100
DATA gq4dup<>+8(SB)/8, $0x0302030203020302
GLOBL gq4dup<>(SB), RODATA|NOPTR, $16

// PSCALE converts the pair's scales at sp into ys = [d_a ×4 | d_b ×4].
#define PSCALE(sp, xs, ys) \
	VMOVD     sp, xs \
	VPSHUFB   gq4dup<>(SB), xs, xs \
	VCVTPH2PS xs, ys

// PNIB loads the pair's nibbles at qp: Y8 the low ones, Y9 the high ones;
// Y14 holds the nibble mask.
#define PNIB(qp) \
	VMOVDQU qp, Y8 \
	VPSRLW  $4, Y8, Y9 \
	VPAND   Y14, Y8, Y8 \
	VPAND   Y14, Y9, Y9

// PLANES accumulates one half (yn: nibbles, xq: the column's half, xc its
// correction, ysc the scale product) into acc: PAIRA's steps.
#define PLANES(xq, yn, xc, ysc, acc) \
	VPMADDUBSW  xq, yn, yn \
	VPMADDWD    Y15, yn, yn \
	VPSUBD      xc, yn, yn \
	VCVTDQ2PS   yn, yn \
	VFMADD231PS ysc, yn, acc

// PSTRIP is one pair of the strip: the column's halves and corrections
// in Y4-Y7, its scale at (DX).
#define PSTRIP(sp, qp, alo, ahi) \
	PSCALE(sp, X10, Y10) \
	VMULPS (DX), Y10, Y10 \
	PNIB(qp) \
	PLANES(Y4, Y8, Y6, Y10, alo) \
	PLANES(Y5, Y9, Y7, Y10, ahi)

// PROWS regroups a pair's accumulators by row: ya = row a, yb = row b.
#define PROWS(alo, ahi, ya, yb) \
	VPERM2F128 $0x20, ahi, alo, ya \
	VPERM2F128 $0x31, ahi, alo, yb

// PSTRIP4 is the pair-layout strip of a group against one column, pair
// the step of one pair (PSTRIP, PSTRIPV).
#define PSTRIP4(pair, label) \
	ARGS \
	VMOVDQU gnibble<>(SB), Y14 \
	VMOVDQU gones16<>(SB), Y15 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3 \
label: \
	PFR4 \
	VBROADCASTI128 (DI), Y4 \
	VBROADCASTI128 16(DI), Y5 \
	VBROADCASTI128 (R12), Y6 \
	VBROADCASTI128 16(R12), Y7 \
	pair((SI), 4(SI), Y0, Y1) \
	pair(36(SI), 40(SI), Y2, Y3) \
	ADDQ $72, SI \
	STEP \
	DECQ CX \
	JNZ  label \
	MOVQ out+64(FP), DI \
	PROWS(Y0, Y1, Y8, Y9) \
	PROWS(Y2, Y3, Y10, Y11) \
	GHSUM(Y8, X8, (DI)) \
	GHSUM(Y9, X9, 4(DI)) \
	GHSUM(Y10, X10, 8(DI)) \
	GHSUM(Y11, X11, 12(DI)) \
	VZEROUPPER \
	RET

// func q40x4AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
//
// out[0:4] = the dots of the group at w with one column (rs unused).
TEXT ·q40x4AVX2R4(SB), NOSPLIT, $0-80
	PSTRIP4(PSTRIP, q40x4ap)

// PCOL is one column of the pair tile: xq its values, xd its scale, xc
// its corrections; alo, ahi the column's accumulators. Y10 holds the
// pair's scales, Y8 and Y9 its nibbles (kept), Y11-Y13 scratch.
#define PCOL(xq, xq16, xd, xc, xc16, alo, ahi) \
	VMULPS         xd, Y10, Y13 \
	VBROADCASTI128 xq, Y11 \
	VPMADDUBSW     Y11, Y8, Y11 \
	VPMADDWD       Y15, Y11, Y11 \
	VBROADCASTI128 xc, Y12 \
	VPSUBD         Y12, Y11, Y11 \
	VCVTDQ2PS      Y11, Y11 \
	VFMADD231PS    Y13, Y11, alo \
	VBROADCASTI128 xq16, Y11 \
	VPMADDUBSW     Y11, Y9, Y11 \
	VPMADDWD       Y15, Y11, Y11 \
	VBROADCASTI128 xc16, Y12 \
	VPSUBD         Y12, Y11, Y11 \
	VCVTDQ2PS      Y11, Y11 \
	VFMADD231PS    Y13, Y11, ahi

// PTOROW regroups column c's accumulators (Y[2c] lanes 0-3, Y[2c+1] lanes
// 4-7 of both rows) into rows, as STORE24 takes them (Y[2c+r]).
#define PTOROW(alo, ahi) \
	VPERM2F128 $0x20, ahi, alo, Y8 \
	VPERM2F128 $0x31, ahi, alo, ahi \
	VMOVAPS    Y8, alo

// PTILE24 is the pair tile's loop, col the step of one column (PCOL,
// PCOLV).
#define PTILE24(col, label) \
	ARGS \
	VMOVDQU gnibble<>(SB), Y14 \
	VMOVDQU gones16<>(SB), Y15 \
	ZACC8A \
label: \
	PSCALE((SI), X10, Y10) \
	PNIB(4(SI)) \
	col((DI), 16(DI), (DX), (R12), 16(R12), Y0, Y1) \
	col((DI)(R13*1), 16(DI)(R13*1), (DX)(R13*1), (R12)(R13*1), 16(R12)(R13*1), Y2, Y3) \
	col((DI)(R13*2), 16(DI)(R13*2), (DX)(R13*2), (R12)(R13*2), 16(R12)(R13*2), Y4, Y5) \
	col((DI)(R14*1), 16(DI)(R14*1), (DX)(R14*1), (R12)(R14*1), 16(R12)(R14*1), Y6, Y7) \
	ADDQ $72, SI \
	STEP \
	DECQ CX \
	JNZ  label \
	PTOROW(Y0, Y1) \
	PTOROW(Y2, Y3) \
	PTOROW(Y4, Y5) \
	PTOROW(Y6, Y7) \
	STORE24

// func q40t24AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
//
// The 2-row by 4-column tile on one pair at w (a group's rows 0-1 or,
// 36 bytes in, 2-3; rs unused): out[c·ldo/4 + r].
TEXT ·q40t24AVX2R4(SB), NOSPLIT, $0-80
	PTILE24(PCOL, q40t24ap)

// ---- Q4_0, AVX-VNNI ----
//
// The AVX-VNNI tier (Alder Lake and newer Intel desktops, Zen 5 without
// AVX-512: the VEX-encoded 256-bit vpdpbusd beside AVX2) runs the AVX2
// tier's Q4_0 kernels, same layouts, lanes and float steps, with
// maddubs + pmaddwd + the correction's subtraction turned into one
// vpdpbusd into an accumulator that starts at the correction: its columns
// are prepared with the offset −8 (Act.corr = −8·Σ4, without the VNNI
// tier's hi16 lanes). Every lane's integer is the same exact sum, so the
// results are the AVX2 tier's bit for bit.
//
// Go's assembler has vpdpbusd only in its EVEX (AVX-512 VNNI) form, so the
// VEX form is written out: C4 RXB.00010 0.vvvv.1.01 50 ModRM, for
// "vpdpbusd dst, u8 (vvvv), s8 (rm)"; TestAVXVNNIEncoding assembles each
// DPB macro's comment (GNU as, AT&T order) and compares the bytes.

// DPB_d_u_s: Yd += Σ4 u8(Yu)·s8(Ys) per dword lane.
#define DPB_12_8_4 BYTE $0xc4; BYTE $0x62; BYTE $0x3d; BYTE $0x50; BYTE $0xe4 // {vex} vpdpbusd %ymm4, %ymm8, %ymm12
#define DPB_13_9_5 BYTE $0xc4; BYTE $0x62; BYTE $0x35; BYTE $0x50; BYTE $0xed // {vex} vpdpbusd %ymm5, %ymm9, %ymm13
#define DPB_12_8_11 BYTE $0xc4; BYTE $0x42; BYTE $0x3d; BYTE $0x50; BYTE $0xe3 // {vex} vpdpbusd %ymm11, %ymm8, %ymm12
#define DPB_12_9_11 BYTE $0xc4; BYTE $0x42; BYTE $0x35; BYTE $0x50; BYTE $0xe3 // {vex} vpdpbusd %ymm11, %ymm9, %ymm12
#define DPB_12_8_15 BYTE $0xc4; BYTE $0x42; BYTE $0x3d; BYTE $0x50; BYTE $0xe7 // {vex} vpdpbusd %ymm15, %ymm8, %ymm12
#define DPB_12_9_15 BYTE $0xc4; BYTE $0x42; BYTE $0x35; BYTE $0x50; BYTE $0xe7 // {vex} vpdpbusd %ymm15, %ymm9, %ymm12
#define DPB_12_9_4 BYTE $0xc4; BYTE $0x62; BYTE $0x35; BYTE $0x50; BYTE $0xe4 // {vex} vpdpbusd %ymm4, %ymm9, %ymm12

// PV is one row's block product against the column held in registers:
// acc += (d_w·d_x) · (corr + Σ w·x) per lane, the sum starting at the
// correction in yc, the column's values in the register dpb reads (dpb:
// Y12 += yw·x), its scale at xd; Y12 and ytmp scratch.
#define PV(yc, xd, ydw, acc, dpb, ytmp) \
	VMOVDQA     yc, Y12 \
	dpb \
	VCVTDQ2PS   Y12, Y12 \
	VMULPS      xd, ydw, ytmp \
	VFMADD231PS ytmp, Y12, acc

// Q4WM is Q4W with the nibble mask read from memory (the AVX-VNNI tile
// needs Y14), Q4WMC with the scale converted.
#define Q4WM(ptr, yw, ydw) \
	Q4N(ptr, yw, gnibble<>(SB)) \
	SCALE(ptr, ydw)

#define Q4WMC(ptr, yw, ydw) \
	Q4N(ptr, yw, gnibble<>(SB)) \
	SCALEC(ptr, ydw)

// Q8V loads the Q8_0 block at (ptr) as w+128 into yw and its scale.
#define Q8V(ptr, yw, ydw) \
	VMOVDQU 2(ptr), yw \
	VPXOR   gflip80<>(SB), yw, yw \
	SCALE(ptr, ydw)

// STRIP4QV is the AVX-VNNI tier's loop of 4 rows (rows R9 bytes apart,
// sz bytes a block) against one column, unpack the block load (Q4WMC) and pf the prefetch: the column's values, correction and scale
// are loaded once a block (Y4, Y5, Y6) for the 4 rows.
#define STRIP4QV(sz, label, pf, unpack) \
	ARGS \
	ROWS4 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
label: \
	pf \
	VMOVDQU XQ0, Y4 \
	VMOVDQU XC0, Y5 \
	VMOVUPS XD0, Y6 \
	unpack(SI, Y8, Y10) \
	unpack(BX, Y9, Y11) \
	PV(Y5, Y6, Y10, Y0, DPB_12_8_4, Y13) \
	PV(Y5, Y6, Y11, Y1, DPB_12_9_4, Y13) \
	unpack(R10, Y8, Y10) \
	unpack(R11, Y9, Y11) \
	PV(Y5, Y6, Y10, Y2, DPB_12_8_4, Y13) \
	PV(Y5, Y6, Y11, Y3, DPB_12_9_4, Y13) \
	STRIP4AEND(sz, label)

// PVCOL is one column of the AVX-VNNI 2x4 tile: its values (Y15) and
// correction (Y13) loaded once for both rows.
#define PVCOL(xq, xd, xc, a0, a1) \
	VMOVDQU xq, Y15 \
	VMOVDQU xc, Y13 \
	PV(Y13, xd, Y10, a0, DPB_12_8_15, Y14) \
	PV(Y13, xd, Y11, a1, DPB_12_9_15, Y14)

// TILE24QV is the AVX-VNNI tier's 2-row (R9 bytes apart) by 4-column
// tile, sz and unpack (Q4WM, Q8V) as in STRIP4QV: out[c·ldo/4 + r].
#define TILE24QV(sz, label, unpack) \
	ARGS \
	LEAQ (SI)(R9*1), BX \
	ZACC8A \
label: \
	unpack(SI, Y8, Y10) \
	unpack(BX, Y9, Y11) \
	PVCOL(XQ0, XD0, XC0, Y0, Y1) \
	PVCOL(XQ1, XD1, XC1, Y2, Y3) \
	PVCOL(XQ2, XD2, XC2, Y4, Y5) \
	PVCOL(XQ3, XD3, XC3, Y6, Y7) \
	TILE24AEND(sz, label)

// PSTRIPV is PSTRIP for the AVX-VNNI tier: each half's sum starts at its
// correction (the columns' offset is −8) and takes one vpdpbusd.
#define PSTRIPV(sp, qp, alo, ahi) \
	PSCALE(sp, X10, Y10) \
	VMULPS      (DX), Y10, Y10 \
	PNIB(qp) \
	VMOVDQA     Y6, Y12 \
	DPB_12_8_4 \
	VCVTDQ2PS   Y12, Y12 \
	VFMADD231PS Y10, Y12, alo \
	VMOVDQA     Y7, Y13 \
	DPB_13_9_5 \
	VCVTDQ2PS   Y13, Y13 \
	VFMADD231PS Y10, Y13, ahi

// PCOLV is PCOL for the AVX-VNNI tier (see PSTRIPV).
#define PCOLV(xq, xq16, xd, xc, xc16, alo, ahi) \
	VMULPS         xd, Y10, Y13 \
	VBROADCASTI128 xq, Y11 \
	VBROADCASTI128 xc, Y12 \
	DPB_12_8_11 \
	VCVTDQ2PS      Y12, Y12 \
	VFMADD231PS    Y13, Y12, alo \
	VBROADCASTI128 xq16, Y11 \
	VBROADCASTI128 xc16, Y12 \
	DPB_12_9_11 \
	VCVTDQ2PS      Y12, Y12 \
	VFMADD231PS    Y13, Y12, ahi

// ONE1QV is the AVX-VNNI tier's single row against one column, sz bytes
// a block, unpack the block load (Q4WM, Q8V): out[0].
#define ONE1QV(sz, label, unpack) \
	ARGS \
	VXORPS Y0, Y0, Y0 \
label: \
	unpack(SI, Y8, Y10) \
	VMOVDQU XQ0, Y15 \
	VMOVDQU XC0, Y13 \
	PV(Y13, XD0, Y10, Y0, DPB_12_8_15, Y14) \
	ADDQ $sz, SI \
	STEP \
	DECQ CX \
	JNZ  label \
	MOVQ out+64(FP), DI \
	GHSUM(Y0, X0, (DI)) \
	VZEROUPPER \
	RET

// func q40x1AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40x1AVXV(SB), NOSPLIT, $0-80
	ONE1QV(18, q40x1v, Q4WM)

// func q40x4AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40x4AVXV(SB), NOSPLIT, $0-80
	STRIP4QV(18, q40x4v, PFA4, Q4WMC)

// func q40t24AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40t24AVXV(SB), NOSPLIT, $0-80
	TILE24QV(18, q40t24v, Q4WM)

// func q40x4AVXVR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40x4AVXVR4(SB), NOSPLIT, $0-80
	PSTRIP4(PSTRIPV, q40x4vp)

// func q40t24AVXVR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40t24AVXVR4(SB), NOSPLIT, $0-80
	PTILE24(PCOLV, q40t24vp)

// func q80x4AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80x4AVX2R4(SB), NOSPLIT, $0-80
	STRIP4A80(136, q80x4ar4, PFR8)

// func q80t24AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80t24AVX2R4(SB), NOSPLIT, $0-80
	TILE24A80(136, q80t24ar4)

// STRIP4V is the loop of 4 rows against one column (decode). The column's
// block (values, correction, scale) is loaded once into Y20-Y22 for the 4
// rows, and the unpacking constant c15 (Q4_0 shift counts, Q8_0 sign flip)
// lives in Y15: fewer loads per row.
#define STRIP4V(unpack, sz, c15, label, pf) \
	ARGS \
	ROWS4 \
	VMOVDQU gnibble<>(SB), Y14 \
	VMOVDQU c15<>(SB), Y15 \
	VPXORD  Y16, Y16, Y16 \
	VPXORD  Y17, Y17, Y17 \
	VPXORD  Y18, Y18, Y18 \
	VPXORD  Y19, Y19, Y19 \
label: \
	pf \
	VMOVDQU32 (DI), Y20 \
	VMOVDQU32 (R12), Y21 \
	VMOVUPS   (DX), Y22 \
	unpack(SI, Y4, Y8) \
	unpack(BX, Y5, Y9) \
	unpack(R10, Y6, Y10) \
	unpack(R11, Y7, Y11) \
	PAIRVR(Y4, Y8, Y16) \
	PAIRVR(Y5, Y9, Y17) \
	PAIRVR(Y6, Y10, Y18) \
	PAIRVR(Y7, Y11, Y19) \
	NEXT4(sz, label) \
	MOVQ out+64(FP), DI \
	STORE4V(Y16, Y17, Y18, Y19, DI) \
	VZEROUPPER \
	RET

// PAIRVR is PAIRV with the column's block in Y20 (values), Y21
// (correction) and Y22 (scale).
#define PAIRVR(yw, ydw, acc) \
	VMOVDQA32   Y21, Y12 \
	VPDPBUSD    Y20, yw, Y12 \
	VCVTDQ2PS   Y12, Y12 \
	VMULPS      Y22, ydw, Y13 \
	VFMADD231PS Y13, Y12, acc

// Q8WVR is Q8WV with the flip constant in Y15.
#define Q8WVR(ptr, yw, ydw) \
	VMOVDQU 2(ptr), yw \
	VPXOR   Y15, yw, yw \
	SCALE(ptr, ydw)

// Q4WVR is Q4WV with the mask in Y15.
#define Q4WVR(ptr, yw, ydw) \
	VBROADCASTI128 2(ptr), yw \
	VPAND          Y15, yw, yw \
	SCALEC(ptr, ydw)


// ONEV is the loop of one row against one column.
#define ONEV(unpack, sz, label) \
	ARGS \
	VMOVDQU gnibble<>(SB), Y14 \
	VPXORD  Y16, Y16, Y16 \
label: \
	unpack(SI, Y4, Y8) \
	PAIRV(XQ0, XD0, XC0, Y4, Y8, Y16) \
	ADDQ $sz, SI \
	STEP \
	DECQ CX \
	JNZ  label \
	MOVQ    out+64(FP), DI \
	VMOVAPS Y16, Y0 \
	GHSUM(Y0, X0, (DI)) \
	VZEROUPPER \
	RET

// func q40x1VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40x1VNNI(SB), NOSPLIT, $0-80
	ONEV(Q4WV, 18, q40x1v)

// func q40x4VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40x4VNNI(SB), NOSPLIT, $0-80
	STRIP4V(Q4WVR, 18, gq4mask, q40x4v, PF4)

// func q40t44VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40t44VNNI(SB), NOSPLIT, $0-80
	TILE44V(Q4WV, 18, q40t44v)

// func q80x1VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80x1VNNI(SB), NOSPLIT, $0-80
	ONEV(Q8WV, 34, q80x1v)

// func q80x4VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80x4VNNI(SB), NOSPLIT, $0-80
	STRIP4V(Q8WVR, 34, gflip80, q80x4v, PF4)

// func q80t44VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80t44VNNI(SB), NOSPLIT, $0-80
	TILE44V(Q8WV, 34, q80t44v)

// The Q4_0 kernels of 4 rows on the interleaved layout (Rows4): rs is the
// block's 18 bytes (row i of the group at i·18) and every row pointer
// advances by the group's 72 bytes per block. Same instructions, same
// arithmetic: bit-identical to the row-major kernels.

// func q40x4VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40x4VNNIR4(SB), NOSPLIT, $0-80
	STRIP4V(Q4WVR, 72, gq4mask, q40x4vr4, PFR4)

// func q40t44VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40t44VNNIR4(SB), NOSPLIT, $0-80
	TILE44V(Q4WV, 72, q40t44vr4)

// func q80x4VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80x4VNNIR4(SB), NOSPLIT, $0-80
	STRIP4V(Q8WVR, 136, gflip80, q80x4vr4, PFR8)

// func q80t44VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80t44VNNIR4(SB), NOSPLIT, $0-80
	TILE44V(Q8WV, 136, q80t44vr4)

// ---- Q8_0, AVX-VNNI ----
//
// The AVX2 Q8_0 kernels take the sign trick (|w| against x·sign(w)); these
// tiles take the VNNI tier's w+128 (one xor with gflip80) against x from
// an accumulator at the correction −128·Σ4 (the columns' offset −128):
// the same exact integer per lane, so the AVX2 tier's values bit for bit.
// Decode keeps the AVX2 strips, which read no correction: through these
// TinyLlama Q8_0 generated 20.1–21.0 t/s at one thread against their
// 21.5–21.7 (three alternations, masked, 2026-11-26).

// func q80t24AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80t24AVXV(SB), NOSPLIT, $0-80
	TILE24QV(34, q80t24v, Q8V)

// func q80t24AVXVR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80t24AVXVR4(SB), NOSPLIT, $0-80
	TILE24QV(136, q80t24vr4, Q8V)
