//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 + FMA + F16C dot kernels of the Inferflow formats against a
// prepared Q8_0 activation (kernels_amd64.go: prepQ8). The plain-Go twin
// dotGo in dot.go is the reference for each:
//
//	for each block:  lo, d = fp16 header
//	  for each 32-weight sub-block j:
//	    q = the sub-block's 32 levels, unpacked into the bytes of Y2
//	    acc += dx[j]·d·Σ q·x        (8 int32 lanes, vpmaddubsw + vpmaddwd)
//	    accm += lo·sx[j]            (sx[j] = dx[j]·Σ x, scalar)
//	return Σ acc + accm
//
// Every plane of codes is laid out so that one broadcast, one per-lane
// variable shift and one mask yield 32 levels in order (format.go: plane).
// Every function ends with VZEROUPPER and uses only VEX-encoded vector
// instructions (PERF-NOTES: the SSE/AVX transition penalty).

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

DATA nibble<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibble<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibble<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibble<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibble<>(SB), RODATA|NOPTR, $32

DATA sign80<>+0(SB)/8, $0x8080808080808080
DATA sign80<>+8(SB)/8, $0x8080808080808080
DATA sign80<>+16(SB)/8, $0x8080808080808080
DATA sign80<>+24(SB)/8, $0x8080808080808080
GLOBL sign80<>(SB), RODATA|NOPTR, $32

DATA mask01<>+0(SB)/8, $0x0101010101010101
DATA mask01<>+8(SB)/8, $0x0101010101010101
DATA mask01<>+16(SB)/8, $0x0101010101010101
DATA mask01<>+24(SB)/8, $0x0101010101010101
GLOBL mask01<>(SB), RODATA|NOPTR, $32

DATA mask03<>+0(SB)/8, $0x0303030303030303
DATA mask03<>+8(SB)/8, $0x0303030303030303
DATA mask03<>+16(SB)/8, $0x0303030303030303
DATA mask03<>+24(SB)/8, $0x0303030303030303
GLOBL mask03<>(SB), RODATA|NOPTR, $32

DATA mask10<>+0(SB)/8, $0x1010101010101010
DATA mask10<>+8(SB)/8, $0x1010101010101010
DATA mask10<>+16(SB)/8, $0x1010101010101010
DATA mask10<>+24(SB)/8, $0x1010101010101010
GLOBL mask10<>(SB), RODATA|NOPTR, $32

DATA mask30<>+0(SB)/8, $0x3030303030303030
DATA mask30<>+8(SB)/8, $0x3030303030303030
DATA mask30<>+16(SB)/8, $0x3030303030303030
DATA mask30<>+24(SB)/8, $0x3030303030303030
GLOBL mask30<>(SB), RODATA|NOPTR, $32

DATA mask40<>+0(SB)/8, $0x4040404040404040
DATA mask40<>+8(SB)/8, $0x4040404040404040
GLOBL mask40<>(SB), RODATA|NOPTR, $16

// f128 is float32 128: Q8 levels enter vpmaddubsw as q−128.
DATA f128<>+0(SB)/4, $0x43000000
GLOBL f128<>(SB), RODATA|NOPTR, $4

// Per-qword shift counts (VPSRLVQ/VPSLLVQ) and per-dword ones (VPSLLVD/VPSRLVD).
DATA hishift<>+0(SB)/8, $0
DATA hishift<>+8(SB)/8, $0
DATA hishift<>+16(SB)/8, $4
DATA hishift<>+24(SB)/8, $4
GLOBL hishift<>(SB), RODATA|NOPTR, $32

DATA shl5<>+0(SB)/8, $4
DATA shl5<>+8(SB)/8, $3
DATA shl5<>+16(SB)/8, $2
DATA shl5<>+24(SB)/8, $1
GLOBL shl5<>(SB), RODATA|NOPTR, $32

DATA shr5<>+0(SB)/8, $0
DATA shr5<>+8(SB)/8, $1
DATA shr5<>+16(SB)/8, $2
DATA shr5<>+24(SB)/8, $3
GLOBL shr5<>(SB), RODATA|NOPTR, $32

DATA shl6<>+0(SB)/8, $4
DATA shl6<>+8(SB)/8, $4
DATA shl6<>+16(SB)/8, $2
DATA shl6<>+24(SB)/8, $2
GLOBL shl6<>(SB), RODATA|NOPTR, $32

DATA shr6<>+0(SB)/8, $0
DATA shr6<>+8(SB)/8, $0
DATA shr6<>+16(SB)/8, $2
DATA shr6<>+24(SB)/8, $2
GLOBL shr6<>(SB), RODATA|NOPTR, $32

