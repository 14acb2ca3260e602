//go:build amd64 && !noasm

#include "textflag.h"

// Float matrix kernels (F32 and F16 weights, float32 activations) on
// AVX-512 registers: tiles of 3 weight rows by 4 activation columns. Each
// (row, column) pair keeps dotF32AVX's / dotF16AVX's four 8-lane
// accumulators over groups of 32 elements, two to a 512-bit register
// (elements 0-15, 16-31 of each group), and reduces them in their order:
// (a0+a1)+(a2+a3), then hsum_float_8. So every value equals VecDot's bit
// for bit. n must be a multiple of 32. Every function ends with VZEROUPPER.
//
//	func k(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)
//
// rs: bytes per weight row; cs: bytes per activation column; ng: groups of
// 32 elements; ldo: bytes per output column (out[c·ldo/4 + r]).

// GHSUMF reduces the 8 floats of acc (X register xacc) as hsum_float_8
// and stores lane 0 to dst; X7 is scratch (X15 holds an accumulator).
#define GHSUMF(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X7 \
	VADDPS       X7, xacc, xacc \
	VMOVHLPS     xacc, xacc, X7 \
	VADDPS       X7, xacc, xacc \
	VMOVSHDUP    xacc, X7 \
	VADDSS       X7, xacc, xacc \
	VMOVSS       xacc, dst

// REDF reduces the pair's accumulators (Z alo/ahi, their Y names ylo/yhi)
// in dotF32AVX's order and stores the dot to dst.
#define REDF(alo, ahi, ylo, yhi, dst) \
	VEXTRACTF64X4 $1, alo, Y6 \
	VADDPS        Y6, ylo, Y6 \
	VEXTRACTF64X4 $1, ahi, Y7 \
	VADDPS        Y7, yhi, Y7 \
	VADDPS        Y7, Y6, Y6 \
	GHSUMF(Y6, X6, dst)

// HALF43 runs one half of a group: the 4 rows' 16 weights at ow(row)
// (widened in registers) against the 3 columns' 16 values at oc(column),
// loaded by loadc, into the accumulators of half h (h = 0: Z8, Z10, …;
// h = 1: Z9, Z11, …; pair (r, c) at Z(8+2(3r+c)+h)).
#define HALF43(loadc, ow, oc, a00, a10, a20, a30, a01, a11, a21, a31, a02, a12, a22, a32) \
	VCVTPH2PS   ow(SI), Z0 \
	VCVTPH2PS   ow(BX), Z1 \
	VCVTPH2PS   ow(R10), Z2 \
	VCVTPH2PS   ow(R11), Z3 \
	loadc       oc(DI), Z4 \
	loadc       oc(DI)(R13*1), Z5 \
	loadc       oc(DI)(R13*2), Z6 \
	VFMADD231PS Z4, Z0, a00 \
	VFMADD231PS Z4, Z1, a10 \
	VFMADD231PS Z4, Z2, a20 \
	VFMADD231PS Z4, Z3, a30 \
	VFMADD231PS Z5, Z0, a01 \
	VFMADD231PS Z5, Z1, a11 \
	VFMADD231PS Z5, Z2, a21 \
	VFMADD231PS Z5, Z3, a31 \
	VFMADD231PS Z6, Z0, a02 \
	VFMADD231PS Z6, Z1, a12 \
	VFMADD231PS Z6, Z2, a22 \
	VFMADD231PS Z6, Z3, a32

// TILE43 is the whole 4x3 kernel; the columns are loaded by loadc, their
// second half starts at ochi bytes and a group of them spans cstep bytes.
#define TILE43(loadc, ochi, cstep, label) \
	MOVQ   w+0(FP), SI \
	MOVQ   rs+8(FP), R9 \
	MOVQ   x+16(FP), DI \
	MOVQ   cs+24(FP), R13 \
	MOVQ   ng+32(FP), CX \
	LEAQ   (SI)(R9*1), BX \
	LEAQ   (BX)(R9*1), R10 \
	LEAQ   (R10)(R9*1), R11 \
	ZERO46 \
