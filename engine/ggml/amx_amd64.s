//go:build !noasm

#include "textflag.h"

// The AMX int8 tile kernel (amx_amd64.go). Go's assembler has no AMX
// mnemonics, so each AMX instruction is spelled as its bytes, one
// instruction per line, with the GNU as (AT&T) spelling in the comment;
// TestAMXEncoding assembles every such comment with `as --64` and compares
// the bytes. The registers in those bytes are fixed: AX (tile config),
// SI+DX (A tile: weights), DI+R13 (B tile: activations), R11+R13 (C tile
// store). Tiles: tmm0 = C (mr×16 int32), tmm1 = A (mr×32 int8), tmm2 = B
// (8×64 int8: 8 dwords of a block by 16 columns). Vector registers: Z0-Z15
// the accumulators (row m of the tile in Zm, 16 columns), Z16 d_x, Z17
// the row's scales, Z18 the converted sums, Z19 and K3 the output's
// column offsets and mask.
//
// Preemption: the tiles live from LDTILECFG to TILERELEASE inside this one
// function. An assembly function is never an asynchronous safe point, so a
// preemption signal that lands here returns to the same instruction on the
// same OS thread; the kernel saves and restores the tile state (XSAVE's
// XTILECFG/XTILEDATA components, 8 KB+, on the 32 KB signal stack) around
// the handler, as it does for the vector registers, once the process was
// granted XTILEDATA (amxPermit). The goroutine cannot move to another
// thread between the first and last tile instruction, so no LockOSThread
// is needed, and TILERELEASE returns the thread to the initial tile state
// (nothing more to save on later context switches).

// AMXROW scales row m (activation column m) of a block's int32 tile
// stored at off(R11) into the accumulator acc: acc += float32(C[m][n]) ·
// (d_x[m]·d_w[n]), one fused multiply-add, the scale rounded to float32
// first (blocksQ32's order: the product commutes).
#define AMXROW(off, m, acc) \
	VMULPS.BCST   (m*4)(R9), Z16, Z17    \
	VCVTDQ2PS     (off+m*64)(R11), Z18   \
	VFMADD231PS   Z18, Z17, acc

// AMXZERO clears the 16 accumulators.
#define AMXZERO \
	VXORPS Z0, Z0, Z0    \
	VXORPS Z1, Z1, Z1    \
	VXORPS Z2, Z2, Z2    \
	VXORPS Z3, Z3, Z3    \
	VXORPS Z4, Z4, Z4    \
	VXORPS Z5, Z5, Z5    \
	VXORPS Z6, Z6, Z6    \
	VXORPS Z7, Z7, Z7    \
	VXORPS Z8, Z8, Z8    \
	VXORPS Z9, Z9, Z9    \
	VXORPS Z10, Z10, Z10 \
	VXORPS Z11, Z11, Z11 \
	VXORPS Z12, Z12, Z12 \
	VXORPS Z13, Z13, Z13 \
	VXORPS Z14, Z14, Z14 \
	VXORPS Z15, Z15, Z15

// AMXSCALE scales the block's C tile stored at off(R11) by d_x (R9, 16
// floats, one per column) and the 16 rows' fp16 d_w (R10) into the
// accumulators of the nc columns (rounded up to a multiple of 4: the rest
// would be stale rows never stored), and moves R9 and R10 to the next
// block; done is a label of the expansion's own.
#define AMXSCALE(off, done) \
	VCVTPH2PS (R10), Z16    \
	AMXROW(off, 0, Z0)      \
	AMXROW(off, 1, Z1)      \
	AMXROW(off, 2, Z2)      \
	AMXROW(off, 3, Z3)      \
	CMPQ      nc+104(FP), $4 \
	JLE       done          \
	AMXROW(off, 4, Z4)      \
	AMXROW(off, 5, Z5)      \
	AMXROW(off, 6, Z6)      \
	AMXROW(off, 7, Z7)      \
	CMPQ      nc+104(FP), $8 \
	JLE       done          \
	AMXROW(off, 8, Z8)      \
	AMXROW(off, 9, Z9)      \
	AMXROW(off, 10, Z10)    \
	AMXROW(off, 11, Z11)    \
	CMPQ      nc+104(FP), $12 \
	JLE       done          \
	AMXROW(off, 12, Z12)    \
	AMXROW(off, 13, Z13)    \
	AMXROW(off, 14, Z14)    \
	AMXROW(off, 15, Z15)    \
done:                       \
	ADDQ      $64, R9       \
	ADDQ      BX, R10

// AMXPUT stores column m's 16 rows at R12, and stops after column nc−1
// (BX); AX is the columns' distance in bytes.
#define AMXPUT(m, acc) \
	VMOVUPS acc, (R12) \
	CMPQ    BX, $(m+1) \
	JEQ     stored     \
	ADDQ    AX, R12

