//go:build amd64 && !noasm

#include "textflag.h"

// Flat GEMM kernels for Q8_0 (FlashDecoding++'s flat GEMM for batches of 2-16
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

// IPF4 prefetches the next 4 rows' block (row-major, rows R9 apart); IPFR4
// the interleaved layout's lines 4 KiB ahead (the decode strip's PFR4 in
// gemm_amd64.s goes 8 KiB ahead; these batched kernels were not re-timed).
#define IPF4 \
	PREFETCHT0 (SI)(R9*4) \
	PREFETCHT0 (BX)(R9*4) \
	PREFETCHT0 (R10)(R9*4) \
	PREFETCHT0 (R11)(R9*4)
#define IPFR4 \
	PREFETCHT0 4096(SI) \
	PREFETCHT0 4160(SI)
#define IPFR8 \
	PREFETCHT0 4096(SI) \
	PREFETCHT0 4160(SI) \
	PREFETCHT0 4224(SI)

// FLAT is the 4-row kernel over k pairs: zero, loop over the blocks,
// store.
#define FLAT(unpack, sz, const, zero, pairs, stores, label) FLATP(unpack, sz, const, zero, pairs, stores, label, IPF4)

// FLATP is FLAT with the prefetch pf: IPF4 row-major, IPFR8 on the
// interleaved layout (Rows4: 136 bytes per block of the 4 rows, so three
// lines per block cover every line).
#define FLATP(unpack, sz, const, zero, pairs, stores, label, pf) \
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
	pf \
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

// The Q8_0 sign flip as in gemmz_amd64.s.
DATA fflip<>+0(SB)/8, $0x8080808080808080
DATA fflip<>+8(SB)/8, $0x8080808080808080
DATA fflip<>+16(SB)/8, $0x8080808080808080
DATA fflip<>+24(SB)/8, $0x8080808080808080
GLOBL fflip<>(SB), RODATA|NOPTR, $32

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

// The Q4_0 flat kernels (q40f4pk: 4 rows by k pairs; q40f1p4: 1 row by 4
// pairs) read the pair layout of Act (placePair): a pair's 16 lanes are
// chunk i = [col 2p lane i, col 2p+1 lane i, col 2p lane 4+i, col 2p+1
// lane 4+i], so the scales d_w·d_x of a (row, pair) are one 128-bit chunk
// broadcast. Per block and row, one multiply d_w·[the 4 pairs' dx
// patterns] (Z4-Z7) and per (row, pair) one VSHUFF32X4 of its chunk
// replace the multiply per (row, pair) of the 256-bit layout: with the
// conversion and the fused multiply-add those kept the multiply pipes
// busier than VPDPBUSD (in L2, 4 rows × 4 pairs: ~0.44 against ~0.53 ns
// per row, pair and block, medians of 10). The products are the same
// float32 values, so every lane runs the chain of the other Q4_0 kernels
// and the lane twin, bit for bit:
//
//	acc[r][p] = fma(float32(corr + Σ4 w·x), d_w·dx, acc[r][p])
//	out = hsum_float_8 of each column's 8 lanes, in its order
//
// The weights of a row: its 16 bytes broadcast to every chunk, chunk i's
// dword i replicated 4 times (VPSHUFB by iq4shuf), masked to low nibbles
// in dwords 0-1 and high nibbles (×16, hi16) in dwords 2-3 (iq4mask).
//
// Storing the products to the frame and reading the chunks back with
// VBROADCASTF32X4 (loads instead of shuffles) ran a third slower: the
// 16-byte loads do not forward from the 64-byte store of the same block.

// IQ4W unpacks the Q4_0 block at (ptr) into zw and multiplies its scale
// by the block's dx patterns (Z12) into zs; Z14 holds the shuffle, Z8 the
// mask.
#define IQ4W(ptr, zw, zs) \
	VBROADCASTI32X4 2(ptr), zw \
	VPSHUFB         Z14, zw, zw \
	VPANDD          Z8, zw, zw \
	MOVWLZX         (ptr), AX \
	VMULPS.BCST     (R8)(AX*4), Z12, zs

// IROW: one row against the pair loaded in Z11 (values) and Z13
// (correction), its scales chunk imm of zs.
#define IROW(zw, imm, zs, acc) \
	VSHUFF32X4      imm, zs, zs, Z10 \
	VMOVDQA32       Z13, Z9 \
	VPDPBUSD        Z11, zw, Z9 \
	VCVTDQ2PS       Z9, Z9 \
	VFMADD231PS     Z10, Z9, acc

// IPAIR runs the 4 rows against pair p (its qs and corr at off = 64p, its
// scales chunk p of Z4-Z7: imm = 0x55·p).
#define IPAIR(off, imm, a0, a1, a2, a3) \
	VMOVDQU32 off(DI), Z11 \
	VMOVDQU32 off(R12), Z13 \
	IROW(Z0, imm, Z4, a0) \
	IROW(Z1, imm, Z5, a1) \
	IROW(Z2, imm, Z6, a2) \
	IROW(Z3, imm, Z7, a3)