label: \
	HALF43(loadc, 0, 0, Z8, Z14, Z20, Z26, Z10, Z16, Z22, Z28, Z12, Z18, Z24, Z30) \
	HALF43(loadc, 32, ochi, Z9, Z15, Z21, Z27, Z11, Z17, Z23, Z29, Z13, Z19, Z25, Z31) \
	ADDQ        $64, SI \
	ADDQ        $64, BX \
	ADDQ        $64, R10 \
	ADDQ        $64, R11 \
	ADDQ        $cstep, DI \
	DECQ        CX \
	JNZ         label \
	MOVQ        out+40(FP), DI \
	MOVQ        ldo+48(FP), R13 \
	REDF(Z8, Z9, Y8, Y9, (DI)) \
	REDF(Z14, Z15, Y14, Y15, 4(DI)) \
	REDF(Z20, Z21, Y20, Y21, 8(DI)) \
	REDF(Z26, Z27, Y26, Y27, 12(DI)) \
	REDF(Z10, Z11, Y10, Y11, (DI)(R13*1)) \
	REDF(Z16, Z17, Y16, Y17, 4(DI)(R13*1)) \
	REDF(Z22, Z23, Y22, Y23, 8(DI)(R13*1)) \
	REDF(Z28, Z29, Y28, Y29, 12(DI)(R13*1)) \
	REDF(Z12, Z13, Y12, Y13, (DI)(R13*2)) \
	REDF(Z18, Z19, Y18, Y19, 4(DI)(R13*2)) \
	REDF(Z24, Z25, Y24, Y25, 8(DI)(R13*2)) \
	REDF(Z30, Z31, Y30, Y31, 12(DI)(R13*2)) \
	VZEROUPPER \
	RET

// f16t46Z: 4 F16 weight rows by 6 columns in two passes over the row
// range, the first over each group's elements 0-15, the second over
// 16-31. A pass keeps one accumulator per pair, so the 24 pairs fit
// Z8-Z31 beside 4 weight and 1 column register: per group-half 4
// widenings and 6 column loads per 24 FMAs, where f16t43Z's 12 pairs
// take 8 widenings and 6 loads per 24 FMAs. Each pair's two accumulators
// run over the same elements in the same order as f16t43Z's (and the
// row kernel's), so every value is VecDot's bit for bit. The first pass's
// accumulators wait in s (384 floats) for the reduction. Pair (r, c) is
// Z(8+4c+r); columns 0-2 are read at DI, 3-5 at R12 = DI + 3·cs.
// The columns are float32 (runF16 says why).
#define COL46(ld, addr, zc, a0, a1, a2, a3) \
	ld          addr, zc \
	VFMADD231PS zc, Z0, a0 \
	VFMADD231PS zc, Z1, a1 \
	VFMADD231PS zc, Z2, a2 \
	VFMADD231PS zc, Z3, a3

#define HALF44(ld, ow, oc) \
	VCVTPH2PS ow(SI), Z0 \
	VCVTPH2PS ow(BX), Z1 \
	VCVTPH2PS ow(R10), Z2 \
	VCVTPH2PS ow(R11), Z3 \
	COL46(ld, oc(DI), Z4, Z8, Z9, Z10, Z11) \
	COL46(ld, oc(DI)(R13*1), Z5, Z12, Z13, Z14, Z15) \
	COL46(ld, oc(DI)(R13*2), Z4, Z16, Z17, Z18, Z19) \
	COL46(ld, oc(R12), Z5, Z20, Z21, Z22, Z23)
#define HALF46(ld, ow, oc) \
	HALF44(ld, ow, oc) \
	COL46(ld, oc(R12)(R13*1), Z4, Z24, Z25, Z26, Z27) \
	COL46(ld, oc(R12)(R13*2), Z5, Z28, Z29, Z30, Z31)
#define ZERO44 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23
#define ZERO46 \
	ZERO44 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z28, Z28, Z28 \
	VPXORD Z29, Z29, Z29 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31