// func amxTileB(cfg *byte, x *byte, xs, xblk int, dx *float32, b *byte, bblk int, ws *byte, wsblk int, nb int, c *int32, dst *float32, ldd int, nc int)
//
//	for blk := 0; blk < nb; blk++ {
//		C = 0; C += A(x + xblk·blk, nc rows xs apart) · B(b + bblk·blk)  // TDPBSSD
//		acc[m][n] = fma(float32(C[m][n]), dx[16·blk+m]·fp16(ws + wsblk·blk + 2n), acc[m][n])
//	}
//	dst[m·ldd + n] = acc[m][n] for m < nc, n < 16
//
// Software-pipelined by one block: the tiles of block j+1 (tmm0-2, C
// stored at c, or tmm3-5, C at c+1024, by parity) are issued before block
// j's C is scaled, so the tile unit works while AVX-512 scales. SI/DI walk
// the tiles' blocks (R12 and R8 their steps), R9/R10 the scales' (one
// block behind); CX counts the blocks not yet scaled.
TEXT ·amxTileB(SB), NOSPLIT, $0-112
	MOVQ cfg+0(FP), AX
	MOVQ x+8(FP), SI
	MOVQ xs+16(FP), DX
	MOVQ xblk+24(FP), R12
	MOVQ dx+32(FP), R9
	MOVQ b+40(FP), DI
	MOVQ bblk+48(FP), R8
	MOVQ ws+56(FP), R10
	MOVQ wsblk+64(FP), BX
	MOVQ nb+72(FP), CX
	MOVQ c+80(FP), R11
	MOVQ $64, R13
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // ldtilecfg (%rax)
	LEAQ 1024(R11), AX
	AMXZERO

	// block 0's tiles
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0               // tilezero %tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x16 // tileloadd (%rsi,%rdx,1), %tmm1
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x2f // tileloadd (%rdi,%r13,1), %tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x6b; BYTE $0x5e; BYTE $0xc1               // tdpbssd %tmm2, %tmm1, %tmm0
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x2b // tilestored %tmm0, (%r11,%r13,1)
	ADDQ R12, SI
	ADDQ R8, DI

pair:
	CMPQ CX, $1
	JEQ  last0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8               // tilezero %tmm3
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16 // tileloadd (%rsi,%rdx,1), %tmm4
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x2f // tileloadd (%rdi,%r13,1), %tmm5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x53; BYTE $0x5e; BYTE $0xdc               // tdpbssd %tmm5, %tmm4, %tmm3
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x1c; BYTE $0x28 // tilestored %tmm3, (%rax,%r13,1)
	ADDQ R12, SI
	ADDQ R8, DI
	AMXSCALE(0, scaled0)
	DECQ CX
	CMPQ CX, $1
	JEQ  last1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0               // tilezero %tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x16 // tileloadd (%rsi,%rdx,1), %tmm1
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x2f // tileloadd (%rdi,%r13,1), %tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x6b; BYTE $0x5e; BYTE $0xc1               // tdpbssd %tmm2, %tmm1, %tmm0
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x2b // tilestored %tmm0, (%r11,%r13,1)
	ADDQ R12, SI
	ADDQ R8, DI
	AMXSCALE(1024, scaled1)
	DECQ CX
	JMP  pair

last0:
	AMXSCALE(0, scaled2)
	JMP done

last1:
	AMXSCALE(1024, scaled3)

done:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // tilerelease
	MOVQ dst+88(FP), R12
	MOVQ ldd+96(FP), AX
	SHLQ $2, AX
	MOVQ nc+104(FP), BX
	AMXPUT(0, Z0)
	AMXPUT(1, Z1)
	AMXPUT(2, Z2)
	AMXPUT(3, Z3)
	AMXPUT(4, Z4)
	AMXPUT(5, Z5)
	AMXPUT(6, Z6)
	AMXPUT(7, Z7)
	AMXPUT(8, Z8)
	AMXPUT(9, Z9)
	AMXPUT(10, Z10)
	AMXPUT(11, Z11)
	AMXPUT(12, Z12)
	AMXPUT(13, Z13)
	AMXPUT(14, Z14)
	VMOVUPS Z15, (R12)

stored:
	VZEROUPPER
	RET

// func xgetbv0() uint32: XCR0's low 32 bits (the OS-enabled state
// components; AMX: bits 17 XTILECFG and 18 XTILEDATA). Only called where
// CPUID reports OSXSAVE, after the AVX-512 VNNI tier was found (so the
// VZEROUPPER, which TestAssemblyIsVEXOnly asks of every function, is safe).
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	XORL CX, CX
	XGETBV
	MOVL AX, ret+0(FP)
	VZEROUPPER
	RET