#define IPAIRS1 \
	IPAIR(0, $0x00, Z16, Z17, Z18, Z19)

// IROWN, IPAIRS1N: one pair only (q40f4p1), whose dx pattern is broadcast
// to every chunk before the multiply, so the products need no shuffle.
#define IROWN(zw, zs, acc) \
	VMOVDQA32   Z13, Z9 \
	VPDPBUSD    Z11, zw, Z9 \
	VCVTDQ2PS   Z9, Z9 \
	VFMADD231PS zs, Z9, acc

#define IPAIRS1N \
	VMOVDQU32 (DI), Z11 \
	VMOVDQU32 (R12), Z13 \
	IROWN(Z0, Z4, Z16) \
	IROWN(Z1, Z5, Z17) \
	IROWN(Z2, Z6, Z18) \
	IROWN(Z3, Z7, Z19)

#define IDXALL VMOVUPS (DX), Z12
#define IDXP0 VBROADCASTF32X4 (DX), Z12

#define IPAIRS2 \
	IPAIRS1 \
	IPAIR(64, $0x55, Z20, Z21, Z22, Z23)

#define IPAIRS3 \
	IPAIRS2 \
	IPAIR(128, $0xaa, Z24, Z25, Z26, Z27)

#define IPAIRS4 \
	IPAIRS3 \
	IPAIR(192, $0xff, Z28, Z29, Z30, Z31)

// ISTORE reduces acc (pair p of row byte offset roff) as hsum_float_8 of
// each column's lanes, ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)), and stores
// column 2p to roff(DI), column 2p+1 to roff(DI)(R13).
#define ISTORE(acc, roff) \
	VPSHUFD       $0x4e, acc, Z10 \
	VADDPS        Z10, acc, Z10 \
	VEXTRACTF64X4 $1, Z10, Y15 \
	VADDPS        Y15, Y10, Y10 \
	VEXTRACTF128  $1, Y10, X15 \
	VADDPS        X15, X10, X10 \
	VMOVSS        X10, roff(DI) \
	VEXTRACTPS    $1, X10, roff(DI)(R13*1)

#define ISTORE4(a0, a1, a2, a3) \
	ISTORE(a0, 0) \
	ISTORE(a1, 4) \
	ISTORE(a2, 8) \
	ISTORE(a3, 12)

#define ISTORES1 \
	ISTORE4(Z16, Z17, Z18, Z19)

#define ISTORES2 \
	ISTORES1 \
	LEAQ (DI)(R13*2), DI \
	ISTORE4(Z20, Z21, Z22, Z23)

#define ISTORES3 \
	ISTORES2 \
	LEAQ (DI)(R13*2), DI \
	ISTORE4(Z24, Z25, Z26, Z27)

#define ISTORES4 \
	ISTORES3 \
	LEAQ (DI)(R13*2), DI \
	ISTORE4(Z28, Z29, Z30, Z31)

#define IARGS \
	MOVQ w+0(FP), SI \
	MOVQ rs+8(FP), R9 \
	MOVQ qs+16(FP), DI \
	MOVQ dx+24(FP), DX \
	MOVQ corr+32(FP), R12 \
	MOVQ nb+40(FP), CX \
	MOVQ tab+48(FP), R8 \
	VBROADCASTI32X4 iq4mask<>(SB), Z8 \
	VMOVDQU64       iq4shuf<>(SB), Z14

#define IADVANCE \
	ADDQ $256, DI \
	ADDQ $256, DX \
	ADDQ $256, R12 \
	DECQ CX

// IFLAT4 is the 4-row kernel over k pairs.
#define IFLAT4(dxload, zero, pairs, stores, label) IFLAT4S(dxload, zero, pairs, stores, label, 18, IPF4)

// IFLAT4S is IFLAT4 with the rows' advance per block sz and prefetch pf:
// 18 and IPF4 row-major, 72 and IPFR4 interleaved (Rows4, rs = 18).
#define IFLAT4S(dxload, zero, pairs, stores, label, sz, pf) \
	IARGS \
	LEAQ (SI)(R9*1), BX \
	LEAQ (BX)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	zero \
label: \
	pf \
	dxload \
	IQ4W(SI, Z0, Z4) \
	IQ4W(BX, Z1, Z5) \
	IQ4W(R10, Z2, Z6) \
	IQ4W(R11, Z3, Z7) \
	pairs \
	ADDQ $sz, SI \
	ADDQ $sz, BX \
	ADDQ $sz, R10 \
	ADDQ $sz, R11 \
	IADVANCE \
	JNZ  label \
	MOVQ out+56(FP), DI \
	MOVQ ldo+64(FP), R13 \
	stores \
	VZEROUPPER \
	RET

DATA iq4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA iq4mask<>+8(SB)/8, $0xf0f0f0f0f0f0f0f0
GLOBL iq4mask<>(SB), RODATA|NOPTR, $16