#define PARK44 \
	VMOVUPS Z8, 0(R8) \
	VMOVUPS Z9, 64(R8) \
	VMOVUPS Z10, 128(R8) \
	VMOVUPS Z11, 192(R8) \
	VMOVUPS Z12, 256(R8) \
	VMOVUPS Z13, 320(R8) \
	VMOVUPS Z14, 384(R8) \
	VMOVUPS Z15, 448(R8) \
	VMOVUPS Z16, 512(R8) \
	VMOVUPS Z17, 576(R8) \
	VMOVUPS Z18, 640(R8) \
	VMOVUPS Z19, 704(R8) \
	VMOVUPS Z20, 768(R8) \
	VMOVUPS Z21, 832(R8) \
	VMOVUPS Z22, 896(R8) \
	VMOVUPS Z23, 960(R8)
#define PARK46 \
	PARK44 \
	VMOVUPS Z24, 1024(R8) \
	VMOVUPS Z25, 1088(R8) \
	VMOVUPS Z26, 1152(R8) \
	VMOVUPS Z27, 1216(R8) \
	VMOVUPS Z28, 1280(R8) \
	VMOVUPS Z29, 1344(R8) \
	VMOVUPS Z30, 1408(R8) \
	VMOVUPS Z31, 1472(R8)
// LOAD46 loads the 24 accumulators from base (64 bytes apart).
#define LOAD46(base) \
	VMOVUPS 0(base), Z8 \
	VMOVUPS 64(base), Z9 \
	VMOVUPS 128(base), Z10 \
	VMOVUPS 192(base), Z11 \
	VMOVUPS 256(base), Z12 \
	VMOVUPS 320(base), Z13 \
	VMOVUPS 384(base), Z14 \
	VMOVUPS 448(base), Z15 \
	VMOVUPS 512(base), Z16 \
	VMOVUPS 576(base), Z17 \
	VMOVUPS 640(base), Z18 \
	VMOVUPS 704(base), Z19 \
	VMOVUPS 768(base), Z20 \
	VMOVUPS 832(base), Z21 \
	VMOVUPS 896(base), Z22 \
	VMOVUPS 960(base), Z23 \
	VMOVUPS 1024(base), Z24 \
	VMOVUPS 1088(base), Z25 \
	VMOVUPS 1152(base), Z26 \
	VMOVUPS 1216(base), Z27 \
	VMOVUPS 1280(base), Z28 \
	VMOVUPS 1344(base), Z29 \
	VMOVUPS 1408(base), Z30 \
	VMOVUPS 1472(base), Z31

// START46 loads the arguments and points SI, BX, R10, R11 at the 4 rows,
// DI and R12 at columns 0 and 3, CX at the group count.
#define START46 \
	MOVQ w+0(FP), SI \
	MOVQ rs+8(FP), R9 \
	MOVQ x+16(FP), DI \
	MOVQ cs+24(FP), R13 \
	MOVQ ng+32(FP), CX \
	LEAQ (SI)(R9*1), BX \
	LEAQ (BX)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	LEAQ (DI)(R13*2), R12 \
	ADDQ R13, R12

#define STEP46(cb) \
	ADDQ $64, SI \
	ADDQ $64, BX \
	ADDQ $64, R10 \
	ADDQ $64, R11 \
	ADDQ $cb, DI \
	ADDQ $cb, R12 \
	DECQ CX
// RED4 reduces column c's 4 pairs: their first halves in s at R8 + o
// (64 bytes apart), their second halves in z0-z3 (Y names y0-y3), to
// base, 4(base), 8(base), 12(base).
#define RED4(o, base, z0, y0, z1, y1, z2, y2, z3, y3) \
	VMOVUPS o(R8), Z0 \
	REDF(Z0, z0, Y0, y0, 0 base) \
	VMOVUPS (o+64)(R8), Z0 \
	REDF(Z0, z1, Y0, y1, 4 base) \
	VMOVUPS (o+128)(R8), Z0 \
	REDF(Z0, z2, Y0, y2, 8 base) \
	VMOVUPS (o+192)(R8), Z0 \
	REDF(Z0, z3, Y0, y3, 12 base)

