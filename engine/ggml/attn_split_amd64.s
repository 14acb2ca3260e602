//go:build amd64 && !noasm

#include "textflag.h"

// The exponentials of the unified-max softmax (see attn_split.go for the Go
// twin): expGroupsAVX of attn_amd64.s with the maximum of the inputs taken
// on the way. VEX-encoded AVX2/FMA only.

// ggml_v_expf's constants (see ExpGGML).
DATA sexpc<>+0(SB)/4, $0x4b400000  // r = 0x1.8p23
DATA sexpc<>+4(SB)/4, $0x3fb8aa3b  // log2(e)
DATA sexpc<>+8(SB)/4, $0x3f317200  // ln2 high
DATA sexpc<>+12(SB)/4, $0x35bfbe8e // ln2 low
DATA sexpc<>+16(SB)/4, $0x3c072010 // p0
DATA sexpc<>+20(SB)/4, $0x3d2b9f17 // p1
DATA sexpc<>+24(SB)/4, $0x3e2aaf33 // p2
DATA sexpc<>+28(SB)/4, $0x3efffedb // p3
DATA sexpc<>+32(SB)/4, $0x3f7ffff6 // p4
DATA sexpc<>+36(SB)/4, $0x3f800000 // bits of 1.0
DATA sexpc<>+40(SB)/4, $0x42fc0000 // 126
DATA sexpc<>+44(SB)/4, $0x43400000 // 192
DATA sexpc<>+48(SB)/4, $0x7fffffff // |x| mask
DATA sexpc<>+52(SB)/4, $0x82000000
DATA sexpc<>+56(SB)/4, $0x7f000000
DATA sexpc<>+60(SB)/4, $0xff800000 // −Inf
GLOBL sexpc<>(SB), RODATA|NOPTR, $64

#define SEC(i) sexpc<>+4*i(SB)

// func expMaxGroupsAVX(x *float32, n int, phi float32) (sum float64, maxv float32)
//
// For each group of 8 (n a multiple of 8, n ≥ 8): max = x > max ? x : max
// lane by lane, x = ExpGGML(x − phi), sum += float64((t0+t1)+(t2+t3)) with
// t_l = x_l + x_{l+4}; then the lanes' maxima reduced.
TEXT ·expMaxGroupsAVX(SB), NOSPLIT, $0-36
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS phi+16(FP), Y15
	VXORPD       X14, X14, X14
	VBROADCASTSS SEC(15), Y13        // running max: −Inf
	SHRQ         $3, CX
	JEQ          xexdone

xexloop:
	VMOVUPS      (DI), Y0
	VMAXPS       Y13, Y0, Y13        // max = x > max ? x : max
	VSUBPS       Y15, Y0, Y0
	VBROADCASTSS SEC(0), Y1
	VBROADCASTSS SEC(1), Y2
	VFMADD231PS  Y2, Y0, Y1          // z = x·log2e + r
	VBROADCASTSS SEC(0), Y2
	VSUBPS       Y2, Y1, Y2          // n = z − r
	VMOVAPS      Y0, Y3
	VBROADCASTSS SEC(2), Y4
	VFNMADD231PS Y4, Y2, Y3          // x − n·ln2hi
	VBROADCASTSS SEC(3), Y4
	VFNMADD231PS Y4, Y2, Y3          // b = … − n·ln2lo
	VPSLLD       $23, Y1, Y5         // e = bits(z) << 23
	VPBROADCASTD SEC(9), Y6
	VPADDD       Y6, Y5, Y6          // k = e + bits(1)
	VMULPS       Y3, Y3, Y7          // u = b·b
	VBROADCASTSS SEC(5), Y8
	VBROADCASTSS SEC(4), Y9
	VFMADD231PS  Y9, Y3, Y8          // a1 = p0·b + p1
	VBROADCASTSS SEC(7), Y9
	VBROADCASTSS SEC(6), Y10
	VFMADD231PS  Y10, Y3, Y9         // a2 = p2·b + p3
	VFMADD231PS  Y7, Y8, Y9          // a2 = a1·u + a2
	VBROADCASTSS SEC(8), Y10
	VMULPS       Y10, Y3, Y10        // p4·b
	VFMADD231PS  Y7, Y9, Y10         // j = a2·u + p4·b
	VBROADCASTSS SEC(12), Y11
	VANDPS       Y11, Y2, Y11        // |n|
	VBROADCASTSS SEC(10), Y12
	VCMPPS       $0x1e, Y12, Y11, Y12 // c = |n| > 126
	VMOVAPS      Y6, Y0
	VFMADD231PS  Y10, Y6, Y0         // k·j + k
	VMOVMSKPS    Y12, AX
	TESTL        AX, AX
	JEQ          xexsum

	// Some lane is out of the fast range: ggml's per-lane select.
	VXORPS       Y7, Y7, Y7
	VCMPPS       $0x12, Y7, Y2, Y7   // n <= 0
	VBROADCASTSS SEC(13), Y4
	VANDPS       Y4, Y7, Y7          // g
	VPBROADCASTD SEC(14), Y4
	VPADDD       Y4, Y7, Y4          // s1 = g + 0x7f000000
	VPSUBD       Y7, Y5, Y5          // s2 = e − g
	VMOVAPS      Y5, Y7
	VFMADD231PS  Y10, Y5, Y7         // s2·j + s2
	VMULPS       Y4, Y7, Y7          // (…)·s1
	VANDPS       Y12, Y7, Y7         // c ? (…)·s1
	VANDNPS      Y0, Y12, Y0         // !c ? k·j + k
	VORPS        Y7, Y0, Y0
	VBROADCASTSS SEC(11), Y7
	VCMPPS       $0x1e, Y7, Y11, Y7  // d = |n| > 192
	VMULPS       Y4, Y4, Y4          // s1·s1
	VANDPS       Y7, Y4, Y4
	VANDNPS      Y0, Y7, Y0
	VORPS        Y4, Y0, Y0

xexsum:
	VMOVUPS      Y0, (DI)
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0          // t_l = x_l + x_{l+4}
	VHADDPS      X0, X0, X0          // t0+t1, t2+t3
	VHADDPS      X0, X0, X0          // (t0+t1)+(t2+t3)
	VCVTSS2SD    X0, X0, X0
	VADDSD       X0, X14, X14
	ADDQ         $32, DI
	DECQ         CX
	JNZ          xexloop

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
