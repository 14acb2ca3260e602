//go:build amd64 && !noasm

#include "textflag.h"

// q6kf8: the Q6_K flat kernel (AVX-512 BW/VNNI) for batched decode, one
// row against a group of 8 Q8_K columns prepared by Act.fillKFlat, one
// column pair per 512-bit register (both halves hold the row's values).
// Each chunk of 32 values is unpacked once for the 4 pairs, and a pair's
// products take two instructions: VPMADDUBSW of the signed q−32 against
// the unsigned y+128 (pair sums within ±16320, no saturation) and
// VPDPWSSD by the chunk's sub-block scales. The +128 adds 128·Σ(q−32) to
// every pair sum; its scaled lanes (the same for every column) are
// accumulated once per chunk into Z8 and subtracted per super-block, so
// the int32 lanes are exactly those of the AVX2 tile and strips (exact
// sums, the order does not matter; |lane| < 2^26 with the offset). The
// float chain per super-block is theirs: fma(float32(lane), d_w·d_x, acc),
// hsum_float_8 at the end. Bit-identical to dotQ6_KLanes.
//
//	for b := 0; b < nb; b++ {
//		for j := 0; j < 8; j++ { // chunk: values 32j..32j+31, scales 2j (lanes 0-3), 2j+1 (4-7)
//			for p := 0; p < 4; p++ {
//				lane[p] += sc·Σ2 (q−32)·(y+128)
//			}
//			corr += sc·Σ2 (q−32)·128
//		}
//		acc[p] = fma(float32(lane[p] − corr), d_w·d_x[p], acc[p])
//	}
//	out[c·ldo/4] = hsum_float_8(acc[c/2] half c%2)
//
//	func q6kf8(w *byte, x *byte, nb int, tab *float32, out *float32, ldo int, st *float32, flags int)
//
// A row longer than one pass should hold (Act's kfMaxBytes) runs in
// ranges of super-blocks carrying the float accumulators in st (64
// floats per pair, then Q4_K's 32 mins lanes): flags bit 0 starts from
// st instead of zero, bit 1 stores them to st instead of the outputs.
// Each lane still sees its super-blocks in order, so the values are
// those of one pass.

// Q6FPAIR adds pair p's products for chunk j (values Z17, scales Z18).
#define Q6FPAIR(j, p, lane) \
	VMOVDQU64  (256*j+64*p)(DI), Z21 \
	VPMADDUBSW Z17, Z21, Z20 \
	VPDPWSSD   Z18, Z20, lane

// Q6FCHUNK runs chunk j (its 6-bit values in Z17): to q−32, the scales
// from the index q6fidx j, the row's offset lanes, the 4 pairs.
#define Q6FCHUNK(j) \
	VPSUBB     Z11, Z17, Z17 \
	VMOVDQU64  q6fidx<>+(64*j)(SB), Z19 \
	VPERMW     Z13, Z19, Z18 \
	VPMADDUBSW Z17, Z12, Z22 \
	VPDPWSSD   Z18, Z22, Z8 \
	Q6FPAIR(j, 0, Z0) \
	Q6FPAIR(j, 1, Z1) \
	Q6FPAIR(j, 2, Z2) \
	Q6FPAIR(j, 3, Z3)

// Q6FHALF unpacks half h of the super-block at SI (ql at qloff, qh at
// qhoff, broadcast to both halves: Z14, Z15, Z16) chunk by chunk (as
// Q6HALFV in gemmk_amd64.s) and runs chunks j0..j0+3. Z9 0x0f, Z10 0x30.
#define Q6FHALF(qloff, qhoff, j0, j1, j2, j3) \
	VBROADCASTI64X4 qloff(SI), Z14 \
	VBROADCASTI64X4 qloff+32(SI), Z15 \
	VBROADCASTI64X4 qhoff(SI), Z16 \
	VPSLLW          $4, Z16, Z17 \
	VPANDD          Z10, Z17, Z17 \
	VPTERNLOGD      $0xf8, Z9, Z14, Z17 \
	Q6FCHUNK(j0) \
	VPSLLW          $2, Z16, Z17 \
	VPANDD          Z10, Z17, Z17 \
	VPTERNLOGD      $0xf8, Z9, Z15, Z17 \
	Q6FCHUNK(j1) \
	VPANDD          Z10, Z16, Z17 \
	VPSRLW          $4, Z14, Z14 \
	VPTERNLOGD      $0xf8, Z9, Z14, Z17 \
	Q6FCHUNK(j2) \
	VPSRLW          $2, Z16, Z17 \
	VPANDD          Z10, Z17, Z17 \
	VPSRLW          $4, Z15, Z15 \
	VPTERNLOGD      $0xf8, Z9, Z15, Z17 \
	Q6FCHUNK(j3)