// iq4shuf: chunk i takes bytes 4i..4i+3 of its 16 four times.
DATA iq4shuf<>+0(SB)/8, $0x0302010003020100
DATA iq4shuf<>+8(SB)/8, $0x0302010003020100
DATA iq4shuf<>+16(SB)/8, $0x0706050407060504
DATA iq4shuf<>+24(SB)/8, $0x0706050407060504
DATA iq4shuf<>+32(SB)/8, $0x0b0a09080b0a0908
DATA iq4shuf<>+40(SB)/8, $0x0b0a09080b0a0908
DATA iq4shuf<>+48(SB)/8, $0x0f0e0d0c0f0e0d0c
DATA iq4shuf<>+56(SB)/8, $0x0f0e0d0c0f0e0d0c
GLOBL iq4shuf<>(SB), RODATA|NOPTR, $64

// func q40f4p1(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p1(SB), NOSPLIT, $0-72
	IFLAT4(IDXP0, FZERO1, IPAIRS1N, ISTORES1, q40f4p1l)

// func q40f4p2(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p2(SB), NOSPLIT, $0-72
	IFLAT4(IDXALL, FZERO2, IPAIRS2, ISTORES2, q40f4p2l)

// func q40f4p3(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p3(SB), NOSPLIT, $0-72
	IFLAT4(IDXALL, FZERO3, IPAIRS3, ISTORES3, q40f4p3l)

// func q40f4p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p4(SB), NOSPLIT, $0-72
	IFLAT4(IDXALL, FZERO4, IPAIRS4, ISTORES4, q40f4p4l)

// IPAIR1 runs the one row against pair p.
#define IPAIR1(off, imm, a0) \
	VMOVDQU32 off(DI), Z11 \
	VMOVDQU32 off(R12), Z13 \
	IROW(Z0, imm, Z4, a0)

// func q40f1p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
//
// One row by the 4 pairs (rows left over below 4); out[c·ldo/4].
TEXT ·q40f1p4(SB), NOSPLIT, $0-72
	IARGS
	VPXORD Z16, Z16, Z16
	VPXORD Z20, Z20, Z20
	VPXORD Z24, Z24, Z24
	VPXORD Z28, Z28, Z28

q40f1p4l:
	VMOVUPS (DX), Z12
	IQ4W(SI, Z0, Z4)
	IPAIR1(0, $0x00, Z16)
	IPAIR1(64, $0x55, Z20)
	IPAIR1(128, $0xaa, Z24)
	IPAIR1(192, $0xff, Z28)
	ADDQ $18, SI
	IADVANCE
	JNZ  q40f1p4l
	MOVQ out+56(FP), DI
	MOVQ ldo+64(FP), R13
	ISTORE(Z16, 0)
	LEAQ (DI)(R13*2), DI
	ISTORE(Z20, 0)
	LEAQ (DI)(R13*2), DI
	ISTORE(Z24, 0)
	LEAQ (DI)(R13*2), DI
	ISTORE(Z28, 0)
	VZEROUPPER
	RET

// The 4-row flat kernels on the interleaved layout (Rows4).

// func q40f4p1R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p1R4(SB), NOSPLIT, $0-72
	IFLAT4S(IDXP0, FZERO1, IPAIRS1N, ISTORES1, q40f4p1r4, 72, IPFR4)

// func q40f4p2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p2R4(SB), NOSPLIT, $0-72
	IFLAT4S(IDXALL, FZERO2, IPAIRS2, ISTORES2, q40f4p2r4, 72, IPFR4)

// func q40f4p3R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p3R4(SB), NOSPLIT, $0-72
	IFLAT4S(IDXALL, FZERO3, IPAIRS3, ISTORES3, q40f4p3r4, 72, IPFR4)

// func q40f4p4R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q40f4p4R4(SB), NOSPLIT, $0-72
	IFLAT4S(IDXALL, FZERO4, IPAIRS4, ISTORES4, q40f4p4r4, 72, IPFR4)

// func q80f4p1R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p1R4(SB), NOSPLIT, $0-72
	FLATP(FQ8W, 136, fflip, FZERO1, FPAIRS1, FSTORES1, q80f4p1r4, IPFR8)

// func q80f4p2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p2R4(SB), NOSPLIT, $0-72
	FLATP(FQ8W, 136, fflip, FZERO2, FPAIRS2, FSTORES2, q80f4p2r4, IPFR8)

// func q80f4p3R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p3R4(SB), NOSPLIT, $0-72
	FLATP(FQ8W, 136, fflip, FZERO3, FPAIRS3, FSTORES3, q80f4p3r4, IPFR8)

// func q80f4p4R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)
TEXT ·q80f4p4R4(SB), NOSPLIT, $0-72
	FLATP(FQ8W, 136, fflip, FZERO4, FPAIRS4, FSTORES4, q80f4p4r4, IPFR8)
