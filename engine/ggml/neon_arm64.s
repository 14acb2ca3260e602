//go:build arm64 && !noasm

#include "textflag.h"

// NEON dot-product kernels for arm64 (see neon_arm64.go). Each one runs the
// operations of a plain-Go twin in the same order, so the two agree bit
// for bit: the float kernels that of dotF32Go / dotF16Go (which is also the
// AVX2 order), the 32-block ones that of dotQ8_0Lanes / dotQ4_0Lanes.
// Eight-lane accumulators of the twins are pairs of registers: lanes 0-3
// in the first, lanes 4-7 in the second.

// Instructions the Go assembler lacks, encoded from register numbers
// (operands in the ARM order, destination first; the encodings were
// checked against GNU as / objdump).

// sdot vd.4s, vn.16b, vm.16b (ARMv8.2 dotprod)
#define SDOT(d, n, m) WORD $(0x4e809400 | ((m)<<16) | ((n)<<5) | (d))
// smull vd.8h, vn.8b, vm.8b
#define SMULL(d, n, m) WORD $(0x0e20c000 | ((m)<<16) | ((n)<<5) | (d))
// smull2 vd.8h, vn.16b, vm.16b
#define SMULL2(d, n, m) WORD $(0x4e20c000 | ((m)<<16) | ((n)<<5) | (d))
// saddlp vd.4s, vn.8h
#define SADDLP(d, n) WORD $(0x4e602800 | ((n)<<5) | (d))
// scvtf vd.4s, vn.4s
#define SCVTF(d, n) WORD $(0x4e21d800 | ((n)<<5) | (d))
// fadd vd.4s, vn.4s, vm.4s
#define FADD4(d, n, m) WORD $(0x4e20d400 | ((m)<<16) | ((n)<<5) | (d))
// faddp sd, vn.2s
#define FADDP2(d, n) WORD $(0x7e30d800 | ((n)<<5) | (d))
// fcvtl vd.4s, vn.4h
#define FCVTL(d, n) WORD $(0x0e217800 | ((n)<<5) | (d))
// fcvtl2 vd.4s, vn.8h
#define FCVTL2(d, n) WORD $(0x4e217800 | ((n)<<5) | (d))

// HSUM sums the eight lanes of (Vlo, Vhi) as ggml's hsum_float_8 into
// lane 0 of Vlo (Flo): t = hi + lo, then (t0 + t2) + (t1 + t3). V28 is
// clobbered.
#define HSUM(lo, hi, vlo) \
	FADD4(lo, lo, hi) \
	VEXT  $8, vlo.B16, vlo.B16, V28.B16 \
	FADD4(lo, lo, 28) \
	FADDP2(lo, lo)

#define ZERO8 \
	VEOR V0.B16, V0.B16, V0.B16 \
	VEOR V1.B16, V1.B16, V1.B16 \
	VEOR V2.B16, V2.B16, V2.B16 \
	VEOR V3.B16, V3.B16, V3.B16 \
	VEOR V4.B16, V4.B16, V4.B16 \
	VEOR V5.B16, V5.B16, V5.B16 \
	VEOR V6.B16, V6.B16, V6.B16 \
	VEOR V7.B16, V7.B16, V7.B16

// COMBINE4 adds the four 8-lane accumulators (V0,V1) (V2,V3) (V4,V5)
// (V6,V7) as (a0 + a1) + (a2 + a3) into (V0, V1).
#define COMBINE4 \
	FADD4(0, 0, 2) \
	FADD4(4, 4, 6) \
	FADD4(0, 0, 4) \
	FADD4(1, 1, 3) \
	FADD4(5, 5, 7) \
	FADD4(1, 1, 5)

// The 32-block kernels: func(w *byte, rs int, x *byte, nb int, out *float32)
// over nb blocks of one row (x1) or of four rows rs bytes apart (x4)
// against the Q8_0 activation row x, writing out[0] or out[0:4].
//
// Registers: R0, R8, R9, R10 the rows, R1 the activation, R2 the blocks
// left, R4 out; (V0,V1) .. (V6,V7) the 8-lane accumulators of rows 0-3;
// V16, V17 the activation values, F18 its scale; V20, V21 a weight block
// as int8 in element order; V22, V23 the exact integer sums of four
// consecutive products per lane; V24-V27 temporaries; V28 the block scale
// broadcast; F29 the weight scale; V30 0x0f and V31 8 in every byte (Q4_0).

#define ARGS \
	MOVD w+0(FP), R0 \
	MOVD rs+8(FP), R3 \
	MOVD x+16(FP), R1 \
	MOVD nb+24(FP), R2 \
	MOVD out+32(FP), R4 \
	ADD  R3, R0, R8 \
	ADD  R3, R8, R9 \
	ADD  R3, R9, R10

// HALF loads the fp16 value at (ptr) as float32 into Fdst.
#define HALF(ptr, fdst) \
	MOVHU  (ptr), R6 \
	FMOVS  R6, fdst \
	FCVTHS fdst, fdst