// RED46 reduces the 24 pairs to out at DI, columns R13 bytes apart
// (R12 = DI + 3·R13).
#define RED44 \
	RED4(0, (DI), Z8, Y8, Z9, Y9, Z10, Y10, Z11, Y11) \
	RED4(256, (DI)(R13*1), Z12, Y12, Z13, Y13, Z14, Y14, Z15, Y15) \
	RED4(512, (DI)(R13*2), Z16, Y16, Z17, Y17, Z18, Y18, Z19, Y19) \
	RED4(768, (R12), Z20, Y20, Z21, Y21, Z22, Y22, Z23, Y23)
#define RED46 \
	RED44 \
	RED4(1024, (R12)(R13*1), Z24, Y24, Z25, Y25, Z26, Y26, Z27, Y27) \
	RED4(1280, (R12)(R13*2), Z28, Y28, Z29, Y29, Z30, Y30, Z31, Y31)

// TILE4X is the whole 4-row kernel over 6 columns (half, zero, park,
// red = HALF46, ZERO46, PARK46, RED46) or 4 (the …44 macros); ld loads a
// column's 16 values (VMOVUPS: float32 columns, cb = 128 bytes a group,
// the second half at ochi = 64; VCVTPH2PS: F16 columns, 64 and 32).
#define TILE4X(ld, cb, ochi, half, zero, park, red, lo, hi, redl) \
	MOVQ  s+56(FP), R8 \
	START46 \
	zero \
	TESTQ CX, CX \
	JZ    redl \
lo: \
	half(ld, 0, 0) \
	STEP46(cb) \
	JNZ   lo \
	park \
	START46 \
	zero \
hi: \
	half(ld, 32, ochi) \
	STEP46(cb) \
	JNZ   hi \
redl: \
	MOVQ  out+40(FP), DI \
	MOVQ  ldo+48(FP), R13 \
	LEAQ  (DI)(R13*2), R12 \
	ADDQ  R13, R12 \
	red \
	VZEROUPPER \
	RET


// TILE33 is the 3-row by 3-column F32 kernel with both operands in
// registers (6 loads per 18 FMAs: bound by the FMA ports, not the loads).
// Accumulators Z14-Z31: pair (r, c) in Z(14+6c+2r), Z(15+6c+2r).
#define PAIR33(xlo, xhi, alo, ahi) \
	VFMADD231PS xlo, Z0, alo \
	VFMADD231PS xhi, Z1, ahi

// func f32t33Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)
TEXT ·f32t33Z(SB), NOSPLIT, $0-56
	MOVQ   w+0(FP), SI
	MOVQ   rs+8(FP), R9
	MOVQ   x+16(FP), DI
	MOVQ   cs+24(FP), R13
	MOVQ   ng+32(FP), CX
	LEAQ   (SI)(R9*1), BX
	LEAQ   (BX)(R9*1), R10
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