// Q6FFLOAT folds pair p's lanes into its float accumulator (d_w in Z23).
#define Q6FFLOAT(p, lane, acc) \
	VPSUBD      Z8, lane, lane \
	VCVTDQ2PS   lane, lane \
	VMULPS      (2048+64*p)(DI), Z23, Z24 \
	VFMADD231PS Z24, lane, acc \
	VPXORD      lane, lane, lane

// Q6FHSUM reduces the 8 floats of Y10 as hsum_float_8 and stores lane 0
// to dst; X15 is scratch.
#define Q6FHSUM(dst) \
	VEXTRACTF128 $1, Y10, X15 \
	VADDPS       X15, X10, X10 \
	VMOVHLPS     X10, X10, X15 \
	VADDPS       X15, X10, X10 \
	VMOVSHDUP    X10, X15 \
	VADDSS       X15, X10, X10 \
	VMOVSS       X10, dst

// Q6FSTORE writes pair acc: low half to column 2p (DX), high half to
// column 2p+1 (DX+R13); DX moves on two columns.
#define Q6FSTORE(acc, yacc) \
	VMOVAPS       yacc, Y10 \
	Q6FHSUM((DX)) \
	VEXTRACTF64X4 $1, acc, Y10 \
	Q6FHSUM((DX)(R13*1)) \
	LEAQ          (DX)(R13*2), DX

TEXT ·q6kf8(SB), NOSPLIT, $0-64
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         tab+24(FP), R8
	VPBROADCASTQ q6fnib<>(SB), Z9
	VPBROADCASTQ q6f30<>(SB), Z10
	VPBROADCASTQ q6f20<>(SB), Z11
	VPBROADCASTQ q6f80<>(SB), Z12
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	VPXORD       Z4, Z4, Z4
	VPXORD       Z5, Z5, Z5
	VPXORD       Z6, Z6, Z6
	VPXORD       Z7, Z7, Z7
	VPXORD       Z8, Z8, Z8
	MOVQ         st+48(FP), R10
	MOVQ         flags+56(FP), R11
	TESTQ        $1, R11
	JZ           q6kf8loop
	VMOVUPS      0(R10), Z4
	VMOVUPS      64(R10), Z5
	VMOVUPS      128(R10), Z6
	VMOVUPS      192(R10), Z7

q6kf8loop:
	PREFETCHT0   512(SI)
	PREFETCHT0   576(SI)
	PREFETCHT0   640(SI)
	PREFETCHT0   704(SI)
	VPMOVSXBW    192(SI), Y13
	Q6FHALF(0, 128, 0, 1, 2, 3)
	Q6FHALF(64, 160, 4, 5, 6, 7)
	MOVWLZX      208(SI), AX
	VBROADCASTSS (R8)(AX*4), Z23
	Q6FFLOAT(0, Z0, Z4)
	Q6FFLOAT(1, Z1, Z5)
	Q6FFLOAT(2, Z2, Z6)
	Q6FFLOAT(3, Z3, Z7)
	VPXORD       Z8, Z8, Z8
	ADDQ         $210, SI
	ADDQ         $2304, DI
	DECQ         CX
	JNZ          q6kf8loop

	TESTQ   $2, R11
	JZ      q6kf8out
	VMOVUPS Z4, 0(R10)
	VMOVUPS Z5, 64(R10)
	VMOVUPS Z6, 128(R10)
	VMOVUPS Z7, 192(R10)
	VZEROUPPER
	RET

