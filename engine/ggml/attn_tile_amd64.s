//go:build amd64 && !noasm

#include "textflag.h"

// Tiled attention kernels (see attn_tile.go; each score and each output
// element is computed as dotsF32AVX and accRows*AVX compute it).
// VEX-encoded AVX2/FMA only; every function ends with VZEROUPPER.

// One chunk of 8 at byte offset DX: the two query chunks against the four
// keys' chunks. Accumulator of query i, key j: Y(2j+i).
#define DTSTEP \
	VMOVUPS     (R8)(DX*1), Y8  \
	VMOVUPS     (R9)(DX*1), Y9  \
	VMOVUPS     (SI)(DX*1), Y10 \
	VFMADD231PS Y8, Y10, Y0     \
	VFMADD231PS Y9, Y10, Y1     \
	VMOVUPS     (DI)(DX*1), Y11 \
	VFMADD231PS Y8, Y11, Y2     \
	VFMADD231PS Y9, Y11, Y3     \
	VMOVUPS     (CX)(DX*1), Y10 \
	VFMADD231PS Y8, Y10, Y4     \
	VFMADD231PS Y9, Y10, Y5     \
	VMOVUPS     (AX)(DX*1), Y11 \
	VFMADD231PS Y8, Y11, Y6     \
	VFMADD231PS Y9, Y11, Y7

#define DTZERO \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7

#define DTSTORE(off) \
	VMOVUPS Y0, (off+0)(SP)   \
	VMOVUPS Y1, (off+32)(SP)  \
	VMOVUPS Y2, (off+64)(SP)  \
	VMOVUPS Y3, (off+96)(SP)  \
	VMOVUPS Y4, (off+128)(SP) \
	VMOVUPS Y5, (off+160)(SP) \
	VMOVUPS Y6, (off+192)(SP) \
	VMOVUPS Y7, (off+224)(SP)

#define DTADD(off) \
	VADDPS (off+0)(SP), Y0, Y0   \
	VADDPS (off+32)(SP), Y1, Y1  \
	VADDPS (off+64)(SP), Y2, Y2  \
	VADDPS (off+96)(SP), Y3, Y3  \
	VADDPS (off+128)(SP), Y4, Y4 \
	VADDPS (off+160)(SP), Y5, Y5 \
	VADDPS (off+192)(SP), Y6, Y6 \
	VADDPS (off+224)(SP), Y7, Y7

// func dotsTile2x4AVX(q *float32, qstride int, k *float32, kstride, n, m int, out *float32, ostride int)
//
//	for i < 2, j < m: out[i*ostride/4+j] = dotF32(q[i*qstride/4:], k[j*kstride/4:], n)
//
// Strides in bytes, n a multiple of 8 and at least 32, m a multiple of 4.
// dotsF32AVX's four accumulators of a dot are independent chains (a1..a3
// over chunks 4g+1..4g+3, a0 over chunks 4g and then every chunk after the
// groups of 32), so they are computed one chain at a time for the eight
// (query, key) pairs, the finished chains parked on the stack, and summed
// as (a0+a1)+(a2+a3); the eight hsum_float_8 reductions are done together
// (lanes l and l+4, then 0+2 and 1+3, then the two halves).
TEXT ·dotsTile2x4AVX(SB), $512-64
	MOVQ q+0(FP), R8
	MOVQ qstride+8(FP), AX
	LEAQ (R8)(AX*1), R9
	MOVQ k+16(FP), SI
	MOVQ kstride+24(FP), R10
	MOVQ n+32(FP), R11
	MOVQ m+40(FP), R12
	SHRQ $2, R12
	MOVQ out+48(FP), R13
	MOVQ ostride+56(FP), AX
	LEAQ (R13)(AX*1), R14
	MOVQ R11, BX
	SHRQ $5, BX
	SHLQ $7, BX               // bytes in the groups of 32
	SHLQ $2, R11              // bytes in a row

dtblock:
	LEAQ (SI)(R10*1), DI
	LEAQ (SI)(R10*2), CX
	LEAQ (DI)(R10*2), AX

	// a0: chunks 4g, then the chunks after the groups of 32.
	DTZERO
	XORQ DX, DX

dtc0:
	DTSTEP
	ADDQ $128, DX
	CMPQ DX, BX
	JLT  dtc0
	MOVQ BX, DX

