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

// AMXROW scales row m of the block's int32 tile (stored at R11) into the
// accumulator acc: acc += float32(C[m][n]) · (d_w[m]·d_x[n]), one fused
// multiply-add, the scale rounded to float32 first (amxModelTile's order).
#define AMXROW(m, acc) \
	VMULPS.BCST   (m*4)(R9), Z16, Z17 \
	VCVTDQ2PS     (m*64)(R11), Z18    \
	VFMADD231PS   Z18, Z17, acc

// AMXZERO clears the 16 accumulators (one row of 16 columns each).
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

// AMXSCALE scales the block's stored C tile (R11) by d_w (R9, 16 floats)
// and d_x (R10, 16 floats) into the accumulators.
#define AMXSCALE \
	VMOVUPS (R10), Z16 \
	AMXROW(0, Z0)      \
	AMXROW(1, Z1)      \
	AMXROW(2, Z2)      \
	AMXROW(3, Z3)      \
	AMXROW(4, Z4)      \
	AMXROW(5, Z5)      \
	AMXROW(6, Z6)      \
	AMXROW(7, Z7)      \
	AMXROW(8, Z8)      \
	AMXROW(9, Z9)      \
	AMXROW(10, Z10)    \
	AMXROW(11, Z11)    \
	AMXROW(12, Z12)    \
	AMXROW(13, Z13)    \
	AMXROW(14, Z14)    \
	AMXROW(15, Z15)

// AMXSTORE writes accumulator rows m < mr (BX) to dst (R12): row m's
// column n to R12 + 4·(idx[n] + m) for the columns n < nc (mask K3; Z19
// holds idx), one scatter a row.
#define AMXSCAT(m, acc) \
	KMOVW       K3, K1                     \
	VSCATTERDPS acc, K1, (m*4)(R12)(Z19*4) \
	CMPQ        BX, $(m+1)                 \
	JEQ         stored

#define AMXSTORE \
	AMXSCAT(0, Z0)   \
	AMXSCAT(1, Z1)   \
	AMXSCAT(2, Z2)   \
	AMXSCAT(3, Z3)   \
	AMXSCAT(4, Z4)   \
	AMXSCAT(5, Z5)   \
	AMXSCAT(6, Z6)   \
	AMXSCAT(7, Z7)   \
	AMXSCAT(8, Z8)   \
	AMXSCAT(9, Z9)   \
	AMXSCAT(10, Z10) \
	AMXSCAT(11, Z11) \
	AMXSCAT(12, Z12) \
	AMXSCAT(13, Z13) \
	AMXSCAT(14, Z14) \
	AMXSCAT(15, Z15)

// AMXOUT loads the store's operands: Z19 = idx, K3 = nc ones, BX = mr.
#define AMXOUT(idx, nc, mr) \
	MOVQ      idx, AX    \
	VMOVDQU32 (AX), Z19  \
	MOVQ      nc, AX     \
	MOVL      $1, BX     \
	SHLXL     AX, BX, BX \
	DECL      BX         \
	KMOVW     BX, K3     \
	MOVQ      mr, BX

// func amxTile(cfg *byte, a *byte, astride, ablk int, dw *float32, b *byte, dx *float32, nb int, c *int32, dst *float32, idx *int32, nc, mr int)
//
//	for blk := 0; blk < nb; blk++ {
//		C = 0; C += A(a + blk·ablk, rows astride apart) · B(b + 512·blk)   // TDPBSSD
//		acc[m][n] = fma(float32(C[m][n]), dw[16·blk+m]·dx[128·blk+n], acc[m][n])
//	}
//	dst[idx[n] + m] = acc[m][n] for m < mr, n < nc
TEXT ·amxTile(SB), NOSPLIT, $0-104
	MOVQ cfg+0(FP), AX
	MOVQ a+8(FP), SI
	MOVQ astride+16(FP), DX
	MOVQ ablk+24(FP), R8
	MOVQ dw+32(FP), R9
	MOVQ b+40(FP), DI
	MOVQ dx+48(FP), R10
	MOVQ nb+56(FP), CX
	MOVQ c+64(FP), R11
	MOVQ dst+72(FP), R12
	MOVQ $64, R13
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // ldtilecfg (%rax)
	AMXZERO

block:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0               // tilezero %tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x16 // tileloadd (%rsi,%rdx,1), %tmm1
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x2f // tileloadd (%rdi,%r13,1), %tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x6b; BYTE $0x5e; BYTE $0xc1               // tdpbssd %tmm2, %tmm1, %tmm0
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x2b // tilestored %tmm0, (%r11,%r13,1)
	AMXSCALE
	ADDQ R8, SI
	ADDQ $512, DI
	ADDQ $512, R10
	ADDQ $64, R9
	DECQ CX
	JNZ  block

	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // tilerelease
	AMXOUT(idx+80(FP), nc+88(FP), mr+96(FP))
	AMXSTORE

stored:
	VZEROUPPER
	RET

// func amxScaleOnly(dw *float32, dx *float32, nb int, c *int32, dst *float32, idx *int32, nc, mr int)
//
// amxTile without the tiles, for the tests on CPUs without AMX: c holds the
// nb C tiles TILESTORED would have written (1 KB each, from the emulator),
// and the same macros scale and store them, so that the AVX-512 half of
// the kernel (scale order, d_w/d_x addressing, accumulator layout) runs
// against the model here.
TEXT ·amxScaleOnly(SB), NOSPLIT, $0-64
	MOVQ dw+0(FP), R9
	MOVQ dx+8(FP), R10
	MOVQ nb+16(FP), CX
	MOVQ c+24(FP), R11
	MOVQ dst+32(FP), R12
	AMXZERO

scaleblock:
	AMXSCALE
	ADDQ $512, R10
	ADDQ $64, R9
	ADDQ $1024, R11
	DECQ CX
	JNZ  scaleblock
	AMXOUT(idx+40(FP), nc+48(FP), mr+56(FP))
	AMXSTORE

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

// func amxScales(w *byte, base, step *int32, nb, mr int, dw *float32)
//
// d_w of the row tile: dw[16b + m] = fp16(w + base[m] + b·step[m]) for
// m < mr, 0 for m ≥ mr, one masked dword gather and VCVTPH2PS a block
// (exact, as fp16Table).
TEXT ·amxScales(SB), NOSPLIT, $0-48
	MOVQ      w+0(FP), SI
	MOVQ      base+8(FP), AX
	VMOVDQU32 (AX), Z1
	MOVQ      step+16(FP), AX
	VMOVDQU32 (AX), Z4
	MOVQ      nb+24(FP), CX
	MOVQ      mr+32(FP), BX
	MOVQ      dw+40(FP), DI
	MOVL      $1, AX
	SHLXL     BX, AX, AX
	DECL      AX                 // mr ones
	KMOVW     AX, K2

scales:
	KMOVW      K2, K1            // the gather clears its mask
	VPXORD     Z0, Z0, Z0
	VPGATHERDD (SI)(Z1*1), K1, Z0
	VPMOVDW    Z0, Y2
	VCVTPH2PS  Y2, Z3
	VMOVUPS    Z3, (DI)
	VPADDD     Z4, Z1, Z1
	ADDQ       $64, DI
	DECQ       CX
	JNZ        scales
	VZEROUPPER
	RET

// func amxUnpackQ4(w *byte, base, step *int32, nb, mr int, a *byte)
//
// The A tiles of a Q4_0 row tile: for m < mr and each block b (at w +
// base[m] + b·step[m]), the 32 values q − 8 as int8 (low nibbles, then
// high) at a + 512b + 32m.
TEXT ·amxUnpackQ4(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), SI
	MOVQ         base+8(FP), R8
	MOVQ         step+16(FP), R13
	MOVQ         nb+24(FP), R9
	MOVQ         mr+32(FP), BX
	MOVQ         a+40(FP), DI
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x08080808, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14

row:
	MOVLQSX (R8), R10
	ADDQ    SI, R10
	MOVLQSX (R13), R12
	MOVQ    DI, R11
	MOVQ    R9, CX

blk:
	VMOVDQU     2(R10), X0
	VPSRLW      $4, X0, X1
	VPAND       X15, X0, X0
	VPAND       X15, X1, X1
	VINSERTI128 $1, X1, Y0, Y0
	VPSUBB      Y14, Y0, Y0
	VMOVDQU     Y0, (R11)
	ADDQ        R12, R10
	ADDQ        $512, R11
	DECQ        CX
	JNZ         blk
	ADDQ        $4, R8
	ADDQ        $4, R13
	ADDQ        $32, DI
	DECQ        BX
	JNZ         row
	VZEROUPPER
	RET