q6kf8out:
	MOVQ out+32(FP), DX
	MOVQ ldo+40(FP), R13
	Q6FSTORE(Z4, Y4)
	Q6FSTORE(Z5, Y5)
	Q6FSTORE(Z6, Y6)
	Q6FSTORE(Z7, Y7)
	VZEROUPPER
	RET

DATA q6fnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6fnib<>(SB), RODATA|NOPTR, $8
DATA q6f30<>+0(SB)/8, $0x3030303030303030
GLOBL q6f30<>(SB), RODATA|NOPTR, $8
DATA q6f20<>+0(SB)/8, $0x2020202020202020
GLOBL q6f20<>(SB), RODATA|NOPTR, $8
DATA q6f80<>+0(SB)/8, $0x8080808080808080
GLOBL q6f80<>(SB), RODATA|NOPTR, $8

// q6fidx: VPERMW indices of chunk j's scales, words 2j ×8 then 2j+1 ×8 in
// each 256-bit half.
DATA q6fidx<>+0(SB)/8, $0x0000000000000000
DATA q6fidx<>+8(SB)/8, $0x0000000000000000
DATA q6fidx<>+16(SB)/8, $0x0001000100010001
DATA q6fidx<>+24(SB)/8, $0x0001000100010001
DATA q6fidx<>+32(SB)/8, $0x0000000000000000
DATA q6fidx<>+40(SB)/8, $0x0000000000000000
DATA q6fidx<>+48(SB)/8, $0x0001000100010001
DATA q6fidx<>+56(SB)/8, $0x0001000100010001
DATA q6fidx<>+64(SB)/8, $0x0002000200020002
DATA q6fidx<>+72(SB)/8, $0x0002000200020002
DATA q6fidx<>+80(SB)/8, $0x0003000300030003
DATA q6fidx<>+88(SB)/8, $0x0003000300030003
DATA q6fidx<>+96(SB)/8, $0x0002000200020002
DATA q6fidx<>+104(SB)/8, $0x0002000200020002
DATA q6fidx<>+112(SB)/8, $0x0003000300030003
DATA q6fidx<>+120(SB)/8, $0x0003000300030003
DATA q6fidx<>+128(SB)/8, $0x0004000400040004
DATA q6fidx<>+136(SB)/8, $0x0004000400040004
DATA q6fidx<>+144(SB)/8, $0x0005000500050005
DATA q6fidx<>+152(SB)/8, $0x0005000500050005
DATA q6fidx<>+160(SB)/8, $0x0004000400040004
DATA q6fidx<>+168(SB)/8, $0x0004000400040004
DATA q6fidx<>+176(SB)/8, $0x0005000500050005
DATA q6fidx<>+184(SB)/8, $0x0005000500050005
DATA q6fidx<>+192(SB)/8, $0x0006000600060006
DATA q6fidx<>+200(SB)/8, $0x0006000600060006
DATA q6fidx<>+208(SB)/8, $0x0007000700070007
DATA q6fidx<>+216(SB)/8, $0x0007000700070007
DATA q6fidx<>+224(SB)/8, $0x0006000600060006
DATA q6fidx<>+232(SB)/8, $0x0006000600060006
DATA q6fidx<>+240(SB)/8, $0x0007000700070007
DATA q6fidx<>+248(SB)/8, $0x0007000700070007
DATA q6fidx<>+256(SB)/8, $0x0008000800080008
DATA q6fidx<>+264(SB)/8, $0x0008000800080008
DATA q6fidx<>+272(SB)/8, $0x0009000900090009
DATA q6fidx<>+280(SB)/8, $0x0009000900090009
DATA q6fidx<>+288(SB)/8, $0x0008000800080008
DATA q6fidx<>+296(SB)/8, $0x0008000800080008
DATA q6fidx<>+304(SB)/8, $0x0009000900090009
DATA q6fidx<>+312(SB)/8, $0x0009000900090009
DATA q6fidx<>+320(SB)/8, $0x000a000a000a000a
DATA q6fidx<>+328(SB)/8, $0x000a000a000a000a
DATA q6fidx<>+336(SB)/8, $0x000b000b000b000b
DATA q6fidx<>+344(SB)/8, $0x000b000b000b000b
DATA q6fidx<>+352(SB)/8, $0x000a000a000a000a
DATA q6fidx<>+360(SB)/8, $0x000a000a000a000a
DATA q6fidx<>+368(SB)/8, $0x000b000b000b000b
DATA q6fidx<>+376(SB)/8, $0x000b000b000b000b
DATA q6fidx<>+384(SB)/8, $0x000c000c000c000c
DATA q6fidx<>+392(SB)/8, $0x000c000c000c000c
DATA q6fidx<>+400(SB)/8, $0x000d000d000d000d
DATA q6fidx<>+408(SB)/8, $0x000d000d000d000d
DATA q6fidx<>+416(SB)/8, $0x000c000c000c000c
DATA q6fidx<>+424(SB)/8, $0x000c000c000c000c
DATA q6fidx<>+432(SB)/8, $0x000d000d000d000d
DATA q6fidx<>+440(SB)/8, $0x000d000d000d000d
DATA q6fidx<>+448(SB)/8, $0x000e000e000e000e
DATA q6fidx<>+456(SB)/8, $0x000e000e000e000e
DATA q6fidx<>+464(SB)/8, $0x000f000f000f000f
DATA q6fidx<>+472(SB)/8, $0x000f000f000f000f
DATA q6fidx<>+480(SB)/8, $0x000e000e000e000e
DATA q6fidx<>+488(SB)/8, $0x000e000e000e000e
DATA q6fidx<>+496(SB)/8, $0x000f000f000f000f
DATA q6fidx<>+504(SB)/8, $0x000f000f000f000f
GLOBL q6fidx<>(SB), RODATA|NOPTR, $512