dtc0t:
	CMPQ DX, R11
	JGE  dtc1
	DTSTEP
	ADDQ $32, DX
	JMP  dtc0t

dtc1:
	DTSTORE(0)
	DTZERO
	MOVQ $32, DX

dtc1l:
	DTSTEP
	ADDQ $128, DX
	CMPQ DX, BX
	JLT  dtc1l
	DTADD(0)                  // a0 + a1
	DTSTORE(0)
	DTZERO
	MOVQ $64, DX

dtc2l:
	DTSTEP
	ADDQ $128, DX
	CMPQ DX, BX
	JLT  dtc2l
	DTSTORE(256)
	DTZERO
	MOVQ $96, DX

dtc3l:
	DTSTEP
	ADDQ $128, DX
	CMPQ DX, BX
	JLT  dtc3l
	DTADD(256)                // a2 + a3
	DTADD(0)                  // (a0+a1) + (a2+a3)

	// Eight hsum_float_8 at once. Pair p = 2j+i in Yp.
	VPERM2F128 $0x20, Y1, Y0, Y8
	VPERM2F128 $0x31, Y1, Y0, Y9
	VADDPS     Y9, Y8, Y8        // t of pairs 0 | 1
	VPERM2F128 $0x20, Y3, Y2, Y10
	VPERM2F128 $0x31, Y3, Y2, Y9
	VADDPS     Y9, Y10, Y10      // 2 | 3
	VPERM2F128 $0x20, Y5, Y4, Y11
	VPERM2F128 $0x31, Y5, Y4, Y9
	VADDPS     Y9, Y11, Y11      // 4 | 5
	VPERM2F128 $0x20, Y7, Y6, Y12
	VPERM2F128 $0x31, Y7, Y6, Y9
	VADDPS     Y9, Y12, Y12      // 6 | 7
	VSHUFPS    $0x44, Y10, Y8, Y9
	VSHUFPS    $0xEE, Y10, Y8, Y13
	VADDPS     Y13, Y9, Y9       // t0+t2, t1+t3 of 0, 2 | 1, 3
	VSHUFPS    $0x44, Y12, Y11, Y14
	VSHUFPS    $0xEE, Y12, Y11, Y13
	VADDPS     Y13, Y14, Y14     // of 4, 6 | 5, 7
	VSHUFPS    $0x88, Y14, Y9, Y10
	VSHUFPS    $0xDD, Y14, Y9, Y11
	VADDPS     Y11, Y10, Y10     // 0, 2, 4, 6 | 1, 3, 5, 7
	VMOVUPS    X10, (R13)
	VEXTRACTF128 $1, Y10, X11
	VMOVUPS    X11, (R14)
	ADDQ       $16, R13
	ADDQ       $16, R14
	LEAQ       (CX)(R10*2), SI
	DECQ       R12
	JNZ        dtblock
	VZEROUPPER
	RET

// func accTile2x32AVX(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
//	for j < m, i < 2, e < 32: out[i*ostride/4+e] += w[i*wstride/4+j] * v[j*vstride/4+e]
//
// Strides in bytes; a separate multiply and add per element, in j order.
TEXT ·accTile2x32AVX(SB), NOSPLIT, $0-56
	MOVQ    out+0(FP), DI
	MOVQ    ostride+8(FP), AX
	LEAQ    (DI)(AX*1), R8
	MOVQ    w+16(FP), DX
	MOVQ    wstride+24(FP), AX
	LEAQ    (DX)(AX*1), R9
	MOVQ    v+32(FP), SI
	MOVQ    vstride+40(FP), R10
	MOVQ    m+48(FP), CX
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS (R8), Y4
	VMOVUPS 32(R8), Y5
	VMOVUPS 64(R8), Y6
	VMOVUPS 96(R8), Y7