f33loop:
	VMOVUPS     (DI), Z6
	VMOVUPS     64(DI), Z7
	VMOVUPS     (DI)(R13*1), Z8
	VMOVUPS     64(DI)(R13*1), Z9
	VMOVUPS     (DI)(R13*2), Z10
	VMOVUPS     64(DI)(R13*2), Z11
	VMOVUPS     (SI), Z0
	VMOVUPS     64(SI), Z1
	VMOVUPS     (BX), Z2
	VMOVUPS     64(BX), Z3
	VMOVUPS     (R10), Z4
	VMOVUPS     64(R10), Z5
	VFMADD231PS Z6, Z0, Z14
	VFMADD231PS Z7, Z1, Z15
	VFMADD231PS Z6, Z2, Z16
	VFMADD231PS Z7, Z3, Z17
	VFMADD231PS Z6, Z4, Z18
	VFMADD231PS Z7, Z5, Z19
	VFMADD231PS Z8, Z0, Z20
	VFMADD231PS Z9, Z1, Z21
	VFMADD231PS Z8, Z2, Z22
	VFMADD231PS Z9, Z3, Z23
	VFMADD231PS Z8, Z4, Z24
	VFMADD231PS Z9, Z5, Z25
	VFMADD231PS Z10, Z0, Z26
	VFMADD231PS Z11, Z1, Z27
	VFMADD231PS Z10, Z2, Z28
	VFMADD231PS Z11, Z3, Z29
	VFMADD231PS Z10, Z4, Z30
	VFMADD231PS Z11, Z5, Z31
	ADDQ        $128, SI
	ADDQ        $128, BX
	ADDQ        $128, R10
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f33loop
	MOVQ        out+40(FP), DI
	MOVQ        ldo+48(FP), R13
	REDF(Z14, Z15, Y14, Y15, (DI))
	REDF(Z16, Z17, Y16, Y17, 4(DI))
	REDF(Z18, Z19, Y18, Y19, 8(DI))
	REDF(Z20, Z21, Y20, Y21, (DI)(R13*1))
	REDF(Z22, Z23, Y22, Y23, 4(DI)(R13*1))
	REDF(Z24, Z25, Y24, Y25, 8(DI)(R13*1))
	REDF(Z26, Z27, Y26, Y27, (DI)(R13*2))
	REDF(Z28, Z29, Y28, Y29, 4(DI)(R13*2))
	REDF(Z30, Z31, Y30, Y31, 8(DI)(R13*2))
	VZEROUPPER
	RET

// STRIPF is the 4-row by 1-column kernel (decode): the column's group
// of 32 in Z6, Z7; row r's accumulators Z(16+2r), Z(17+2r); the next
// strip's rows are prefetched (rows are contiguous: rs·4 ahead).
#define STRIPF(load16, half, sz, label) \
	MOVQ w+0(FP), SI \
	MOVQ rs+8(FP), R9 \
	MOVQ x+16(FP), DI \
	MOVQ ng+32(FP), CX \
	LEAQ (SI)(R9*1), BX \
	LEAQ (BX)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
label: \
	PREFETCHT0 (SI)(R9*4) \
	PREFETCHT0 (BX)(R9*4) \
	PREFETCHT0 (R10)(R9*4) \
	PREFETCHT0 (R11)(R9*4) \
	VMOVUPS     (DI), Z6 \
	VMOVUPS     64(DI), Z7 \
	load16      (SI), Z0 \
	load16      half(SI), Z1 \
	load16      (BX), Z2 \
	load16      half(BX), Z3 \
	load16      (R10), Z4 \
	load16      half(R10), Z5 \
	load16      (R11), Z8 \
	load16      half(R11), Z9 \
	VFMADD231PS Z6, Z0, Z16 \
	VFMADD231PS Z7, Z1, Z17 \
	VFMADD231PS Z6, Z2, Z18 \
	VFMADD231PS Z7, Z3, Z19 \
	VFMADD231PS Z6, Z4, Z20 \
	VFMADD231PS Z7, Z5, Z21 \
	VFMADD231PS Z6, Z8, Z22 \
	VFMADD231PS Z7, Z9, Z23 \
	ADDQ $sz, SI \
	ADDQ $sz, BX \
	ADDQ $sz, R10 \
	ADDQ $sz, R11 \
	ADDQ $128, DI \
	DECQ CX \
	JNZ  label \
	MOVQ out+40(FP), DI \
	REDF(Z16, Z17, Y16, Y17, (DI)) \
	REDF(Z18, Z19, Y18, Y19, 4(DI)) \
	REDF(Z20, Z21, Y20, Y21, 8(DI)) \
	REDF(Z22, Z23, Y22, Y23, 12(DI)) \
	VZEROUPPER \
	RET

// func f32x4Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)
TEXT ·f32x4Z(SB), NOSPLIT, $0-56
	STRIPF(VMOVUPS, 64, 128, f32x4)

// func f16x4Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)
TEXT ·f16x4Z(SB), NOSPLIT, $0-56
	STRIPF(VCVTPH2PS, 32, 64, f16x4)