// q4kf8: the Q4_K flat kernel, q6kf8's layout and loop for Q4_K: one row
// against the 8 columns of Act.fillKFlat (4 pairs, values as they are),
// each 32-value chunk (one sub-block) unpacked once for the 4 pairs, a
// pair's products one VPMADDUBSW of the nibbles against y and one
// VPDPWSSD by the sub-block's scale. The mins: the 8 columns' int16 sums
// of 32 values (Act) times the row's 8 mins by two VPMADDWD give every
// column's 4 mins lanes (sub-blocks 2i, 2i+1 in lane i). The float chain
// is the AVX2 tile's and dotQ4_KLanes':
//
//	acc[p]  = fma(float32(lane[p]), d·d_x, acc[p])         per super-block
//	macc[c] = fma(float32(ml[c]), dmin·d_x[c], macc[c])     4 lanes per column
//	out[c]  = hsum_float_8(acc) − ((m0+m2)+(m1+m3))
//
//	func q4kf8(w *byte, x *byte, nb int, tab *float32, out *float32, ldo int, st *float32, flags int)

// Q4FCHUNK runs chunk j (nibbles in Z17): its scale (word j of Z13)
// broadcast by VPERMW, the 4 pairs.
#define Q4FCHUNK(j) \
	VMOVDQU64  q4fidx<>+(64*j)(SB), Z19 \
	VPERMW     Z13, Z19, Z18 \
	VPMADDUBSW (256*j)(DI), Z17, Z20 \
	VPDPWSSD   Z18, Z20, Z0 \
	VPMADDUBSW (256*j+64)(DI), Z17, Z20 \
	VPDPWSSD   Z18, Z20, Z1 \
	VPMADDUBSW (256*j+128)(DI), Z17, Z20 \
	VPDPWSSD   Z18, Z20, Z2 \
	VPMADDUBSW (256*j+192)(DI), Z17, Z20 \
	VPDPWSSD   Z18, Z20, Z3

// Q4FGROUP runs the 64 values of qs at qoff: low nibbles chunk j0, high
// nibbles chunk j0+1. Z9 0x0f.
#define Q4FGROUP(qoff, j0, j1) \
	VBROADCASTI64X4 qoff(SI), Z14 \
	VPANDD          Z9, Z14, Z17 \
	Q4FCHUNK(j0) \
	VPSRLW          $4, Z14, Z14 \
	VPANDD          Z9, Z14, Z17 \
	Q4FCHUNK(j1)

