//go:build amd64 && !noasm

#include "textflag.h"

// Attention kernels (see attn.go and attn_split.go for the Go twins they
// match bit for bit).
// VEX-encoded AVX2/FMA only; every function ends with VZEROUPPER.

// func dotsF32AVX(q, k *float32, stride, n, m int, out *float32)
//
//	for j := 0; j < m; j++ { out[j] = dotF32(q, k[j*stride/4:], n) }
//
// stride in bytes; each dot in dotF32AVX's order: four 8-lane FMA
// accumulators over groups of 32, groups of 8 into the first,
// (a0+a1)+(a2+a3), hsum_float_8, then the tail one FMA at a time.
TEXT ·dotsF32AVX(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), R8
	MOVQ k+8(FP), R9
	MOVQ stride+16(FP), R10
	MOVQ n+24(FP), R11
	MOVQ m+32(FP), R12
	MOVQ out+40(FP), R13

dsrow:
	MOVQ   R8, DI
	MOVQ   R9, SI
	MOVQ   R11, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JLT    ds8

ds32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         ds32

ds8:
	CMPQ        CX, $8
	JLT         dsred
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         ds8

dsred:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0

ds1:
	TESTQ       CX, CX
	JEQ         dsstore
	VMOVSS      (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         ds1

dsstore:
	VMOVSS X0, (R13)
	ADDQ   $4, R13
	ADDQ   R10, R9
	DECQ   R12
	JNZ    dsrow
	VZEROUPPER
	RET

// func accRows32AVX(out, w, v *float32, stride, m int)
//
//	for j := 0; j < m; j++ { for i := 0; i < 32; i++ { out[i] += w[j] * v[j*stride/4+i] } }
//
// stride in bytes; a separate multiply and add per element, in j order.
TEXT ·accRows32AVX(SB), NOSPLIT, $0-40
	MOVQ    out+0(FP), DI
	MOVQ    w+8(FP), DX
	MOVQ    v+16(FP), SI
	MOVQ    stride+24(FP), R10
	MOVQ    m+32(FP), CX
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3

ar32:
	VBROADCASTSS (DX), Y8
	VMULPS       (SI), Y8, Y4
	VMULPS       32(SI), Y8, Y5
	VMULPS       64(SI), Y8, Y6
	VMULPS       96(SI), Y8, Y7
	VADDPS       Y4, Y0, Y0
	VADDPS       Y5, Y1, Y1
	VADDPS       Y6, Y2, Y2
	VADDPS       Y7, Y3, Y3
	ADDQ         $4, DX
	ADDQ         R10, SI
	DECQ         CX
	JNZ          ar32
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	VZEROUPPER
	RET

// func accRows8AVX(out, w, v *float32, stride, m int)
//
// accRows32AVX for 8 elements.
TEXT ·accRows8AVX(SB), NOSPLIT, $0-40
	MOVQ    out+0(FP), DI
	MOVQ    w+8(FP), DX
	MOVQ    v+16(FP), SI
	MOVQ    stride+24(FP), R10
	MOVQ    m+32(FP), CX
	VMOVUPS (DI), Y0

ar8:
	VBROADCASTSS (DX), Y8
	VMULPS       (SI), Y8, Y4
	VADDPS       Y4, Y0, Y0
	ADDQ         $4, DX
	ADDQ         R10, SI
	DECQ         CX
	JNZ          ar8
	VMOVUPS      Y0, (DI)
	VZEROUPPER
	RET

// func scaleAVX(x *float32, n int, s float32)
//
// x[i] *= s for n a multiple of 8.
TEXT ·scaleAVX(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1
	SHRQ         $3, CX
	JEQ          scdone

scloop:
	VMULPS  (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     scloop

scdone:
	VZEROUPPER
	RET

// ggml_v_expf's constants (see ExpGGML), package-wide: attn_tile_amd64.s's
// AVX-512 exponentials read them too.
DATA ·expc+0(SB)/4, $0x4b400000  // r = 0x1.8p23
DATA ·expc+4(SB)/4, $0x3fb8aa3b  // log2(e)
DATA ·expc+8(SB)/4, $0x3f317200  // ln2 high
DATA ·expc+12(SB)/4, $0x35bfbe8e // ln2 low
DATA ·expc+16(SB)/4, $0x3c072010 // p0
DATA ·expc+20(SB)/4, $0x3d2b9f17 // p1
DATA ·expc+24(SB)/4, $0x3e2aaf33 // p2
DATA ·expc+28(SB)/4, $0x3efffedb // p3
DATA ·expc+32(SB)/4, $0x3f7ffff6 // p4
DATA ·expc+36(SB)/4, $0x3f800000 // bits of 1.0
DATA ·expc+40(SB)/4, $0x42fc0000 // 126
DATA ·expc+44(SB)/4, $0x43400000 // 192
DATA ·expc+48(SB)/4, $0x7fffffff // |x| mask
DATA ·expc+52(SB)/4, $0x82000000
DATA ·expc+56(SB)/4, $0x7f000000
DATA ·expc+60(SB)/4, $0xff800000 // −Inf
GLOBL ·expc(SB), RODATA|NOPTR, $64

#define EC(i) ·expc+4*i(SB)

// EXP8: Y0 = ExpGGML(Y0) lane by lane, ggml_v_expf's steps:
//   z = x·log2e + r; n = z − r; b = x − n·ln2hi − n·ln2lo;
//   e = bits(z) << 23; k = e + bits(1); u = b·b;
//   j = ((p0·b + p1)·u + (p2·b + p3))·u + p4·b;
//   c = |n| > 126; the fast result k·j + k where no lane has c,
//   else ggml's per-lane select: g = (n <= 0) & 0x82000000,
//   s1 = g + 0x7f000000, s2 = e − g, c ? (s2·j + s2)·s1 : k·j + k,
//   and |n| > 192 ? s1·s1 : that.
// Uses Y1–Y12 and AX; jumps to label done when no lane has c (the caller
// places done right after the macro). Y7 is reused as scratch once u is dead.
#define EXP8(done) \
	VBROADCASTSS EC(0), Y1         \
	VBROADCASTSS EC(1), Y2         \
	VFMADD231PS  Y2, Y0, Y1        \
	VBROADCASTSS EC(0), Y2         \
	VSUBPS       Y2, Y1, Y2        \
	VMOVAPS      Y0, Y3            \
	VBROADCASTSS EC(2), Y4         \
	VFNMADD231PS Y4, Y2, Y3        \
	VBROADCASTSS EC(3), Y4         \
	VFNMADD231PS Y4, Y2, Y3        \
	VPSLLD       $23, Y1, Y5       \
	VPBROADCASTD EC(9), Y6         \
	VPADDD       Y6, Y5, Y6        \
	VMULPS       Y3, Y3, Y7        \
	VBROADCASTSS EC(5), Y8         \
	VBROADCASTSS EC(4), Y9         \
	VFMADD231PS  Y9, Y3, Y8        \
	VBROADCASTSS EC(7), Y9         \
	VBROADCASTSS EC(6), Y10        \
	VFMADD231PS  Y10, Y3, Y9       \
	VFMADD231PS  Y7, Y8, Y9        \
	VBROADCASTSS EC(8), Y10        \
	VMULPS       Y10, Y3, Y10      \
	VFMADD231PS  Y7, Y9, Y10       \
	VBROADCASTSS EC(12), Y11       \
	VANDPS       Y11, Y2, Y11      \
	VBROADCASTSS EC(10), Y12       \
	VCMPPS       $0x1e, Y12, Y11, Y12 \
	VMOVAPS      Y6, Y0            \
	VFMADD231PS  Y10, Y6, Y0       \
	VMOVMSKPS    Y12, AX           \
	TESTL        AX, AX            \
	JEQ          done              \
	VXORPS       Y7, Y7, Y7        \
	VCMPPS       $0x12, Y7, Y2, Y7 \
	VBROADCASTSS EC(13), Y4        \
	VANDPS       Y4, Y7, Y7        \
	VPBROADCASTD EC(14), Y4        \
	VPADDD       Y4, Y7, Y4        \
	VPSUBD       Y7, Y5, Y5        \
	VMOVAPS      Y5, Y7            \
	VFMADD231PS  Y10, Y5, Y7       \
	VMULPS       Y4, Y7, Y7        \
	VANDPS       Y12, Y7, Y7       \
	VANDNPS      Y0, Y12, Y0       \
	VORPS        Y7, Y0, Y0        \
	VBROADCASTSS EC(11), Y7        \
	VCMPPS       $0x1e, Y7, Y11, Y7 \
	VMULPS       Y4, Y4, Y4        \
	VANDPS       Y7, Y4, Y4        \
	VANDNPS      Y0, Y7, Y0        \
	VORPS        Y4, Y0, Y0

// EXPSUM: stores Y0 back to (DI) and adds float64((t0+t1)+(t2+t3)),
// t_l = x_l + x_{l+4}, to X14.
#define EXPSUM \
	VMOVUPS      Y0, (DI)          \
	VEXTRACTF128 $1, Y0, X1        \
	VADDPS       X1, X0, X0        \
	VHADDPS      X0, X0, X0        \
	VHADDPS      X0, X0, X0        \
	VCVTSS2SD    X0, X0, X0        \
	VADDSD       X0, X14, X14

// func expGroupsAVX(x *float32, n int, maxv float32) float64
//
// For each group of 8 (n a multiple of 8): x = ExpGGML(x − maxv) lane by
// lane, sum += float64((t0+t1)+(t2+t3)) with t_l = x_l + x_{l+4}.
TEXT ·expGroupsAVX(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS maxv+16(FP), Y15
	VXORPD       X14, X14, X14
	SHRQ         $3, CX
	JEQ          exdone

exloop:
	VMOVUPS (DI), Y0
	VSUBPS  Y15, Y0, Y0
	EXP8(exsum)

exsum:
	EXPSUM
	ADDQ $32, DI
	DECQ CX
	JNZ  exloop

exdone:
	VMOVSD X14, ret+24(FP)
	VZEROUPPER
	RET

// func expMaxGroupsAVX(x *float32, n int, phi float32) (sum float64, maxv float32)
//
// The exponentials of the unified-max softmax (see attn_split.go for the
// Go twin): expGroupsAVX with the maximum of the inputs taken on the way.
// For each group of 8 (n a multiple of 8, n ≥ 8): max = x > max ? x : max
// lane by lane, then as expGroupsAVX with phi; the lanes' maxima reduced.
TEXT ·expMaxGroupsAVX(SB), NOSPLIT, $0-36
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS phi+16(FP), Y15
	VXORPD       X14, X14, X14
	VBROADCASTSS EC(15), Y13        // running max: −Inf
	SHRQ         $3, CX
	JEQ          xexdone

xexloop:
	VMOVUPS (DI), Y0
	VMAXPS  Y13, Y0, Y13            // max = x > max ? x : max
	VSUBPS  Y15, Y0, Y0
	EXP8(xexsum)

xexsum:
	EXPSUM
	ADDQ $32, DI
	DECQ CX
	JNZ  xexloop

	VEXTRACTF128 $1, Y13, X1
	VMAXPS       X1, X13, X13
	VMOVHLPS     X13, X13, X1
	VMAXPS       X1, X13, X13
	VMOVSHDUP    X13, X1
	VMAXPS       X1, X13, X13

xexdone:
	VMOVSD X14, sum+24(FP)
	VMOVSS X13, maxv+32(FP)
	VZEROUPPER
	RET