DATA shr2<>+0(SB)/8, $0
DATA shr2<>+8(SB)/8, $2
DATA shr2<>+16(SB)/8, $4
DATA shr2<>+24(SB)/8, $6
GLOBL shr2<>(SB), RODATA|NOPTR, $32

DATA shr8d<>+0(SB)/4, $0
DATA shr8d<>+4(SB)/4, $1
DATA shr8d<>+8(SB)/4, $2
DATA shr8d<>+12(SB)/4, $3
DATA shr8d<>+16(SB)/4, $4
DATA shr8d<>+20(SB)/4, $5
DATA shr8d<>+24(SB)/4, $6
DATA shr8d<>+28(SB)/4, $7
GLOBL shr8d<>(SB), RODATA|NOPTR, $32

// Q3H: mid plane qword shifts, high plane dword shifts, and the pair
// decoding constants: c/11 = (c·5958)>>16 for c ≤ 120, and the word
// q₂ᵢ | q₂ᵢ₊₁<<8 = (c<<8) − 2815·(c/11).
DATA q3hml<>+0(SB)/8, $4
DATA q3hml<>+8(SB)/8, $2
GLOBL q3hml<>(SB), RODATA|NOPTR, $16

DATA q3hmr<>+0(SB)/8, $0
DATA q3hmr<>+8(SB)/8, $2
GLOBL q3hmr<>(SB), RODATA|NOPTR, $16

DATA q3hhl0<>+0(SB)/4, $6
DATA q3hhl0<>+4(SB)/4, $5
DATA q3hhl0<>+8(SB)/4, $4
DATA q3hhl0<>+12(SB)/4, $3
GLOBL q3hhl0<>(SB), RODATA|NOPTR, $16

DATA q3hhl1<>+0(SB)/4, $2
DATA q3hhl1<>+4(SB)/4, $1
DATA q3hhl1<>+8(SB)/4, $0
DATA q3hhl1<>+12(SB)/4, $0
GLOBL q3hhl1<>(SB), RODATA|NOPTR, $16

DATA q3hhr1<>+0(SB)/4, $0
DATA q3hhr1<>+4(SB)/4, $0
DATA q3hhr1<>+8(SB)/4, $0
DATA q3hhr1<>+12(SB)/4, $1
GLOBL q3hhr1<>(SB), RODATA|NOPTR, $16

DATA div11<>+0(SB)/8, $0x1746174617461746
DATA div11<>+8(SB)/8, $0x1746174617461746
DATA div11<>+16(SB)/8, $0x1746174617461746
DATA div11<>+24(SB)/8, $0x1746174617461746
GLOBL div11<>(SB), RODATA|NOPTR, $32

DATA mul2815<>+0(SB)/8, $0x0aff0aff0aff0aff
DATA mul2815<>+8(SB)/8, $0x0aff0aff0aff0aff
DATA mul2815<>+16(SB)/8, $0x0aff0aff0aff0aff
DATA mul2815<>+24(SB)/8, $0x0aff0aff0aff0aff
GLOBL mul2815<>(SB), RODATA|NOPTR, $32

// Register use: SI weights, DI activation values, DX activation scales dx,
// R8 activation sums sx, CX blocks left; Y0 the lane accumulator, X1 the
// min-term accumulator, Y15 int16 ones, Y14 the nibble mask; per block
// X6[0] = lo, Y7 = d in every lane.

#define PROLOGUE \
	MOVQ    w+0(FP), SI \
	MOVQ    qs+8(FP), DI \
	MOVQ    dx+16(FP), DX \
	MOVQ    sx+24(FP), R8 \
	MOVQ    nb+32(FP), CX \
	VMOVDQU ones16<>(SB), Y15 \
	VMOVDQU nibble<>(SB), Y14 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1

// PFD is how far ahead of the current block the weights are prefetched.
#define PFD 512

// HEADER loads the block's fp16 lo and d at (SI) and prefetches the
// weights PFD bytes ahead (one line per block: blocks are ≤ 68 bytes).
#define HEADER \
	PREFETCHT0   PFD(SI) \
	VMOVD        (SI), X6 \
	VCVTPH2PS    X6, X6 \
	VMOVSHDUP    X6, X7 \
	VBROADCASTSS X7, Y7

// ACCUM adds one sub-block given Y4 = 16 int16 pair products q·x.
#define ACCUM \
	VPMADDWD     Y15, Y4, Y4 \
	VCVTDQ2PS    Y4, Y4 \
	VBROADCASTSS (DX), Y5 \
	VMULPS       Y7, Y5, Y5 \
	VFMADD231PS  Y4, Y5, Y0 \
	VFMADD231SS  (R8), X6, X1 \
	ADDQ         $32, DI \
	ADDQ         $4, DX \
	ADDQ         $4, R8