// Q4FFLOAT folds pair p's lanes into its float accumulator (d in Z23).
#define Q4FFLOAT(p, lane, acc) \
	VCVTDQ2PS   lane, lane \
	VMULPS      (2048+64*p)(DI), Z23, Z24 \
	VFMADD231PS Z24, lane, acc \
	VPXORD      lane, lane, lane

// Q4FOUT stores column c (pair acc half h; mins lanes chunk mc of macc)
// to (DX) and moves DX to the next column.
#define Q4FOUT(acc, h, macc, mc) \
	VEXTRACTF64X4 $h, acc, Y10 \
	VEXTRACTF128  $1, Y10, X15 \
	VADDPS        X15, X10, X10 \
	VMOVHLPS      X10, X10, X15 \
	VADDPS        X15, X10, X10 \
	VMOVSHDUP     X10, X15 \
	VADDSS        X15, X10, X10 \
	VEXTRACTF32X4 $mc, macc, X12 \
	VMOVHLPS      X12, X12, X15 \
	VADDPS        X15, X12, X12 \
	VMOVSHDUP     X12, X15 \
	VADDSS        X15, X12, X12 \
	VSUBSS        X12, X10, X10 \
	VMOVSS        X10, (DX) \
	ADDQ          R13, DX

TEXT ·q4kf8(SB), NOSPLIT, $0-64
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         tab+24(FP), R8
	VPBROADCASTQ q6fnib<>(SB), Z9
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	VPXORD       Z4, Z4, Z4
	VPXORD       Z5, Z5, Z5
	VPXORD       Z6, Z6, Z6
	VPXORD       Z7, Z7, Z7
	VPXORD       Z21, Z21, Z21
	VPXORD       Z22, Z22, Z22
	MOVQ         st+48(FP), R10
	MOVQ         flags+56(FP), R11
	TESTQ        $1, R11
	JZ           q4kf8loop
	VMOVUPS      0(R10), Z4
	VMOVUPS      64(R10), Z5
	VMOVUPS      128(R10), Z6
	VMOVUPS      192(R10), Z7
	VMOVUPS      256(R10), Z21
	VMOVUPS      320(R10), Z22

q4kf8loop:
	PREFETCHT0   512(SI)
	PREFETCHT0   576(SI)
	PREFETCHT0   640(SI)

	// Scales and mins: bytes [sc0..7, m0..7] (as the AVX2 kernels'
	// K4UNPACK), widened to the words of Y13.
	VMOVDQU      (SI), X8
	VPSHUFB      q4fidxA<>(SB), X8, X15
	VPAND        q4fm1<>(SB), X15, X12
	VPSRLW       $4, X15, X15
	VPAND        q4fm2<>(SB), X15, X15
	VPOR         X15, X12, X12
	VPSHUFB      q4fidxB<>(SB), X8, X15
	VPSRLW       $2, X15, X15
	VPAND        q4fm3<>(SB), X15, X15
	VPOR         X15, X12, X12
	VPMOVZXBW    X12, Y13

	// Mins lanes of columns 0-3 (Z25) and 4-7 (Z26), by dmin·d_x.
	VMOVDQU64    q4fmidx<>(SB), Z19
	VPERMW       Z13, Z19, Z18
	VPMADDWD     2304(DI), Z18, Z25
	VPMADDWD     2368(DI), Z18, Z26
	VCVTDQ2PS    Z25, Z25
	VCVTDQ2PS    Z26, Z26
	MOVWLZX      2(SI), AX
	VBROADCASTSS (R8)(AX*4), Z23
	VMULPS       2432(DI), Z23, Z24
	VFMADD231PS  Z24, Z25, Z21
	VMULPS       2496(DI), Z23, Z24
	VFMADD231PS  Z24, Z26, Z22

	Q4FGROUP(16, 0, 1)
	Q4FGROUP(48, 2, 3)
	Q4FGROUP(80, 4, 5)
	Q4FGROUP(112, 6, 7)
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Z23
	Q4FFLOAT(0, Z0, Z4)
	Q4FFLOAT(1, Z1, Z5)
	Q4FFLOAT(2, Z2, Z6)
	Q4FFLOAT(3, Z3, Z7)
	ADDQ         $144, SI
	ADDQ         $2560, DI
	DECQ         CX
	JNZ          q4kf8loop

	TESTQ   $2, R11
	JZ      q4kf8out
	VMOVUPS Z4, 0(R10)
	VMOVUPS Z5, 64(R10)
	VMOVUPS Z6, 128(R10)
	VMOVUPS Z7, 192(R10)
	VMOVUPS Z21, 256(R10)
	VMOVUPS Z22, 320(R10)
	VZEROUPPER
	RET

