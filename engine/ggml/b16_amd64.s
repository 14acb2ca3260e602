//go:build !noasm

#include "textflag.h"

// The tile layout's decode kernels (b16.go): one column against a group
// of 16 rows, the 16 rows in the 16 dword lanes. Per block the integer
// sum starts at the column's correction off·Σx (broadcast), takes one
// VPDPBUSD per dword of the block (the weights unsigned: Q4_0's nibbles,
// Q8_0's w^0x80 = w+128; the column's dword broadcast from memory, signed),
// in two chains (even and odd dwords) added exactly; then, in blocksQ32's
// order, acc = fma(float32(Σ), float32(d_w·d_x), acc). Registers: Z0 the
// 16 rows' accumulator, Z1/Z5 the integer chains, Z4 the scales, Z31 the
// byte constant. SI walks the group (TypeSize·16 a block), DI the column's
// Q8_0 blocks (34), R9 and R10 its d_x and correction (step elements
// apart, R13 bytes: Act.bstep, 1 for decode's lone column, 16 where the
// column is one of a group's). Each iteration prefetches the
// group's bytes 16 blocks ahead (b16AheadQ8 and b16AheadQ4: more on AMD,
// amx_amd64.go), one line at a time, into L2
// (PREFETCHT1): decode reads each line once, and on the 2-vCPU Xeon VM
// (2026-11-27, three alternations) TinyLlama Q4_0 generation read
// 17.9–20.7 t/s at 1 thread and 34.7–37.7 at 2 this way against
// 16.6–18.1 and 31.5–34.7 with PREFETCHT0; Q8_0 10.9–11.0 and 20.9–21.8
// against 9.0–10.5 and 18.7–20.5.

// B16FLOAT: the block's float step and the pointer moves.
#define B16FLOAT(bs) \
	VPADDD       Z5, Z1, Z1     \
	VCVTDQ2PS    Z1, Z1         \
	VCVTPH2PS    (SI), Z4       \
	VMULPS.BCST  (R9), Z4, Z4   \
	VFMADD231PS  Z1, Z4, Z0     \
	ADDQ         $bs, SI        \
	ADDQ         $34, DI        \
	ADDQ         R13, R9        \
	ADDQ         R13, R10

// B16Q8(k): dword k of the block's 16 rows against the column's dword k.
#define B16Q8(k, acc) \
	VPXORD            (32+64*k)(SI), Z31, Z2 \
	VPDPBUSD.BCST     (2+4*k)(DI), Z2, acc

// func b16q80(w *byte, nb int, x *byte, dx *float32, corr *int32, dst *float32, step int)
//
//	dst[m] = Σ over blocks b, in order, of blocksQ32's step for row m of the
//	group at w and the column's Q8_0 block at x + 34b
TEXT ·b16q80(SB), NOSPLIT, $0-56
	MOVQ         w+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         x+16(FP), DI
	MOVQ         dx+24(FP), R9
	MOVQ         corr+32(FP), R10
	MOVQ         dst+40(FP), R12
	MOVQ         step+48(FP), R13
	SHLQ         $2, R13
	MOVL         $0x80808080, AX
	VMOVD        AX, X31
	VPBROADCASTD X31, Z31
	VXORPS       Z0, Z0, Z0
	MOVQ         ·b16AheadQ8(SB), R11
	ADDQ         SI, R11

q8blk:
	PREFETCHT1   (R11)
	PREFETCHT1   64(R11)
	PREFETCHT1   128(R11)
	PREFETCHT1   192(R11)
	PREFETCHT1   256(R11)
	PREFETCHT1   320(R11)
	PREFETCHT1   384(R11)
	PREFETCHT1   448(R11)
	PREFETCHT1   512(R11)
	VPBROADCASTD (R10), Z1
	VPXORD       Z5, Z5, Z5
	B16Q8(0, Z1)
	B16Q8(1, Z5)
	B16Q8(2, Z1)
	B16Q8(3, Z5)
	B16Q8(4, Z1)
	B16Q8(5, Z5)
	B16Q8(6, Z1)
	B16Q8(7, Z5)
	B16FLOAT(544)
	ADDQ         $544, R11
	DECQ         CX
	JNZ          q8blk
	VMOVUPS      Z0, (R12)
	VZEROUPPER
	RET

// B16Q4(k): chunk k's low nibbles (values 4k..4k+3) against the column's
// dword k, its high nibbles (16+4k..) against dword 4+k. The high nibbles
// stay in place (the bytes & 0xf0, 16 times the nibble): no shift, and
// both masks take the chunk from memory, so a chunk is four µops, not
// six; the block's high sum is divided by 16 (exactly: every term is a
// multiple of 16) before the two chains are added.
#define B16Q4(k) \
	VPANDD        (32+64*k)(SI), Z31, Z2 \
	VPANDD        (32+64*k)(SI), Z30, Z3 \
	VPDPBUSD.BCST (2+4*k)(DI), Z2, Z1 \
	VPDPBUSD.BCST (18+4*k)(DI), Z3, Z5

// B16Q4BLOCK: one Q4_0 block of the group against the column, and the
// pointer moves (R11 the L2 prefetch address).
#define B16Q4BLOCK \
	VPBROADCASTD (R10), Z1 \
	VPXORD       Z5, Z5, Z5 \
	B16Q4(0)               \
	B16Q4(1)               \
	B16Q4(2)               \
	B16Q4(3)               \
	VPSRAD       $4, Z5, Z5 \
	B16FLOAT(288)          \
	ADDQ         $288, R11

// func b16q40(w *byte, nb int, x *byte, dx *float32, corr *int32, dst *float32, step int)
//
// b16q80 for Q4_0 (288 bytes a block and group). Besides an L2 prefetch
// b16AheadQ4 bytes ahead (16 blocks, 32 on AMD: amx_amd64.go) it
// prefetches into L1 6 blocks ahead where b16Q4L1 is set (not on AMD), so
// the block's loads find their lines there: with both, and the shift-free
// nibbles above, one core's pass over a 600 MiB set of groups read 95–97%
// of ReadSum's rate at 1 and 2 threads, against 90–93% before (2-vCPU
// Xeon VM, 2026-11-27, 15 alternated passes a variant, medians, in CPU
// time). On the EPYC VM (Zen 5) the L1 prefetch costs instead: see
// b16Q4L1.
TEXT ·b16q40(SB), NOSPLIT, $0-56
	MOVQ         w+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         x+16(FP), DI
	MOVQ         dx+24(FP), R9
	MOVQ         corr+32(FP), R10
	MOVQ         dst+40(FP), R12
	MOVQ         step+48(FP), R13
	SHLQ         $2, R13
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X31
	VPBROADCASTD X31, Z31
	MOVL         $0xf0f0f0f0, AX
	VMOVD        AX, X30
	VPBROADCASTD X30, Z30
	VXORPS       Z0, Z0, Z0
	MOVQ         ·b16AheadQ4(SB), R11
	ADDQ         SI, R11
	CMPB         ·b16Q4L1(SB), $0
	JEQ          q4blkL2

q4blk:
	PREFETCHT1   (R11)
	PREFETCHT1   64(R11)
	PREFETCHT1   128(R11)
	PREFETCHT1   192(R11)
	PREFETCHT1   256(R11)
	PREFETCHT0   (6*288)(SI)
	PREFETCHT0   (6*288+64)(SI)
	PREFETCHT0   (6*288+128)(SI)
	PREFETCHT0   (6*288+192)(SI)
	PREFETCHT0   (6*288+256)(SI)
	B16Q4BLOCK
	DECQ         CX
	JNZ          q4blk
	JMP          q4done

q4blkL2:
	PREFETCHT1   (R11)
	PREFETCHT1   64(R11)
	PREFETCHT1   128(R11)
	PREFETCHT1   192(R11)
	PREFETCHT1   256(R11)
	B16Q4BLOCK
	DECQ         CX
	JNZ          q4blkL2

q4done:
	VMOVUPS      Z0, (R12)
	VZEROUPPER
	RET

// func b16UnpackQ4(w *byte, nb int, dst *byte)
//
// The B tiles of a Q4_0 group in the tile layout: per block b, the values
// q − 8 as int8 of chunk k's low nibbles at dst + 512b + 64k (B row k:
// values 4k..4k+3 of the 16 rows) and its high nibbles at + 256 (row 4+k).
TEXT ·b16UnpackQ4(SB), NOSPLIT, $0-24
	MOVQ         w+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         dst+16(FP), DI
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X31
	VPBROADCASTD X31, Z31
	MOVL         $0x08080808, AX
	VMOVD        AX, X30
	VPBROADCASTD X30, Z30

unpack:
	VMOVDQU32 32(SI), Z0
	VMOVDQU32 96(SI), Z1
	VMOVDQU32 160(SI), Z2
	VMOVDQU32 224(SI), Z3
	VPSRLW    $4, Z0, Z4
	VPSRLW    $4, Z1, Z5
	VPSRLW    $4, Z2, Z6
	VPSRLW    $4, Z3, Z7
	VPANDD    Z31, Z0, Z0
	VPANDD    Z31, Z1, Z1
	VPANDD    Z31, Z2, Z2
	VPANDD    Z31, Z3, Z3
	VPANDD    Z31, Z4, Z4
	VPANDD    Z31, Z5, Z5
	VPANDD    Z31, Z6, Z6
	VPANDD    Z31, Z7, Z7
	VPSUBB    Z30, Z0, Z0
	VPSUBB    Z30, Z1, Z1
	VPSUBB    Z30, Z2, Z2
	VPSUBB    Z30, Z3, Z3
	VPSUBB    Z30, Z4, Z4
	VPSUBB    Z30, Z5, Z5
	VPSUBB    Z30, Z6, Z6
	VPSUBB    Z30, Z7, Z7
	VMOVDQU32 Z0, (DI)
	VMOVDQU32 Z1, 64(DI)
	VMOVDQU32 Z2, 128(DI)
	VMOVDQU32 Z3, 192(DI)
	VMOVDQU32 Z4, 256(DI)
	VMOVDQU32 Z5, 320(DI)
	VMOVDQU32 Z6, 384(DI)
	VMOVDQU32 Z7, 448(DI)
	ADDQ      $288, SI
	ADDQ      $512, DI
	DECQ      CX
	JNZ       unpack
	VZEROUPPER
	RET