at32:
	VBROADCASTSS (DX), Y8
	VBROADCASTSS (R9), Y9
	VMOVUPS      (SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y0, Y0
	VADDPS       Y12, Y4, Y4
	VMOVUPS      32(SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y1, Y1
	VADDPS       Y12, Y5, Y5
	VMOVUPS      64(SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y2, Y2
	VADDPS       Y12, Y6, Y6
	VMOVUPS      96(SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y3, Y3
	VADDPS       Y12, Y7, Y7
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          at32
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	VMOVUPS      Y4, (R8)
	VMOVUPS      Y5, 32(R8)
	VMOVUPS      Y6, 64(R8)
	VMOVUPS      Y7, 96(R8)
	VZEROUPPER
	RET

// func accTile2x16AVX(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
// accTile2x32AVX for 16 elements.
TEXT ·accTile2x16AVX(SB), NOSPLIT, $0-56
	MOVQ    out+0(FP), DI
	MOVQ    ostride+8(FP), AX
	LEAQ    (DI)(AX*1), R8
	MOVQ    w+16(FP), DX
	MOVQ    wstride+24(FP), AX
	LEAQ    (DX)(AX*1), R9
	MOVQ    v+32(FP), SI
	MOVQ    vstride+40(FP), R10
	MOVQ    m+48(FP), CX
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (R8), Y4
	VMOVUPS 32(R8), Y5

at16:
	VBROADCASTSS (DX), Y8
	VBROADCASTSS (R9), Y9
	VMOVUPS      (SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y0, Y0
	VADDPS       Y12, Y4, Y4
	VMOVUPS      32(SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y1, Y1
	VADDPS       Y12, Y5, Y5
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          at16
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y4, (R8)
	VMOVUPS      Y5, 32(R8)
	VZEROUPPER
	RET

// func accTile2x8AVX(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
// accTile2x32AVX for 8 elements.
TEXT ·accTile2x8AVX(SB), NOSPLIT, $0-56
	MOVQ    out+0(FP), DI
	MOVQ    ostride+8(FP), AX
	LEAQ    (DI)(AX*1), R8
	MOVQ    w+16(FP), DX
	MOVQ    wstride+24(FP), AX
	LEAQ    (DX)(AX*1), R9
	MOVQ    v+32(FP), SI
	MOVQ    vstride+40(FP), R10
	MOVQ    m+48(FP), CX
	VMOVUPS (DI), Y0
	VMOVUPS (R8), Y4

at8:
	VBROADCASTSS (DX), Y8
	VBROADCASTSS (R9), Y9
	VMOVUPS      (SI), Y10
	VMULPS       Y10, Y8, Y11
	VMULPS       Y10, Y9, Y12
	VADDPS       Y11, Y0, Y0
	VADDPS       Y12, Y4, Y4
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          at8
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y4, (R8)
	VZEROUPPER
	RET

// func maxAVX(x *float32, n int) float32
//
// The maximum of x[:n], n a multiple of 8, −Inf if every element is NaN:
// VMAXPS returns its second source (the running maximum) when either
// operand is a NaN, so NaNs are skipped.
DATA maxninf<>+0(SB)/4, $0xff800000
GLOBL maxninf<>(SB), RODATA|NOPTR, $4

TEXT ·maxAVX(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS maxninf<>(SB), Y0
	VMOVAPS      Y0, Y1
	VMOVAPS      Y0, Y2
	VMOVAPS      Y0, Y3
	CMPQ         CX, $32
	JLT          mx8

mx32:
	VMOVUPS (DI), Y4
	VMOVUPS 32(DI), Y5
	VMOVUPS 64(DI), Y6
	VMOVUPS 96(DI), Y7
	VMAXPS  Y0, Y4, Y0
	VMAXPS  Y1, Y5, Y1
	VMAXPS  Y2, Y6, Y2
	VMAXPS  Y3, Y7, Y3
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JGE     mx32

mx8:
	TESTQ   CX, CX
	JEQ     mxred
	VMOVUPS (DI), Y4
	VMAXPS  Y0, Y4, Y0
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     mx8

mxred:
	VMAXPS       Y0, Y1, Y0
	VMAXPS       Y2, Y3, Y2
	VMAXPS       Y0, Y2, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X0, X1, X0
	VMOVHLPS     X0, X0, X1
	VMAXPS       X0, X1, X0
	VMOVSHDUP    X0, X1
	VMAXPS       X0, X1, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// One chunk of 8 at byte offset DX for dotsTile2x8AVX512: the two query
// chunks side by side in Z24 against each of the eight keys' chunk
// broadcast to both halves. Slot s of a0..a7 holds key s/2 (s even) or
// 4+s/2 (s odd), so that the reduction leaves the keys in order.
#define ZSTEP(a0, a1, a2, a3, a4, a5, a6, a7) \
	LEAQ            (SI)(DX*1), DI          \
	LEAQ            (DI)(R10*4), CX         \
	VMOVUPS         (R8)(DX*1), Y24         \
	VINSERTF64X4    $1, (R9)(DX*1), Z24, Z24 \
	VBROADCASTF64X4 (DI), Z25               \
	VFMADD231PS     Z25, Z24, a0            \
	VBROADCASTF64X4 (CX), Z26               \
	VFMADD231PS     Z26, Z24, a1            \
	VBROADCASTF64X4 (DI)(R10*1), Z27        \
	VFMADD231PS     Z27, Z24, a2            \
	VBROADCASTF64X4 (CX)(R10*1), Z28        \
	VFMADD231PS     Z28, Z24, a3            \
	VBROADCASTF64X4 (DI)(R10*2), Z25        \
	VFMADD231PS     Z25, Z24, a4            \
	VBROADCASTF64X4 (CX)(R10*2), Z26        \
	VFMADD231PS     Z26, Z24, a5            \
	VBROADCASTF64X4 (DI)(R15*1), Z27        \
	VFMADD231PS     Z27, Z24, a6            \
	VBROADCASTF64X4 (CX)(R15*1), Z28        \
	VFMADD231PS     Z28, Z24, a7

#define ZZERO(a0, a1, a2, a3, a4, a5, a6, a7) \
	VPXORD a0, a0, a0 \
	VPXORD a1, a1, a1 \
	VPXORD a2, a2, a2 \
	VPXORD a3, a3, a3 \
	VPXORD a4, a4, a4 \
	VPXORD a5, a5, a5 \
	VPXORD a6, a6, a6 \
	VPXORD a7, a7, a7

// func dotsTile2x8AVX512(q *float32, qstride int, k *float32, kstride, n, m int, out *float32, ostride int)
//
// dotsTile2x4AVX for blocks of eight keys (m a multiple of 8) in 512-bit
// registers: each FMA serves two (query, key) pairs, the chains are kept
// in registers (a0 in Z8–15, then a0+a1; a2 in Z16–23; a1 and a3 in
// Z0–7), and the sixteen hsum_float_8 are done together.
TEXT ·dotsTile2x8AVX512(SB), NOSPLIT, $0-64
	MOVQ q+0(FP), R8
	MOVQ qstride+8(FP), AX
	LEAQ (R8)(AX*1), R9
	MOVQ k+16(FP), SI
	MOVQ kstride+24(FP), R10
	LEAQ (R10)(R10*2), R15
	MOVQ n+32(FP), R11
	MOVQ m+40(FP), R12
	SHRQ $3, R12
	MOVQ out+48(FP), R13
	MOVQ ostride+56(FP), AX
	LEAQ (R13)(AX*1), R14
	MOVQ R11, BX
	SHRQ $5, BX
	SHLQ $7, BX
	SHLQ $2, R11

zblock:
	ZZERO(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	XORQ DX, DX

zc0:
	ZSTEP(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ADDQ $128, DX
	CMPQ DX, BX
	JLT  zc0
	MOVQ BX, DX

zc0t:
	CMPQ DX, R11
	JGE  zc1
	ZSTEP(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ADDQ $32, DX
	JMP  zc0t

zc1:
	ZZERO(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	MOVQ $32, DX

zc1l:
	ZSTEP(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ADDQ   $128, DX
	CMPQ   DX, BX
	JLT    zc1l
	VADDPS Z0, Z8, Z8             // a0 + a1
	VADDPS Z1, Z9, Z9
	VADDPS Z2, Z10, Z10
	VADDPS Z3, Z11, Z11
	VADDPS Z4, Z12, Z12
	VADDPS Z5, Z13, Z13
	VADDPS Z6, Z14, Z14
	VADDPS Z7, Z15, Z15
	ZZERO(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	MOVQ   $64, DX

zc2l:
	ZSTEP(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ $128, DX
	CMPQ DX, BX
	JLT  zc2l
	ZZERO(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	MOVQ $96, DX

zc3l:
	ZSTEP(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ADDQ   $128, DX
	CMPQ   DX, BX
	JLT    zc3l
	VADDPS Z16, Z0, Z0            // a2 + a3
	VADDPS Z17, Z1, Z1
	VADDPS Z18, Z2, Z2
	VADDPS Z19, Z3, Z3
	VADDPS Z20, Z4, Z4
	VADDPS Z21, Z5, Z5
	VADDPS Z22, Z6, Z6
	VADDPS Z23, Z7, Z7
	VADDPS Z8, Z0, Z0             // (a0+a1) + (a2+a3)
	VADDPS Z9, Z1, Z1
	VADDPS Z10, Z2, Z2
	VADDPS Z11, Z3, Z3
	VADDPS Z12, Z4, Z4
	VADDPS Z13, Z5, Z5
	VADDPS Z14, Z6, Z6
	VADDPS Z15, Z7, Z7

	// Sixteen hsum_float_8. Slot s: [query 0 | query 1] of its key.
	VSHUFF32X4 $0x88, Z1, Z0, Z8
	VSHUFF32X4 $0xDD, Z1, Z0, Z9
	VADDPS     Z9, Z8, Z8         // t of (0,κ0) (1,κ0) (0,κ1) (1,κ1)
	VSHUFF32X4 $0x88, Z3, Z2, Z10
	VSHUFF32X4 $0xDD, Z3, Z2, Z11
	VADDPS     Z11, Z10, Z10
	VSHUFF32X4 $0x88, Z5, Z4, Z12
	VSHUFF32X4 $0xDD, Z5, Z4, Z13
	VADDPS     Z13, Z12, Z12
	VSHUFF32X4 $0x88, Z7, Z6, Z14
	VSHUFF32X4 $0xDD, Z7, Z6, Z15
	VADDPS     Z15, Z14, Z14
	VSHUFPS    $0x44, Z10, Z8, Z16
	VSHUFPS    $0xEE, Z10, Z8, Z17
	VADDPS     Z17, Z16, Z16      // t0+t2, t1+t3
	VSHUFPS    $0x44, Z14, Z12, Z18
	VSHUFPS    $0xEE, Z14, Z12, Z19
	VADDPS     Z19, Z18, Z18
	VSHUFPS    $0x88, Z18, Z16, Z20
	VSHUFPS    $0xDD, Z18, Z16, Z21
	VADDPS     Z21, Z20, Z20      // q0 keys 0–3 | q1 0–3 | q0 4–7 | q1 4–7
	VSHUFF32X4 $0xD8, Z20, Z20, Z20
	VMOVUPS    Y20, (R13)
	VEXTRACTF64X4 $1, Z20, Y21
	VMOVUPS    Y21, (R14)
	ADDQ       $32, R13
	ADDQ       $32, R14
	LEAQ       (SI)(R10*8), SI
	DECQ       R12
	JNZ        zblock
	VZEROUPPER
	RET

// func accTile2x64AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
// accTile2x32AVX for 64 elements in 512-bit registers.
TEXT ·accTile2x64AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ ostride+8(FP), AX
	LEAQ (DI)(AX*1), R8
	MOVQ w+16(FP), DX
	MOVQ wstride+24(FP), AX
	LEAQ (DX)(AX*1), R9
	MOVQ v+32(FP), SI
	MOVQ vstride+40(FP), R10
	MOVQ m+48(FP), CX
	VMOVUPS 0(DI), Z0
	VMOVUPS 0(R8), Z4
	VMOVUPS 64(DI), Z1
	VMOVUPS 64(R8), Z5
	VMOVUPS 128(DI), Z2
	VMOVUPS 128(R8), Z6
	VMOVUPS 192(DI), Z3
	VMOVUPS 192(R8), Z7

zat64:
	VBROADCASTSS (DX), Z8
	VBROADCASTSS (R9), Z9
	VMOVUPS      0(SI), Z10
	VMOVUPS      64(SI), Z11
	VMOVUPS      128(SI), Z12
	VMOVUPS      192(SI), Z13
	VMULPS       Z10, Z8, Z14
	VMULPS       Z10, Z9, Z18
	VMULPS       Z11, Z8, Z15
	VMULPS       Z11, Z9, Z19
	VMULPS       Z12, Z8, Z16
	VMULPS       Z12, Z9, Z20
	VMULPS       Z13, Z8, Z17
	VMULPS       Z13, Z9, Z21
	VADDPS       Z14, Z0, Z0
	VADDPS       Z18, Z4, Z4
	VADDPS       Z15, Z1, Z1
	VADDPS       Z19, Z5, Z5
	VADDPS       Z16, Z2, Z2
	VADDPS       Z20, Z6, Z6
	VADDPS       Z17, Z3, Z3
	VADDPS       Z21, Z7, Z7
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          zat64
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z4, 0(R8)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z5, 64(R8)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z6, 128(R8)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z7, 192(R8)
	VZEROUPPER
	RET

// func accTile2x48AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
// accTile2x32AVX for 48 elements in 512-bit registers.
TEXT ·accTile2x48AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ ostride+8(FP), AX
	LEAQ (DI)(AX*1), R8
	MOVQ w+16(FP), DX
	MOVQ wstride+24(FP), AX
	LEAQ (DX)(AX*1), R9
	MOVQ v+32(FP), SI
	MOVQ vstride+40(FP), R10
	MOVQ m+48(FP), CX
	VMOVUPS 0(DI), Z0
	VMOVUPS 0(R8), Z4
	VMOVUPS 64(DI), Z1
	VMOVUPS 64(R8), Z5
	VMOVUPS 128(DI), Z2
	VMOVUPS 128(R8), Z6

zat48:
	VBROADCASTSS (DX), Z8
	VBROADCASTSS (R9), Z9
	VMOVUPS      0(SI), Z10
	VMOVUPS      64(SI), Z11
	VMOVUPS      128(SI), Z12
	VMULPS       Z10, Z8, Z14
	VMULPS       Z10, Z9, Z18
	VMULPS       Z11, Z8, Z15
	VMULPS       Z11, Z9, Z19
	VMULPS       Z12, Z8, Z16
	VMULPS       Z12, Z9, Z20
	VADDPS       Z14, Z0, Z0
	VADDPS       Z18, Z4, Z4
	VADDPS       Z15, Z1, Z1
	VADDPS       Z19, Z5, Z5
	VADDPS       Z16, Z2, Z2
	VADDPS       Z20, Z6, Z6
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          zat48
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z4, 0(R8)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z5, 64(R8)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z6, 128(R8)
	VZEROUPPER
	RET

// func accTile2x32AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
// accTile2x32AVX for 32 elements in 512-bit registers.
TEXT ·accTile2x32AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ ostride+8(FP), AX
	LEAQ (DI)(AX*1), R8
	MOVQ w+16(FP), DX
	MOVQ wstride+24(FP), AX
	LEAQ (DX)(AX*1), R9
	MOVQ v+32(FP), SI
	MOVQ vstride+40(FP), R10
	MOVQ m+48(FP), CX
	VMOVUPS 0(DI), Z0
	VMOVUPS 0(R8), Z4
	VMOVUPS 64(DI), Z1
	VMOVUPS 64(R8), Z5

zat32:
	VBROADCASTSS (DX), Z8
	VBROADCASTSS (R9), Z9
	VMOVUPS      0(SI), Z10
	VMOVUPS      64(SI), Z11
	VMULPS       Z10, Z8, Z14
	VMULPS       Z10, Z9, Z18
	VMULPS       Z11, Z8, Z15
	VMULPS       Z11, Z9, Z19
	VADDPS       Z14, Z0, Z0
	VADDPS       Z18, Z4, Z4
	VADDPS       Z15, Z1, Z1
	VADDPS       Z19, Z5, Z5
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          zat32
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z4, 0(R8)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z5, 64(R8)
	VZEROUPPER
	RET

// func accTile2x16AVX512(out *float32, ostride int, w *float32, wstride int, v *float32, vstride, m int)
//
// accTile2x32AVX for 16 elements in 512-bit registers.
TEXT ·accTile2x16AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ ostride+8(FP), AX
	LEAQ (DI)(AX*1), R8
	MOVQ w+16(FP), DX
	MOVQ wstride+24(FP), AX
	LEAQ (DX)(AX*1), R9
	MOVQ v+32(FP), SI
	MOVQ vstride+40(FP), R10
	MOVQ m+48(FP), CX
	VMOVUPS 0(DI), Z0
	VMOVUPS 0(R8), Z4

zat16:
	VBROADCASTSS (DX), Z8
	VBROADCASTSS (R9), Z9
	VMOVUPS      0(SI), Z10
	VMULPS       Z10, Z8, Z14
	VMULPS       Z10, Z9, Z18
	VADDPS       Z14, Z0, Z0
	VADDPS       Z18, Z4, Z4
	ADDQ         $4, DX
	ADDQ         $4, R9
	ADDQ         R10, SI
	DECQ         CX
	JNZ          zat16
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z4, 0(R8)
	VZEROUPPER
	RET

// ggml_v_expf's constants: expc of attn_amd64.s.
#define E5(i) ·expc+4*i(SB)

// func expGroupsAVX512(x *float32, n int, maxv float32) float64
//
// expGroupsAVX two groups of 8 at a time (n a multiple of 16): the same
// operations lane by lane, ggml's per-lane select through mask registers,
// and each group's sum reduced and added to the float64 sum in order.
TEXT ·expGroupsAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS maxv+16(FP), Z15
	VXORPD       X14, X14, X14
	VBROADCASTSS E5(0), Z16          // r
	VBROADCASTSS E5(1), Z17          // log2e
	VBROADCASTSS E5(2), Z18
	VBROADCASTSS E5(3), Z19
	VBROADCASTSS E5(4), Z20
	VBROADCASTSS E5(5), Z21
	VBROADCASTSS E5(6), Z22
	VBROADCASTSS E5(7), Z23
	VBROADCASTSS E5(8), Z24
	VPBROADCASTD E5(9), Z25
	VBROADCASTSS E5(10), Z26
	VBROADCASTSS E5(11), Z27
	VPBROADCASTD E5(12), Z28
	VPXORD       Z29, Z29, Z29
	SHRQ         $4, CX
	JEQ          e5done

e5loop:
	VMOVUPS      (DI), Z0
	VSUBPS       Z15, Z0, Z0
	VMOVAPS      Z16, Z1
	VFMADD231PS  Z17, Z0, Z1         // z = x·log2e + r
	VSUBPS       Z16, Z1, Z2         // n = z − r
	VMOVAPS      Z0, Z3
	VFNMADD231PS Z18, Z2, Z3         // x − n·ln2hi
	VFNMADD231PS Z19, Z2, Z3         // b
	VPSLLD       $23, Z1, Z5         // e
	VPADDD       Z25, Z5, Z6         // k
	VMULPS       Z3, Z3, Z7          // u = b·b
	VMOVAPS      Z21, Z8
	VFMADD231PS  Z20, Z3, Z8         // a1 = p0·b + p1
	VMOVAPS      Z23, Z9
	VFMADD231PS  Z22, Z3, Z9         // a2 = p2·b + p3
	VFMADD231PS  Z7, Z8, Z9          // a2 = a1·u + a2
	VMULPS       Z24, Z3, Z10        // p4·b
	VFMADD231PS  Z7, Z9, Z10         // j = a2·u + p4·b
	VPANDD       Z28, Z2, Z11        // |n|
	VCMPPS       $0x1e, Z26, Z11, K1 // c = |n| > 126
	VMOVAPS      Z6, Z0
	VFMADD231PS  Z10, Z6, Z0         // k·j + k
	KORTESTW     K1, K1
	JEQ          e5sum

	// Some lane is out of the fast range: ggml's per-lane select.
	VCMPPS          $0x12, Z29, Z2, K2  // n <= 0
	VPBROADCASTD.Z  E5(13), K2, Z13     // g
	VPBROADCASTD    E5(14), Z4
	VPADDD          Z4, Z13, Z4         // s1 = g + 0x7f000000
	VPSUBD          Z13, Z5, Z5         // s2 = e − g
	VMOVAPS         Z5, Z13
	VFMADD231PS     Z10, Z5, Z13        // s2·j + s2
	VMULPS          Z4, Z13, Z13        // (…)·s1
	VMOVAPS         Z13, K1, Z0         // c ? (…)·s1
	VCMPPS          $0x1e, Z27, Z11, K3 // d = |n| > 192
	VMULPS          Z4, Z4, Z4          // s1·s1
	VMOVAPS         Z4, K3, Z0

e5sum:
	VMOVUPS      Z0, (DI)
	VEXTRACTF64X4 $1, Z0, Y1
	VPERM2F128   $0x20, Y1, Y0, Y2
	VPERM2F128   $0x31, Y1, Y0, Y3
	VADDPS       Y3, Y2, Y2          // t_l = x_l + x_{l+4} of both groups
	VHADDPS      Y2, Y2, Y2          // t0+t1, t2+t3
	VHADDPS      Y2, Y2, Y2          // (t0+t1)+(t2+t3)
	VCVTSS2SD    X2, X2, X3
	VADDSD       X3, X14, X14
	VEXTRACTF128 $1, Y2, X2
	VCVTSS2SD    X2, X2, X2
	VADDSD       X2, X14, X14
	ADDQ         $64, DI
	DECQ         CX
	JNZ          e5loop

e5done:
	VMOVSD X14, ret+24(FP)
	VZEROUPPER
	RET