q4kf8out:
	MOVQ out+32(FP), DX
	MOVQ ldo+40(FP), R13
	Q4FOUT(Z4, 0, Z21, 0)
	Q4FOUT(Z4, 1, Z21, 1)
	Q4FOUT(Z5, 0, Z21, 2)
	Q4FOUT(Z5, 1, Z21, 3)
	Q4FOUT(Z6, 0, Z22, 0)
	Q4FOUT(Z6, 1, Z22, 1)
	Q4FOUT(Z7, 0, Z22, 2)
	Q4FOUT(Z7, 1, Z22, 3)
	VZEROUPPER
	RET

// The K4UNPACK constants of gemmk_amd64.s (one 128-bit half).
DATA q4fidxA<>+0(SB)/8, $0x0f0e0d0c07060504
DATA q4fidxA<>+8(SB)/8, $0x0f0e0d0c0b0a0908
GLOBL q4fidxA<>(SB), RODATA|NOPTR, $16
DATA q4fidxB<>+0(SB)/8, $0x0706050480808080
DATA q4fidxB<>+8(SB)/8, $0x0b0a090880808080
GLOBL q4fidxB<>(SB), RODATA|NOPTR, $16
DATA q4fm1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4fm1<>+8(SB)/8, $0x000000003f3f3f3f
GLOBL q4fm1<>(SB), RODATA|NOPTR, $16
DATA q4fm2<>+0(SB)/8, $0x0000000000000000
DATA q4fm2<>+8(SB)/8, $0x0f0f0f0f00000000
GLOBL q4fm2<>(SB), RODATA|NOPTR, $16
DATA q4fm3<>+0(SB)/8, $0x3030303000000000
DATA q4fm3<>+8(SB)/8, $0x3030303000000000
GLOBL q4fm3<>(SB), RODATA|NOPTR, $16