// func fp16ToF32Z(x *uint16, y *float32, n int)
//
// y[i] = fp32(x[i]) for n a multiple of 16 (exact).
TEXT ·fp16ToF32Z(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JEQ  h2fdone

h2floop:
	VCVTPH2PS (SI), Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       h2floop

h2fdone:
	VZEROUPPER
	RET

// f16t43Z: 4 F16 weight rows by 3 columns. Each group of 32 runs in two
// halves (elements 0-15, then 16-31), so a half needs only 4 weight and 3
// column registers beside the 24 accumulators: per group 14 loads and 24
// FMAs. Pair (r, c) accumulates elements 0-15 in Z(8+2(3r+c)) and 16-31 in
// Z(9+2(3r+c)): the lanes and their order are the row kernels', so the
// bits are VecDot's. The weights are widened in registers (VCVTPH2PS), so
// they cross from L2 at 2 bytes per element: on the AMD EPYC VM of
// docs/PERFORMANCE.md this runs at ~90 GMAC/s per thread where widening
// the chunk into a float32 copy for the 3x3 F32 tiles gave ~55 (the F32
// tiles are bound by L2 bandwidth, and a 4x3 F32 tile is no faster).

// func f16t43Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)
TEXT ·f16t43Z(SB), NOSPLIT, $0-56
	TILE43(VMOVUPS, 64, 128, f16t43loop)

// f16h43Z is f16t43Z with F16 columns (x: the prepared F16 values, cs
// bytes apart), widened in registers too.
//
// func f16h43Z(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int)
TEXT ·f16h43Z(SB), NOSPLIT, $0-56
	TILE43(VCVTPH2PS, 32, 64, f16h43loop)

// func f16t46Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)
TEXT ·f16t46Z(SB), NOSPLIT, $0-64
	TILE4X(VMOVUPS, 128, 64, HALF46, ZERO46, PARK46, RED46, f16t46lo, f16t46hi, f16t46red)

// func f16h46Z(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int, s *float32)
TEXT ·f16h46Z(SB), NOSPLIT, $0-64
	TILE4X(VCVTPH2PS, 64, 32, HALF46, ZERO46, PARK46, RED46, f16h46lo, f16h46hi, f16h46red)

// func f16p46Z(w *byte, rs int, x *uint16, cs int, ng int, acc *float32, first int)
//
// f16p46Z is one pass of f16h46Z over ng groups of a K-block: the 24
// accumulators start at zero (first ≠ 0) or from acc, and end in acc
// (24 × 16 floats), for runF16's K-blocked walk; the caller points w and x
// at the block's first group, plus 32 bytes for the second half of each
// group. f16r46Z reduces a tile's two halves to out as f16h46Z does.
TEXT ·f16p46Z(SB), NOSPLIT, $0-56
	MOVQ  acc+40(FP), R8
	START46
	MOVQ  first+48(FP), AX
	TESTQ AX, AX
	JZ    f16p46load
	ZERO46
	JMP   f16p46run
f16p46load:
	LOAD46(R8)
f16p46run:
	TESTQ CX, CX
	JZ    f16p46park
f16p46lo:
	HALF46(VCVTPH2PS, 0, 0)
	STEP46(64)
	JNZ   f16p46lo
f16p46park:
	PARK46
	VZEROUPPER
	RET

// func f16r46Z(lo *float32, hi *float32, out *float32, ldo int)
TEXT ·f16r46Z(SB), NOSPLIT, $0-32
	MOVQ lo+0(FP), R8
	MOVQ hi+8(FP), AX
	LOAD46(AX)
	MOVQ out+16(FP), DI
	MOVQ ldo+24(FP), R13
	LEAQ (DI)(R13*2), R12
	ADDQ R13, R12
	RED46
	VZEROUPPER
	RET

// func f16t44Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)
TEXT ·f16t44Z(SB), NOSPLIT, $0-64
	TILE4X(VMOVUPS, 128, 64, HALF44, ZERO44, PARK44, RED44, f16t44lo, f16t44hi, f16t44red)

// func f16h44Z(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int, s *float32)
TEXT ·f16h44Z(SB), NOSPLIT, $0-64
	TILE4X(VCVTPH2PS, 64, 32, HALF44, ZERO44, PARK44, RED44, f16h44lo, f16h44hi, f16h44red)