// STEP adds the sub-block whose 32 levels (< 128) are in Y2.
#define STEP \
	VPMADDUBSW (DI), Y2, Y4 \
	ACCUM

// FINISH reduces Y0 + X1 into X0[0].
#define FINISH \
	VEXTRACTF128 $1, Y0, X2 \
	VADDPS       X2, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VADDSS       X1, X0, X0

// func dotQ8AVX(w *byte, qs *byte, dx, sx *float32, nb, sub, size int) float32
//
// Levels reach 255, too large for vpmaddubsw's int16 pair sums, so they
// enter as s = q−128 through the sign trick (|s|·sign(x, s)) and the
// block's lo becomes lo + 128·d.
TEXT ·dotQ8AVX(SB), NOSPLIT, $0-60
	PROLOGUE
	MOVQ    sub+40(FP), R9
	MOVQ    size+48(FP), R12
	VMOVDQU sign80<>(SB), Y13

q8block:
	HEADER
	VFMADD231SS f128<>(SB), X7, X6
	LEAQ        4(SI), R10
	MOVQ        R9, R11

q8sub:
	VMOVDQU    (R10), Y2
	VPXOR      Y13, Y2, Y2
	VMOVDQU    (DI), Y3
	VPSIGNB    Y2, Y3, Y3
	VPABSB     Y2, Y2
	VPMADDUBSW Y3, Y2, Y4
	ACCUM
	ADDQ       $32, R10
	DECQ       R11
	JNZ        q8sub
	ADDQ       R12, SI
	DECQ       CX
	JNZ        q8block

	FINISH
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// func dotQ6AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 52-byte blocks: header, 32 bytes of low nibbles (byte j: levels j, j+32),
// 16 bytes of high 2-bit fields (byte j: levels j, j+16, j+32, j+48).
TEXT ·dotQ6AVX(SB), NOSPLIT, $0-44
	PROLOGUE
	VMOVDQU shl6<>(SB), Y10
	VMOVDQU shr6<>(SB), Y11
	VMOVDQU mask30<>(SB), Y12

q6loop:
	HEADER
	VMOVDQU        4(SI), Y9
	VBROADCASTI128 36(SI), Y8
	VPAND          Y14, Y9, Y2
	VPSLLVQ        Y10, Y8, Y3
	VPAND          Y12, Y3, Y3
	VPOR           Y3, Y2, Y2
	STEP
	VPSRLW         $4, Y9, Y2
	VPAND          Y14, Y2, Y2
	VPSRLVQ        Y11, Y8, Y3
	VPAND          Y12, Y3, Y3
	VPOR           Y3, Y2, Y2
	STEP
	ADDQ           $52, SI
	DECQ           CX
	JNZ            q6loop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotQ5AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 44-byte blocks: header, 32 bytes of low nibbles, 8 bytes of high bits
// (byte j bit k: level j+8k).
TEXT ·dotQ5AVX(SB), NOSPLIT, $0-44
	PROLOGUE
	VMOVDQU shl5<>(SB), Y10
	VMOVDQU shr5<>(SB), Y11
	VMOVDQU mask10<>(SB), Y12

q5loop:
	HEADER
	VMOVDQU      4(SI), Y9
	VPBROADCASTQ 36(SI), Y8
	VPAND        Y14, Y9, Y2
	VPSLLVQ      Y10, Y8, Y3
	VPAND        Y12, Y3, Y3
	VPOR         Y3, Y2, Y2
	STEP
	VPSRLW       $4, Y9, Y2
	VPAND        Y14, Y2, Y2
	VPSRLVQ      Y11, Y8, Y3
	VPAND        Y12, Y3, Y3
	VPOR         Y3, Y2, Y2
	STEP
	ADDQ         $44, SI
	DECQ         CX
	JNZ          q5loop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotQ4B32AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 20-byte blocks: header, 16 bytes of nibbles (byte j: levels j, j+16).
TEXT ·dotQ4B32AVX(SB), NOSPLIT, $0-44
	PROLOGUE
	VMOVDQU hishift<>(SB), Y10

q4b32loop:
	HEADER
	VBROADCASTI128 4(SI), Y2
	VPSRLVQ        Y10, Y2, Y2
	VPAND          Y14, Y2, Y2
	STEP
	ADDQ           $20, SI
	DECQ           CX
	JNZ            q4b32loop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotQ4B64AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 36-byte blocks: header, 32 bytes of nibbles (byte j: levels j, j+32).