// q4fidx: VPERMW indices broadcasting word j (chunk j's scale); q4fmidx:
// the mins, words 8-15, in every 128 bits.
DATA q4fidx<>+0(SB)/8, $0x0000000000000000
DATA q4fidx<>+8(SB)/8, $0x0000000000000000
DATA q4fidx<>+16(SB)/8, $0x0000000000000000
DATA q4fidx<>+24(SB)/8, $0x0000000000000000
DATA q4fidx<>+32(SB)/8, $0x0000000000000000
DATA q4fidx<>+40(SB)/8, $0x0000000000000000
DATA q4fidx<>+48(SB)/8, $0x0000000000000000
DATA q4fidx<>+56(SB)/8, $0x0000000000000000
DATA q4fidx<>+64(SB)/8, $0x0001000100010001
DATA q4fidx<>+72(SB)/8, $0x0001000100010001
DATA q4fidx<>+80(SB)/8, $0x0001000100010001
DATA q4fidx<>+88(SB)/8, $0x0001000100010001
DATA q4fidx<>+96(SB)/8, $0x0001000100010001
DATA q4fidx<>+104(SB)/8, $0x0001000100010001
DATA q4fidx<>+112(SB)/8, $0x0001000100010001
DATA q4fidx<>+120(SB)/8, $0x0001000100010001
DATA q4fidx<>+128(SB)/8, $0x0002000200020002
DATA q4fidx<>+136(SB)/8, $0x0002000200020002
DATA q4fidx<>+144(SB)/8, $0x0002000200020002
DATA q4fidx<>+152(SB)/8, $0x0002000200020002
DATA q4fidx<>+160(SB)/8, $0x0002000200020002
DATA q4fidx<>+168(SB)/8, $0x0002000200020002
DATA q4fidx<>+176(SB)/8, $0x0002000200020002
DATA q4fidx<>+184(SB)/8, $0x0002000200020002
DATA q4fidx<>+192(SB)/8, $0x0003000300030003
DATA q4fidx<>+200(SB)/8, $0x0003000300030003
DATA q4fidx<>+208(SB)/8, $0x0003000300030003
DATA q4fidx<>+216(SB)/8, $0x0003000300030003
DATA q4fidx<>+224(SB)/8, $0x0003000300030003
DATA q4fidx<>+232(SB)/8, $0x0003000300030003
DATA q4fidx<>+240(SB)/8, $0x0003000300030003
DATA q4fidx<>+248(SB)/8, $0x0003000300030003
DATA q4fidx<>+256(SB)/8, $0x0004000400040004
DATA q4fidx<>+264(SB)/8, $0x0004000400040004
DATA q4fidx<>+272(SB)/8, $0x0004000400040004
DATA q4fidx<>+280(SB)/8, $0x0004000400040004
DATA q4fidx<>+288(SB)/8, $0x0004000400040004
DATA q4fidx<>+296(SB)/8, $0x0004000400040004
DATA q4fidx<>+304(SB)/8, $0x0004000400040004
DATA q4fidx<>+312(SB)/8, $0x0004000400040004
DATA q4fidx<>+320(SB)/8, $0x0005000500050005
DATA q4fidx<>+328(SB)/8, $0x0005000500050005
DATA q4fidx<>+336(SB)/8, $0x0005000500050005
DATA q4fidx<>+344(SB)/8, $0x0005000500050005
DATA q4fidx<>+352(SB)/8, $0x0005000500050005
DATA q4fidx<>+360(SB)/8, $0x0005000500050005
DATA q4fidx<>+368(SB)/8, $0x0005000500050005
DATA q4fidx<>+376(SB)/8, $0x0005000500050005
DATA q4fidx<>+384(SB)/8, $0x0006000600060006
DATA q4fidx<>+392(SB)/8, $0x0006000600060006
DATA q4fidx<>+400(SB)/8, $0x0006000600060006
DATA q4fidx<>+408(SB)/8, $0x0006000600060006
DATA q4fidx<>+416(SB)/8, $0x0006000600060006
DATA q4fidx<>+424(SB)/8, $0x0006000600060006
DATA q4fidx<>+432(SB)/8, $0x0006000600060006
DATA q4fidx<>+440(SB)/8, $0x0006000600060006
DATA q4fidx<>+448(SB)/8, $0x0007000700070007
DATA q4fidx<>+456(SB)/8, $0x0007000700070007
DATA q4fidx<>+464(SB)/8, $0x0007000700070007
DATA q4fidx<>+472(SB)/8, $0x0007000700070007
DATA q4fidx<>+480(SB)/8, $0x0007000700070007
DATA q4fidx<>+488(SB)/8, $0x0007000700070007
DATA q4fidx<>+496(SB)/8, $0x0007000700070007
DATA q4fidx<>+504(SB)/8, $0x0007000700070007
GLOBL q4fidx<>(SB), RODATA|NOPTR, $512
DATA q4fmidx<>+0(SB)/8, $0x000b000a00090008
DATA q4fmidx<>+8(SB)/8, $0x000f000e000d000c
DATA q4fmidx<>+16(SB)/8, $0x000b000a00090008
DATA q4fmidx<>+24(SB)/8, $0x000f000e000d000c
DATA q4fmidx<>+32(SB)/8, $0x000b000a00090008
DATA q4fmidx<>+40(SB)/8, $0x000f000e000d000c
DATA q4fmidx<>+48(SB)/8, $0x000b000a00090008
DATA q4fmidx<>+56(SB)/8, $0x000f000e000d000c
GLOBL q4fmidx<>(SB), RODATA|NOPTR, $64