// XBLOCK loads the activation block at R1 and advances R1 past it.
#define XBLOCK \
	HALF(R1, F18) \
	ADD  $2, R1 \
	VLD1.P 32(R1), [V16.B16, V17.B16]

// W80 loads the Q8_0 weight block at (ptr).
#define W80(ptr) \
	ADD  $2, ptr, R7 \
	VLD1 (R7), [V20.B16, V21.B16]

// W40 loads the Q4_0 weight block at (ptr) as levels q-8: low nibbles are
// elements 0-15, high nibbles 16-31.
#define W40(ptr) \
	ADD   $2, ptr, R7 \
	VLD1  (R7), [V20.B16] \
	VUSHR $4, V20.B16, V21.B16 \
	VAND  V30.B16, V20.B16, V20.B16 \
	VSUB  V31.B16, V20.B16, V20.B16 \
	VSUB  V31.B16, V21.B16, V21.B16

// LANESNEON forms the eight lane sums without dotprod: widening products
// of 8 pairs, pairwise long adds (sums of 2) and pairwise adds (sums of 4).
#define LANESNEON \
	SMULL(24, 20, 16) \
	SMULL2(25, 20, 16) \
	SMULL(26, 21, 17) \
	SMULL2(27, 21, 17) \
	SADDLP(24, 24) \
	SADDLP(25, 25) \
	SADDLP(26, 26) \
	SADDLP(27, 27) \
	VADDP V25.S4, V24.S4, V22.S4 \
	VADDP V27.S4, V26.S4, V23.S4

// LANESSDOT forms them with sdot, which sums each lane's four products.
#define LANESSDOT \
	VEOR V22.B16, V22.B16, V22.B16 \
	VEOR V23.B16, V23.B16, V23.B16 \
	SDOT(22, 20, 16) \
	SDOT(23, 21, 17)

// ACC scales the lane sums by fp32(d_w·d_x) of the weight block at (ptr)
// into the accumulators (alo, ahi), one fused multiply-add per lane.
#define ACC(ptr, alo, ahi) \
	HALF(ptr, F29) \
	FMULS F18, F29, F29 \
	VDUP  V29.S[0], V28.S4 \
	SCVTF(22, 22) \
	SCVTF(23, 23) \
	VFMLA V28.S4, V22.S4, alo.S4 \
	VFMLA V28.S4, V23.S4, ahi.S4

#define Q4CONST \
	VMOVI $15, V30.B16 \
	VMOVI $8, V31.B16

// STORE1 and STORE4 write the horizontal sums of the accumulators.
#define STORE1 \
	HSUM(0, 1, V0) \
	FMOVS F0, (R4)

#define STORE4 \
	HSUM(0, 1, V0) \
	HSUM(2, 3, V2) \
	HSUM(4, 5, V4) \
	HSUM(6, 7, V6) \
	FMOVS F0, (R4) \
	FMOVS F2, 4(R4) \
	FMOVS F4, 8(R4) \
	FMOVS F6, 12(R4)

// X1 and X4 are the bodies of the one- and four-row kernels: WLOAD loads
// a weight block, LANES forms the lane sums, bs is the weight block size.
#define X1(WLOAD, LANES, bs) \
	ARGS \
	ZERO8 \
	CBZ R2, done \
loop: \
	XBLOCK \
	WLOAD(R0) \
	LANES \
	ACC(R0, V0, V1) \
	ADD  $bs, R0 \
	SUBS $1, R2 \
	BNE  loop \
done: \
	STORE1 \
	RET

#define X4(WLOAD, LANES, bs) \
	ARGS \
	ZERO8 \
	CBZ R2, done \
loop: \
	XBLOCK \
	WLOAD(R0) \
	LANES \
	ACC(R0, V0, V1) \
	WLOAD(R8) \
	LANES \
	ACC(R8, V2, V3) \
	WLOAD(R9) \
	LANES \
	ACC(R9, V4, V5) \
	WLOAD(R10) \
	LANES \
	ACC(R10, V6, V7) \
	ADD  $bs, R0 \
	ADD  $bs, R8 \
	ADD  $bs, R9 \
	ADD  $bs, R10 \
	SUBS $1, R2 \
	BNE  loop \
done: \
	STORE4 \
	RET

// func dotF32NEON(a, b *float32, n int) float32
TEXT ·dotF32NEON(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD n+16(FP), R2
	ZERO8
	CMP  $32, R2
	BLT  f32by8

f32by32:
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R0), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R1), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1.P 64(R1), [V28.S4, V29.S4, V30.S4, V31.S4]
	VFMLA  V16.S4, V24.S4, V0.S4
	VFMLA  V17.S4, V25.S4, V1.S4
	VFMLA  V18.S4, V26.S4, V2.S4
	VFMLA  V19.S4, V27.S4, V3.S4
	VFMLA  V20.S4, V28.S4, V4.S4
	VFMLA  V21.S4, V29.S4, V5.S4
	VFMLA  V22.S4, V30.S4, V6.S4
	VFMLA  V23.S4, V31.S4, V7.S4
	SUB    $32, R2
	CMP    $32, R2
	BGE    f32by32

f32by8:
	CMP $8, R2
	BLT f32sum

f32loop8:
	VLD1.P 32(R0), [V16.S4, V17.S4]
	VLD1.P 32(R1), [V24.S4, V25.S4]
	VFMLA  V16.S4, V24.S4, V0.S4
	VFMLA  V17.S4, V25.S4, V1.S4
	SUB    $8, R2
	CMP    $8, R2
	BGE    f32loop8

f32sum:
	COMBINE4
	HSUM(0, 1, V0)
	CBZ R2, f32done

f32tail:
	FMOVS.P 4(R0), F16
	FMOVS.P 4(R1), F17
	FMADDS  F17, F0, F16, F0
	SUBS    $1, R2
	BNE     f32tail

f32done:
	FMOVS F0, ret+24(FP)
	RET

// F16CVT widens the halves of Vsrc into (Vlo, Vhi).
#define F16CVT(lo, hi, src) \
	FCVTL(lo, src) \
	FCVTL2(hi, src)

// func dotF16NEON(a, b *uint16, n int) float32
TEXT ·dotF16NEON(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD n+16(FP), R2
	ZERO8
	CMP  $32, R2
	BLT  f16by8

f16by32:
	VLD1.P 64(R0), [V16.H8, V17.H8, V18.H8, V19.H8]
	VLD1.P 64(R1), [V20.H8, V21.H8, V22.H8, V23.H8]
	F16CVT(24, 25, 16)
	F16CVT(26, 27, 20)
	VFMLA  V24.S4, V26.S4, V0.S4
	VFMLA  V25.S4, V27.S4, V1.S4
	F16CVT(28, 29, 17)
	F16CVT(30, 31, 21)
	VFMLA  V28.S4, V30.S4, V2.S4
	VFMLA  V29.S4, V31.S4, V3.S4
	F16CVT(24, 25, 18)
	F16CVT(26, 27, 22)
	VFMLA  V24.S4, V26.S4, V4.S4
	VFMLA  V25.S4, V27.S4, V5.S4
	F16CVT(28, 29, 19)
	F16CVT(30, 31, 23)
	VFMLA  V28.S4, V30.S4, V6.S4
	VFMLA  V29.S4, V31.S4, V7.S4
	SUB    $32, R2
	CMP    $32, R2
	BGE    f16by32

f16by8:
	CMP $8, R2
	BLT f16sum

f16loop8:
	VLD1.P 16(R0), [V16.H8]
	VLD1.P 16(R1), [V20.H8]
	F16CVT(24, 25, 16)
	F16CVT(26, 27, 20)
	VFMLA  V24.S4, V26.S4, V0.S4
	VFMLA  V25.S4, V27.S4, V1.S4
	SUB    $8, R2
	CMP    $8, R2
	BGE    f16loop8

f16sum:
	COMBINE4
	HSUM(0, 1, V0)
	CBZ R2, f16done

f16tail:
	MOVHU.P 2(R0), R5
	MOVHU.P 2(R1), R6
	FMOVS   R5, F16
	FMOVS   R6, F17
	FCVTHS  F16, F16
	FCVTHS  F17, F17
	FMADDS  F17, F0, F16, F0
	SUBS    $1, R2
	BNE     f16tail

f16done:
	FMOVS F0, ret+24(FP)
	RET

// func q80x1NEON(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q80x1NEON(SB), NOSPLIT, $0-40
	X1(W80, LANESNEON, 34)

// func q80x1SDOT(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q80x1SDOT(SB), NOSPLIT, $0-40
	X1(W80, LANESSDOT, 34)

// func q80x4NEON(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q80x4NEON(SB), NOSPLIT, $0-40
	X4(W80, LANESNEON, 34)

// func q80x4SDOT(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q80x4SDOT(SB), NOSPLIT, $0-40
	X4(W80, LANESSDOT, 34)

// func q40x1NEON(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q40x1NEON(SB), NOSPLIT, $0-40
	Q4CONST
	X1(W40, LANESNEON, 18)

// func q40x1SDOT(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q40x1SDOT(SB), NOSPLIT, $0-40
	Q4CONST
	X1(W40, LANESSDOT, 18)

// func q40x4NEON(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q40x4NEON(SB), NOSPLIT, $0-40
	Q4CONST
	X4(W40, LANESNEON, 18)

// func q40x4SDOT(w *byte, rs int, x *byte, nb int, out *float32)
TEXT ·q40x4SDOT(SB), NOSPLIT, $0-40
	Q4CONST
	X4(W40, LANESSDOT, 18)