TEXT ·dotQ4B64AVX(SB), NOSPLIT, $0-44
	PROLOGUE

q4b64loop:
	HEADER
	VMOVDQU 4(SI), Y9
	VPAND   Y14, Y9, Y2
	STEP
	VPSRLW  $4, Y9, Y2
	VPAND   Y14, Y2, Y2
	STEP
	ADDQ    $36, SI
	DECQ    CX
	JNZ     q4b64loop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// Q3HPAIRS turns the 16 pair codes c (bytes of X2) into 32 levels in the
// bytes of Y2: the word c becomes c/11 | (c%11)<<8.
#define Q3HPAIRS \
	VPMOVZXBW X2, Y2 \
	VPMULHUW  Y12, Y2, Y3 \
	VPSLLW    $8, Y2, Y2 \
	VPMULLW   Y13, Y3, Y3 \
	VPSUBW    Y3, Y2, Y2

// func dotQ3HAVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 32-byte blocks of 32 seven-bit pair codes: header, 16 bytes of low
// nibbles (byte j: codes j, j+16), 8 bytes of 2-bit fields (byte j: codes
// j, j+8, j+16, j+24), 4 bytes of top bits (byte j bit k: code j+4k).
TEXT ·dotQ3HAVX(SB), NOSPLIT, $0-44
	PROLOGUE
	VMOVDQU div11<>(SB), Y12
	VMOVDQU mul2815<>(SB), Y13
	VMOVDQU mask30<>(SB), X11
	VMOVDQU mask40<>(SB), X10

q3hloop:
	HEADER
	VMOVDQU      4(SI), X9
	VPBROADCASTQ 20(SI), X8
	VPBROADCASTD 28(SI), X5

	// codes 0..15: levels 0..31
	VPAND   X14, X9, X2
	VPSLLVQ q3hml<>(SB), X8, X3
	VPAND   X11, X3, X3
	VPOR    X3, X2, X2
	VPSLLVD q3hhl0<>(SB), X5, X3
	VPAND   X10, X3, X3
	VPOR    X3, X2, X2
	Q3HPAIRS
	STEP

	// codes 16..31: levels 32..63 (X5 was clobbered by STEP)
	VPBROADCASTD 28(SI), X5
	VPSRLW       $4, X9, X2
	VPAND        X14, X2, X2
	VPSRLVQ      q3hmr<>(SB), X8, X3
	VPAND        X11, X3, X3
	VPOR         X3, X2, X2
	VPSLLVD      q3hhl1<>(SB), X5, X3
	VPSRLVD      q3hhr1<>(SB), X3, X3
	VPAND        X10, X3, X3
	VPOR         X3, X2, X2
	Q3HPAIRS
	STEP
	ADDQ         $32, SI
	DECQ         CX
	JNZ          q3hloop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotQ3AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 16-byte blocks: header, 8 bytes of low 2-bit fields (byte j: levels j,
// j+8, j+16, j+24), 4 bytes of high bits (byte j bit k: level j+4k).
TEXT ·dotQ3AVX(SB), NOSPLIT, $0-44
	PROLOGUE
	VMOVDQU shr2<>(SB), Y10
	VMOVDQU mask03<>(SB), Y11
	VMOVDQU shr8d<>(SB), Y12
	VMOVDQU mask01<>(SB), Y13

q3loop:
	HEADER
	VPBROADCASTQ 4(SI), Y2
	VPSRLVQ      Y10, Y2, Y2
	VPAND        Y11, Y2, Y2
	VPBROADCASTD 12(SI), Y3
	VPSRLVD      Y12, Y3, Y3
	VPAND        Y13, Y3, Y3
	VPSLLW       $2, Y3, Y3
	VPOR         Y3, Y2, Y2
	STEP
	ADDQ         $16, SI
	DECQ         CX
	JNZ          q3loop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotQ2AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32
//
// 12-byte blocks: header, 8 bytes of 2-bit levels laid out as Q3's low part.
TEXT ·dotQ2AVX(SB), NOSPLIT, $0-44
	PROLOGUE
	VMOVDQU shr2<>(SB), Y10
	VMOVDQU mask03<>(SB), Y11

q2loop:
	HEADER
	VPBROADCASTQ 4(SI), Y2
	VPSRLVQ      Y10, Y2, Y2
	VPAND        Y11, Y2, Y2
	STEP
	ADDQ         $12, SI
	DECQ         CX
	JNZ          q2loop

	FINISH
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET
