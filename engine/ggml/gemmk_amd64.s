//go:build amd64 && !noasm

#include "textflag.h"

// Matrix kernels for Q4_K and Q6_K weights against Q8_K activations (read
// in place: d float32, 256 int8 values, 16 int16 sums per super-block):
// 4-row strips for decode (4 weight rows by one column) and 1×8 tiles for
// prompt batches (one weight row by 8 columns). Every (row, column) pair
// runs the chain of the single-row kernels dotQ4_KAVX / dotQ6_KAVX
// (kernels_amd64.s): per super-block, 8 int32 lanes of scale·Σ(4
// consecutive products) over the sub-blocks (exact), converted and
// accumulated with one fused multiply-add by d·yd; Q4_K's mins in 4 lanes
// by dmin·yd; at the end hsum_float_8 of the lanes minus (m0+m2)+(m1+m3).
// So strips, tiles and single rows agree bit for bit, and with the lane
// twins of gemm_go.go. AVX2 + FMA, and AVX-512 VL/BW/VNNI for the strips
// q4kx4V / q6kx4V at the end (EVEX-encoded, 256-bit); every function ends
// with VZEROUPPER and uses no legacy-SSE instruction.
//
// Signature (xs: bytes between activation columns; ldo: bytes between
// output columns, tiles only; the strips write out[0:4]):
//
//	func k(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// but for the interleaved layout's: q4kx4I and q6kx4I (w, x, nb, tab,
// out: one group of 4 rows), and q4kt18, which takes the step from one of
// the row's super-blocks to the next as a last argument (q6kt18 takes it
// as rs).

DATA k4idxA<>+0(SB)/8, $0x0f0e0d0c07060504
DATA k4idxA<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA k4idxA<>+16(SB)/8, $0x0f0e0d0c07060504
DATA k4idxA<>+24(SB)/8, $0x0f0e0d0c0b0a0908
GLOBL k4idxA<>(SB), RODATA|NOPTR, $32

DATA k4idxB<>+0(SB)/8, $0x0706050480808080
DATA k4idxB<>+8(SB)/8, $0x0b0a090880808080
DATA k4idxB<>+16(SB)/8, $0x0706050480808080
DATA k4idxB<>+24(SB)/8, $0x0b0a090880808080
GLOBL k4idxB<>(SB), RODATA|NOPTR, $32

DATA k4m1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA k4m1<>+8(SB)/8, $0x000000003f3f3f3f
DATA k4m1<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA k4m1<>+24(SB)/8, $0x000000003f3f3f3f
GLOBL k4m1<>(SB), RODATA|NOPTR, $32

DATA k4m2<>+0(SB)/8, $0x0000000000000000
DATA k4m2<>+8(SB)/8, $0x0f0f0f0f00000000
DATA k4m2<>+16(SB)/8, $0x0000000000000000
DATA k4m2<>+24(SB)/8, $0x0f0f0f0f00000000
GLOBL k4m2<>(SB), RODATA|NOPTR, $32

DATA k4m3<>+0(SB)/8, $0x3030303000000000
DATA k4m3<>+8(SB)/8, $0x3030303000000000
DATA k4m3<>+16(SB)/8, $0x3030303000000000
DATA k4m3<>+24(SB)/8, $0x3030303000000000
GLOBL k4m3<>(SB), RODATA|NOPTR, $32

DATA kshuf<>+0(SB)/8, $0x0100010001000100
DATA kshuf<>+8(SB)/8, $0x0100010001000100
DATA kshuf<>+16(SB)/8, $0x0100010001000100
DATA kshuf<>+24(SB)/8, $0x0100010001000100
DATA kshuf<>+32(SB)/8, $0x0302030203020302
DATA kshuf<>+40(SB)/8, $0x0302030203020302
DATA kshuf<>+48(SB)/8, $0x0302030203020302
DATA kshuf<>+56(SB)/8, $0x0302030203020302
DATA kshuf<>+64(SB)/8, $0x0504050405040504
DATA kshuf<>+72(SB)/8, $0x0504050405040504
DATA kshuf<>+80(SB)/8, $0x0504050405040504
DATA kshuf<>+88(SB)/8, $0x0504050405040504
DATA kshuf<>+96(SB)/8, $0x0706070607060706
DATA kshuf<>+104(SB)/8, $0x0706070607060706
DATA kshuf<>+112(SB)/8, $0x0706070607060706
DATA kshuf<>+120(SB)/8, $0x0706070607060706
DATA kshuf<>+128(SB)/8, $0x0908090809080908
DATA kshuf<>+136(SB)/8, $0x0908090809080908
DATA kshuf<>+144(SB)/8, $0x0908090809080908
DATA kshuf<>+152(SB)/8, $0x0908090809080908
DATA kshuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kshuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kshuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kshuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kshuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kshuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kshuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kshuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kshuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kshuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kshuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kshuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kshuf<>(SB), RODATA|NOPTR, $256

DATA q6w<>+0(SB)/8, $0x0100010001000100
DATA q6w<>+8(SB)/8, $0x0100010001000100
DATA q6w<>+16(SB)/8, $0x0302030203020302
DATA q6w<>+24(SB)/8, $0x0302030203020302
DATA q6w<>+32(SB)/8, $0x0504050405040504
DATA q6w<>+40(SB)/8, $0x0504050405040504
DATA q6w<>+48(SB)/8, $0x0706070607060706
DATA q6w<>+56(SB)/8, $0x0706070607060706
DATA q6w<>+64(SB)/8, $0x0908090809080908
DATA q6w<>+72(SB)/8, $0x0908090809080908
DATA q6w<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6w<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6w<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6w<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6w<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q6w<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q6w<>(SB), RODATA|NOPTR, $128

DATA knib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA knib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA knib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA knib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL knib<>(SB), RODATA|NOPTR, $32

DATA k30<>+0(SB)/8, $0x3030303030303030
DATA k30<>+8(SB)/8, $0x3030303030303030
DATA k30<>+16(SB)/8, $0x3030303030303030
DATA k30<>+24(SB)/8, $0x3030303030303030
GLOBL k30<>(SB), RODATA|NOPTR, $32

DATA k32<>+0(SB)/8, $0x2020202020202020
DATA k32<>+8(SB)/8, $0x2020202020202020
DATA k32<>+16(SB)/8, $0x2020202020202020
DATA k32<>+24(SB)/8, $0x2020202020202020
GLOBL k32<>(SB), RODATA|NOPTR, $32

// kq6mask<>+16*g gathers int8 scales 2g (8 times) then 2g+1 (8 times).
DATA kq6mask<>+0(SB)/8, $0x0000000000000000
DATA kq6mask<>+8(SB)/8, $0x0101010101010101
DATA kq6mask<>+16(SB)/8, $0x0202020202020202
DATA kq6mask<>+24(SB)/8, $0x0303030303030303
DATA kq6mask<>+32(SB)/8, $0x0404040404040404
DATA kq6mask<>+40(SB)/8, $0x0505050505050505
DATA kq6mask<>+48(SB)/8, $0x0606060606060606
DATA kq6mask<>+56(SB)/8, $0x0707070707070707
DATA kq6mask<>+64(SB)/8, $0x0808080808080808
DATA kq6mask<>+72(SB)/8, $0x0909090909090909
DATA kq6mask<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kq6mask<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA kq6mask<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA kq6mask<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA kq6mask<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA kq6mask<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kq6mask<>(SB), RODATA|NOPTR, $128

// KHSUM4 reduces the 4 floats of x into x[0] as (x0+x2)+(x1+x3); t scratch.
#define KHSUM4(x, t) \
	VMOVHLPS  x, x, t \
	VADDPS    t, x, x \
	VMOVSHDUP x, t \
	VADDSS    t, x, x

// KHSUM8 reduces the 8 floats of Y register acc (X register xacc) into
// xacc[0] as ggml's hsum_float_8; t scratch.
#define KHSUM8(acc, xacc, t) \
	VEXTRACTF128 $1, acc, t \
	VADDPS       t, xacc, xacc \
	KHSUM4(xacc, t)

// K4UNPACK unpacks the 6-bit scales and mins of the Q4_K blocks whose first
// 16 bytes are in the halves of src into bytes [sc0..7, m0..7] per half
// (as ggml's get_scale_min_k4); t is scratch.
#define K4UNPACK(src, dst, t) \
	VPSHUFB k4idxA<>(SB), src, t \
	VPAND   k4m1<>(SB), t, dst \
	VPSRLW  $4, t, t \
	VPAND   k4m2<>(SB), t, t \
	VPOR    t, dst, dst \
	VPSHUFB k4idxB<>(SB), src, t \
	VPSRLW  $2, t, t \
	VPAND   k4m3<>(SB), t, t \
	VPOR    t, dst, dst

// K4SUB (strip) sets dst to the int32 lanes of the 64 elements of chunk
// qoff/yoff of row wp: nibbles times activations, pair sums times the
// int16 scales s0, s0+1 (kshuf masks m0, m1) of sc. Y14 nibble mask; Y6-Y8
// scratch. The 4 chunks are summed as a tree (the lanes are exact int32
// sums, so the order does not change them) to keep the dependency chain
// short.
#define K4SUB(wp, qoff, yoff, m0, m1, sc, dst) \
	VMOVDQU    qoff(wp), Y6 \
	VPSRLW     $4, Y6, Y7 \
	VPAND      Y14, Y6, Y6 \
	VPAND      Y14, Y7, Y7 \
	VPMADDUBSW yoff(DI), Y6, Y6 \
	VPMADDUBSW yoff+32(DI), Y7, Y7 \
	VPSHUFB    m0, sc, Y8 \
	VPMADDWD   Y8, Y6, Y6 \
	VPSHUFB    m1, sc, Y8 \
	VPMADDWD   Y8, Y7, Y7 \
	VPADDD     Y6, Y7, dst

// K4ROW accumulates row wp's super-block into acc: Y9 = Σ lanes, then
// acc += float(Y9)·(d·yd); sc holds its scales, Y13 yd. Y12 scratch.
#define K4ROW(wp, sc, acc) \
	K4SUB(wp, 16, 4, kshuf<>+0(SB), kshuf<>+32(SB), sc, Y9) \
	K4SUB(wp, 48, 68, kshuf<>+64(SB), kshuf<>+96(SB), sc, Y12) \
	VPADDD       Y12, Y9, Y9 \
	K4SUB(wp, 80, 132, kshuf<>+128(SB), kshuf<>+160(SB), sc, Y12) \
	K4SUB(wp, 112, 196, kshuf<>+192(SB), kshuf<>+224(SB), sc, Y6) \
	VPADDD       Y6, Y12, Y12 \
	VPADDD       Y12, Y9, Y9 \
	MOVWLZX      (wp), AX \
	VBROADCASTSS (R8)(AX*4), Y6 \
	VMULPS       Y13, Y6, Y6 \
	VCVTDQ2PS    Y9, Y9 \
	VFMADD231PS  Y6, Y9, acc

// K4PAIR runs rows ra and rb (accumulators acca, accb; their mins lanes in
// the halves of macc). Y15 holds the activation's pair sums of bsums in
// both halves, Y13 yd.
#define K4PAIR(ra, rb, acca, accb, macc) \
	VMOVDQU      (ra), X6 \
	VINSERTI128  $1, (rb), Y6, Y6 \
	K4UNPACK(Y6, Y8, Y7) \
	VPXOR        Y7, Y7, Y7 \
	VPUNPCKLBW   Y7, Y8, Y6 \
	VPUNPCKHBW   Y7, Y8, Y12 \
	VPERMQ       $0x44, Y6, Y11 \
	VPERMQ       $0xee, Y6, Y10 \
	VPMADDWD     Y15, Y12, Y12 \
	VCVTDQ2PS    Y12, Y12 \
	MOVWLZX      2(ra), AX \
	VBROADCASTSS (R8)(AX*4), Y6 \
	MOVWLZX      2(rb), AX \
	VBROADCASTSS (R8)(AX*4), Y7 \
	VBLENDPS     $0xf0, Y7, Y6, Y6 \
	VMULPS       Y13, Y6, Y6 \
	VFMADD231PS  Y6, Y12, macc \
	K4ROW(ra, Y11, acca) \
	K4ROW(rb, Y10, accb)

// K4OUT stores row acc's value minus its mins lanes (xm) to dst.
#define K4OUT(acc, xacc, xm, dst) \
	KHSUM8(acc, xacc, X6) \
	KHSUM4(xm, X6) \
	VSUBSS xm, xacc, xacc \
	VMOVSS xacc, dst

// K4INIT4, K4ROWS4 and K4OUT4 are the parts q4kx4 and q4kx4I share: the
// constants and accumulators, one super-block of the four rows at SI, BX,
// R10 and R11 against the column at DI, and the four sums into out[0:4]
// at DX.
#define K4INIT4 \
	VMOVDQU knib<>(SB), Y14 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3 \
	VXORPS  Y4, Y4, Y4 \
	VXORPS  Y5, Y5, Y5

#define K4ROWS4 \
	VBROADCASTSS (DI), Y13 \
	VMOVDQU      260(DI), X15 \
	VPHADDW      276(DI), X15, X15 \
	VPERMQ       $0x44, Y15, Y15 \
	K4PAIR(SI, BX, Y0, Y1, Y4) \
	K4PAIR(R10, R11, Y2, Y3, Y5)

#define K4OUT4 \
	VEXTRACTF128 $1, Y4, X10 \
	VEXTRACTF128 $1, Y5, X11 \
	K4OUT(Y0, X0, X4, 0(DX)) \
	K4OUT(Y1, X1, X10, 4(DX)) \
	K4OUT(Y2, X2, X5, 8(DX)) \
	K4OUT(Y3, X3, X11, 12(DX))

// func q4kx4(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// out[0:4] = the 4 rows at w (rs bytes apart) against the column at x.
TEXT ·q4kx4(SB), NOSPLIT, $0-64
	MOVQ    w+0(FP), SI
	MOVQ    rs+8(FP), R9
	MOVQ    x+16(FP), DI
	MOVQ    nb+32(FP), CX
	MOVQ    tab+40(FP), R8
	LEAQ    (SI)(R9*1), BX
	LEAQ    (BX)(R9*1), R10
	LEAQ    (R10)(R9*1), R11
	K4INIT4

q4kx4loop:
	PREFETCHT0   0(SI)(R9*4)
	PREFETCHT0   64(SI)(R9*4)
	PREFETCHT0   128(SI)(R9*4)
	PREFETCHT0   0(BX)(R9*8)
	PREFETCHT0   64(BX)(R9*8)
	PREFETCHT0   128(BX)(R9*8)
	PREFETCHT0   0(R10)(R9*8)
	PREFETCHT0   64(R10)(R9*8)
	PREFETCHT0   128(R10)(R9*8)
	PREFETCHT0   0(R11)(R9*8)
	PREFETCHT0   64(R11)(R9*8)
	PREFETCHT0   128(R11)(R9*8)
	K4ROWS4
	ADDQ         $144, SI
	ADDQ         $144, BX
	ADDQ         $144, R10
	ADDQ         $144, R11
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q4kx4loop

	MOVQ         out+48(FP), DX
	K4OUT4
	VZEROUPPER
	RET

// func q4kx4I(w *byte, x *byte, nb int, tab *float32, out *float32)
//
// out[0:4] = the 4 rows of the interleaved group at w (Rows4: row i's
// super-block k at (4k+i)·144) against the column at x: q4kx4's
// arithmetic, so its bits, on one sequential stream, prefetched
// kAheadK bytes ahead (9 lines a step of 576 bytes).
TEXT ·q4kx4I(SB), NOSPLIT, $0-40
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	LEAQ    144(SI), BX
	LEAQ    288(SI), R10
	LEAQ    432(SI), R11
	MOVQ    ·kAheadK(SB), R12
	ADDQ    SI, R12
	K4INIT4

q4kx4Iloop:
	PREFETCHT0   0(R12)
	PREFETCHT0   64(R12)
	PREFETCHT0   128(R12)
	PREFETCHT0   192(R12)
	PREFETCHT0   256(R12)
	PREFETCHT0   320(R12)
	PREFETCHT0   384(R12)
	PREFETCHT0   448(R12)
	PREFETCHT0   512(R12)
	K4ROWS4
	ADDQ         $576, SI
	ADDQ         $576, BX
	ADDQ         $576, R10
	ADDQ         $576, R11
	ADDQ         $576, R12
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q4kx4Iloop

	MOVQ         out+32(FP), DX
	K4OUT4
	VZEROUPPER
	RET

// The tiles keep each column's float accumulators in the frame: 8 lanes
// at 32·c; the Q4_K mins lanes of column pair p (4 lanes per column) at
// 256+32·p, the row's int16 mins (both halves) at 384. Column c's operands:
// off col c (DI, BX = DI + 4·xs; R13 xs, R14 3·xs).
#define C0 (DI)
#define C1 (DI)(R13*1)
#define C2 (DI)(R13*2)
#define C3 (DI)(R14*1)
#define C4 (BX)
#define C5 (BX)(R13*1)
#define C6 (BX)(R13*2)
#define C7 (BX)(R14*1)

// K4TPAIR adds chunk yoff of a column (nibbles Y8, Y9; scales Y10, Y11)
// into acc; K4TFIRST sets it. Y12, Y13 scratch.
#define K4TPAIR(yoff, col, acc) \
	VPMADDUBSW yoff col, Y8, Y12 \
	VPMADDWD   Y10, Y12, Y12 \
	VPADDD     Y12, acc, acc \
	VPMADDUBSW yoff+32 col, Y9, Y13 \
	VPMADDWD   Y11, Y13, Y13 \
	VPADDD     Y13, acc, acc

#define K4TFIRST(yoff, col, acc) \
	VPMADDUBSW yoff col, Y8, Y12 \
	VPMADDWD   Y10, Y12, acc \
	VPMADDUBSW yoff+32 col, Y9, Y13 \
	VPMADDWD   Y11, Y13, Y13 \
	VPADDD     Y13, acc, acc

// K4TCHUNK splits the 32 nibble bytes at qoff(SI) and picks the scales of
// sub-blocks m0, m1 from Y15, then runs pair over the 8 columns.
#define K4TCHUNK(pair, qoff, yoff, m0, m1) \
	VMOVDQU qoff(SI), Y8 \
	VPSRLW  $4, Y8, Y9 \
	VPAND   Y14, Y8, Y8 \
	VPAND   Y14, Y9, Y9 \
	VPSHUFB m0, Y15, Y10 \
	VPSHUFB m1, Y15, Y11 \
	pair(yoff, C0, Y0) \
	pair(yoff, C1, Y1) \
	pair(yoff, C2, Y2) \
	pair(yoff, C3, Y3) \
	pair(yoff, C4, Y4) \
	pair(yoff, C5, Y5) \
	pair(yoff, C6, Y6) \
	pair(yoff, C7, Y7)

// K4TMAIN folds column col's lanes (acc) into its frame accumulator; d
// in Y8.
#define K4TMAIN(col, acc, c) \
	VBROADCASTSS 0 col, Y11 \
	VMULPS       Y11, Y8, Y12 \
	VCVTDQ2PS    acc, acc \
	VFMADD213PS  (32*c)(SP), Y12, acc \
	VMOVUPS      acc, (32*c)(SP)

// K4TMINS folds the mins lanes of column pair p: the row's int16 mins in
// both halves of Y9 times the pairs' bsum sums at 64·p(R12), by dmin (Y10)
// times the pairs' d_x at 64·p+32(R12) (see Act.fillK).
#define K4TMINS(p) \
	VMULPS      64*p+32(R12), Y10, Y12 \
	VPMADDWD    64*p(R12), Y9, Y13 \
	VCVTDQ2PS   Y13, Y13 \
	VFMADD213PS (256+32*p)(SP), Y12, Y13 \
	VMOVUPS     Y13, (256+32*p)(SP)

// K4TOUT stores column c's value (mins lanes at moff) to (DX) and steps
// DX to the next column.
#define K4TOUT(c, moff) \
	VMOVUPS (32*c)(SP), Y0 \
	KHSUM8(Y0, X0, X2) \
	VMOVUPS moff(SP), X1 \
	KHSUM4(X1, X2) \
	VSUBSS  X1, X0, X0 \
	VMOVSS  X0, (DX) \
	ADDQ    R12, DX

// func q4kt18(w *byte, aux *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int, step int)
//
// out[c·ldo] = the row at w against the 8 columns at x (xs bytes apart);
// aux is the columns' part of Act.kaux; step is the bytes from one of the
// row's super-blocks to the next: 144 row-major, 576 in the interleaved
// layout (q4kRows4).
TEXT ·q4kt18(SB), $416-72
	MOVQ    step+64(FP), R9
	MOVQ    w+0(FP), SI
	MOVQ    aux+8(FP), R12
	MOVQ    x+16(FP), DI
	MOVQ    xs+24(FP), R13
	MOVQ    nb+32(FP), CX
	MOVQ    tab+40(FP), R8
	LEAQ    (R13)(R13*2), R14
	LEAQ    (DI)(R13*4), BX
	VMOVDQU knib<>(SB), Y14
	VXORPS  Y0, Y0, Y0
	MOVQ    $0, AX

q4kt18zero:
	VMOVUPS Y0, (SP)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, $384
	JLT     q4kt18zero

q4kt18loop:
	PREFETCHT0   (SI)(R9*4)
	PREFETCHT0   64(SI)(R9*4)
	PREFETCHT0   128(SI)(R9*4)
	VMOVDQU      (SI), X8
	K4UNPACK(X8, X9, X10)
	VPMOVZXBW    X9, Y9
	VPERMQ       $0x44, Y9, Y15
	VPERMQ       $0xee, Y9, Y9
	VMOVDQU      Y9, 384(SP)

	K4TCHUNK(K4TFIRST, 16, 4, kshuf<>+0(SB), kshuf<>+32(SB))
	K4TCHUNK(K4TPAIR, 48, 68, kshuf<>+64(SB), kshuf<>+96(SB))
	K4TCHUNK(K4TPAIR, 80, 132, kshuf<>+128(SB), kshuf<>+160(SB))
	K4TCHUNK(K4TPAIR, 112, 196, kshuf<>+192(SB), kshuf<>+224(SB))

	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	MOVWLZX      2(SI), AX
	VBROADCASTSS (R8)(AX*4), Y10
	VMOVDQU      384(SP), Y9
	K4TMAIN(C0, Y0, 0)
	K4TMAIN(C1, Y1, 1)
	K4TMAIN(C2, Y2, 2)
	K4TMAIN(C3, Y3, 3)
	K4TMAIN(C4, Y4, 4)
	K4TMAIN(C5, Y5, 5)
	K4TMAIN(C6, Y6, 6)
	K4TMAIN(C7, Y7, 7)
	K4TMINS(0)
	K4TMINS(1)
	K4TMINS(2)
	K4TMINS(3)

	ADDQ R9, SI
	ADDQ $256, R12
	ADDQ $292, DI
	ADDQ $292, BX
	DECQ CX
	JNZ  q4kt18loop

	MOVQ out+48(FP), DX
	MOVQ ldo+56(FP), R12
	K4TOUT(0, 256)
	K4TOUT(1, 272)
	K4TOUT(2, 288)
	K4TOUT(3, 304)
	K4TOUT(4, 320)
	K4TOUT(5, 336)
	K4TOUT(6, 352)
	K4TOUT(7, 368)
	VZEROUPPER
	RET

// Q6Q (strip) adds to the int32 lanes of Y9 the 32 elements of the 6-bit
// values in q (0..63) against yoff(DI), minus 32·y (Y15 bytes of 32), the
// int16 pair sums times the scales picked from sc by q6w mask m.
#define Q6Q(q, yoff, m, sc) \
	VPMADDUBSW yoff(DI), Y15, Y8 \
	VPMADDUBSW yoff(DI), q, q \
	VPSUBW     Y8, q, q \
	VPSHUFB    m, sc, Y12 \
	VPMADDWD   Y12, q, q \
	VPADDD     q, Y9, Y9

// Q6HALF (strip) runs the 128 elements of half ql/qh of row wp; sc holds
// the half's 8 scales as int16 in both halves. Y13 mask 0x30, Y14 0x0f.
#define Q6HALF(wp, qloff, qhoff, yoff, sc) \
	VMOVDQU qloff(wp), Y4 \
	VMOVDQU qloff+32(wp), Y5 \
	VMOVDQU qhoff(wp), Y6 \
	VPAND   Y14, Y4, Y7 \
	VPSLLW  $4, Y6, Y8 \
	VPAND   Y13, Y8, Y8 \
	VPOR    Y8, Y7, Y7 \
	Q6Q(Y7, yoff, q6w<>+0(SB), sc) \
	VPAND   Y14, Y5, Y7 \
	VPSLLW  $2, Y6, Y8 \
	VPAND   Y13, Y8, Y8 \
	VPOR    Y8, Y7, Y7 \
	Q6Q(Y7, yoff+32, q6w<>+32(SB), sc) \
	VPSRLW  $4, Y4, Y7 \
	VPAND   Y14, Y7, Y7 \
	VPAND   Y13, Y6, Y8 \
	VPOR    Y8, Y7, Y7 \
	Q6Q(Y7, yoff+64, q6w<>+64(SB), sc) \
	VPSRLW  $4, Y5, Y7 \
	VPAND   Y14, Y7, Y7 \
	VPSRLW  $2, Y6, Y8 \
	VPAND   Y13, Y8, Y8 \
	VPOR    Y8, Y7, Y7 \
	Q6Q(Y7, yoff+96, q6w<>+96(SB), sc)

// Q6ROW accumulates row wp's super-block into acc.
#define Q6ROW(wp, acc) \
	VPMOVSXBW    192(wp), Y11 \
	VPERMQ       $0x44, Y11, Y10 \
	VPERMQ       $0xee, Y11, Y11 \
	VPXOR        Y9, Y9, Y9 \
	Q6HALF(wp, 0, 128, 4, Y10) \
	Q6HALF(wp, 64, 160, 132, Y11) \
	MOVWLZX      208(wp), AX \
	VBROADCASTSS (R8)(AX*4), Y8 \
	VBROADCASTSS (DI), Y12 \
	VMULPS       Y12, Y8, Y8 \
	VCVTDQ2PS    Y9, Y9 \
	VFMADD231PS  Y8, Y9, acc

// Q6PFS prefetches the super-block four steps (R9) ahead in the row: 840
// bytes row-major, 3360 in the interleaved layout (a fixed 512 bytes, as
// before, would land in the group's other rows). q4kt18 does the same.
#define Q6PFS(wp) \
	PREFETCHT0 (wp)(R9*4) \
	PREFETCHT0 64(wp)(R9*4) \
	PREFETCHT0 128(wp)(R9*4) \
	PREFETCHT0 192(wp)(R9*4)

// Q6INIT4, Q6ROWS4 and Q6OUT4 are the parts q6kx4 and q6kx4I share: the
// constants and accumulators, one super-block of the four rows at SI, BX,
// R10 and R11, and the four sums into out[0:4] at DX.
#define Q6INIT4 \
	VMOVDQU k30<>(SB), Y13 \
	VMOVDQU knib<>(SB), Y14 \
	VMOVDQU k32<>(SB), Y15 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3

#define Q6ROWS4 \
	Q6ROW(SI, Y0) \
	Q6ROW(BX, Y1) \
	Q6ROW(R10, Y2) \
	Q6ROW(R11, Y3)

#define Q6OUT4 \
	KHSUM8(Y0, X0, X6) \
	VMOVSS X0, 0(DX) \
	KHSUM8(Y1, X1, X6) \
	VMOVSS X1, 4(DX) \
	KHSUM8(Y2, X2, X6) \
	VMOVSS X2, 8(DX) \
	KHSUM8(Y3, X3, X6) \
	VMOVSS X3, 12(DX)

// Q6PFN prefetches the super-block 8 rows (two strips) below wp: the
// strips' rows are short and interleaved, so prefetching ahead within the
// row leaves each strip's row starts to demand misses.
#define Q6PFN(wp) \
	PREFETCHT0 0(wp)(R9*8) \
	PREFETCHT0 64(wp)(R9*8) \
	PREFETCHT0 128(wp)(R9*8) \
	PREFETCHT0 192(wp)(R9*8)

// func q6kx4(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// out[0:4] = the 4 rows at w (rs bytes apart) against the column at x.
TEXT ·q6kx4(SB), NOSPLIT, $0-64
	MOVQ    w+0(FP), SI
	MOVQ    rs+8(FP), R9
	MOVQ    x+16(FP), DI
	MOVQ    nb+32(FP), CX
	MOVQ    tab+40(FP), R8
	LEAQ    (SI)(R9*1), BX
	LEAQ    (BX)(R9*1), R10
	LEAQ    (R10)(R9*1), R11
	Q6INIT4

q6kx4loop:
	Q6PFN(SI)
	Q6PFN(BX)
	Q6PFN(R10)
	Q6PFN(R11)
	Q6ROWS4
	ADDQ $210, SI
	ADDQ $210, BX
	ADDQ $210, R10
	ADDQ $210, R11
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kx4loop

	MOVQ   out+48(FP), DX
	Q6OUT4
	VZEROUPPER
	RET

// Q6PFI prefetches the 14 lines at R12 (one super-block step of an
// interleaved group, 840 bytes, kAheadK ahead of SI).
#define Q6PFI \
	PREFETCHT0 0(R12) \
	PREFETCHT0 64(R12) \
	PREFETCHT0 128(R12) \
	PREFETCHT0 192(R12) \
	PREFETCHT0 256(R12) \
	PREFETCHT0 320(R12) \
	PREFETCHT0 384(R12) \
	PREFETCHT0 448(R12) \
	PREFETCHT0 512(R12) \
	PREFETCHT0 576(R12) \
	PREFETCHT0 640(R12) \
	PREFETCHT0 704(R12) \
	PREFETCHT0 768(R12) \
	PREFETCHT0 832(R12)

// func q6kx4I(w *byte, x *byte, nb int, tab *float32, out *float32)
//
// out[0:4] = the 4 rows of the interleaved group at w (Rows4: row i's
// super-block k at (4k+i)·210) against the column at x: q6kx4's
// arithmetic, so its bits, on one sequential stream, prefetched
// kAheadK bytes ahead.
TEXT ·q6kx4I(SB), NOSPLIT, $0-40
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	LEAQ    210(SI), BX
	LEAQ    420(SI), R10
	LEAQ    630(SI), R11
	MOVQ    ·kAheadK(SB), R12
	ADDQ    SI, R12
	Q6INIT4

q6kx4Iloop:
	Q6PFI
	Q6ROWS4
	ADDQ $840, SI
	ADDQ $840, BX
	ADDQ $840, R10
	ADDQ $840, R11
	ADDQ $840, R12
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kx4Iloop

	MOVQ   out+32(FP), DX
	Q6OUT4
	VZEROUPPER
	RET

// Q6TQ0..Q6TQ3 decode chunk i of the half at qloff/qhoff(SI) into Y8
// (6-bit values); Y10 scratch.
#define Q6TQ0(qloff, qhoff) \
	VPAND   qloff(SI), Y14, Y8 \
	VMOVDQU qhoff(SI), Y10 \
	VPSLLW  $4, Y10, Y10 \
	VPAND   Y13, Y10, Y10 \
	VPOR    Y10, Y8, Y8

#define Q6TQ1(qloff, qhoff) \
	VPAND   qloff+32(SI), Y14, Y8 \
	VMOVDQU qhoff(SI), Y10 \
	VPSLLW  $2, Y10, Y10 \
	VPAND   Y13, Y10, Y10 \
	VPOR    Y10, Y8, Y8

#define Q6TQ2(qloff, qhoff) \
	VMOVDQU qloff(SI), Y8 \
	VPSRLW  $4, Y8, Y8 \
	VPAND   Y14, Y8, Y8 \
	VPAND   qhoff(SI), Y13, Y10 \
	VPOR    Y10, Y8, Y8

#define Q6TQ3(qloff, qhoff) \
	VMOVDQU qloff+32(SI), Y8 \
	VPSRLW  $4, Y8, Y8 \
	VPAND   Y14, Y8, Y8 \
	VMOVDQU qhoff(SI), Y10 \
	VPSRLW  $2, Y10, Y10 \
	VPAND   Y13, Y10, Y10 \
	VPOR    Y10, Y8, Y8

// Q6TPAIR adds chunk yoff of a column (values Y8, scales Y9) into acc;
// Q6TFIRST sets it. Y10, Y12 scratch.
#define Q6TPAIR(yoff, col, acc) \
	VPMADDUBSW yoff col, Y15, Y10 \
	VPMADDUBSW yoff col, Y8, Y12 \
	VPSUBW     Y10, Y12, Y12 \
	VPMADDWD   Y9, Y12, Y12 \
	VPADDD     Y12, acc, acc

#define Q6TFIRST(yoff, col, acc) \
	VPMADDUBSW yoff col, Y15, Y10 \
	VPMADDUBSW yoff col, Y8, Y12 \
	VPSUBW     Y10, Y12, Y12 \
	VPMADDWD   Y9, Y12, acc

// Q6TCHUNK decodes chunk g (dec, at qloff/qhoff), picks its scales from
// X11 and runs pair over the 8 columns.
#define Q6TCHUNK(pair, dec, qloff, qhoff, yoff, g) \
	dec(qloff, qhoff) \
	VPSHUFB   kq6mask<>+16*g(SB), X11, X9 \
	VPMOVSXBW X9, Y9 \
	pair(yoff, C0, Y0) \
	pair(yoff, C1, Y1) \
	pair(yoff, C2, Y2) \
	pair(yoff, C3, Y3) \
	pair(yoff, C4, Y4) \
	pair(yoff, C5, Y5) \
	pair(yoff, C6, Y6) \
	pair(yoff, C7, Y7)

// Q6TFLOAT folds column col's lanes (acc) into its frame accumulator; d
// in Y8.
#define Q6TFLOAT(col, acc, c) \
	VBROADCASTSS 0 col, Y10 \
	VMULPS       Y10, Y8, Y12 \
	VCVTDQ2PS    acc, acc \
	VFMADD213PS  (32*c)(SP), Y12, acc \
	VMOVUPS      acc, (32*c)(SP)

#define Q6TOUT(c) \
	VMOVUPS (32*c)(SP), Y0 \
	KHSUM8(Y0, X0, X2) \
	VMOVSS  X0, (DX) \
	ADDQ    R12, DX

// func q6kt18(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// out[c·ldo] = the row at w against the 8 columns at x (xs bytes apart);
// rs is the step from one of the row's super-blocks to the next: 210
// row-major, 840 in the interleaved layout (kTiles.rows4).
TEXT ·q6kt18(SB), $256-64
	MOVQ    w+0(FP), SI
	MOVQ    rs+8(FP), R9
	MOVQ    x+16(FP), DI
	MOVQ    xs+24(FP), R13
	MOVQ    nb+32(FP), CX
	MOVQ    tab+40(FP), R8
	LEAQ    (R13)(R13*2), R14
	LEAQ    (DI)(R13*4), BX
	VMOVDQU k30<>(SB), Y13
	VMOVDQU knib<>(SB), Y14
	VMOVDQU k32<>(SB), Y15
	VXORPS  Y0, Y0, Y0
	MOVQ    $0, AX

q6kt18zero:
	VMOVUPS Y0, (SP)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, $256
	JLT     q6kt18zero

q6kt18loop:
	Q6PFS(SI)
	VMOVDQU 192(SI), X11
	Q6TCHUNK(Q6TFIRST, Q6TQ0, 0, 128, 4, 0)
	Q6TCHUNK(Q6TPAIR, Q6TQ1, 0, 128, 36, 1)
	Q6TCHUNK(Q6TPAIR, Q6TQ2, 0, 128, 68, 2)
	Q6TCHUNK(Q6TPAIR, Q6TQ3, 0, 128, 100, 3)
	Q6TCHUNK(Q6TPAIR, Q6TQ0, 64, 160, 132, 4)
	Q6TCHUNK(Q6TPAIR, Q6TQ1, 64, 160, 164, 5)
	Q6TCHUNK(Q6TPAIR, Q6TQ2, 64, 160, 196, 6)
	Q6TCHUNK(Q6TPAIR, Q6TQ3, 64, 160, 228, 7)

	MOVWLZX      208(SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	Q6TFLOAT(C0, Y0, 0)
	Q6TFLOAT(C1, Y1, 1)
	Q6TFLOAT(C2, Y2, 2)
	Q6TFLOAT(C3, Y3, 3)
	Q6TFLOAT(C4, Y4, 4)
	Q6TFLOAT(C5, Y5, 5)
	Q6TFLOAT(C6, Y6, 6)
	Q6TFLOAT(C7, Y7, 7)

	ADDQ R9, SI
	ADDQ $292, DI
	ADDQ $292, BX
	DECQ CX
	JNZ  q6kt18loop

	MOVQ out+48(FP), DX
	MOVQ ldo+56(FP), R12
	Q6TOUT(0)
	Q6TOUT(1)
	Q6TOUT(2)
	Q6TOUT(3)
	Q6TOUT(4)
	Q6TOUT(5)
	Q6TOUT(6)
	Q6TOUT(7)
	VZEROUPPER
	RET

// The VNNI strips (AVX-512 VL/BW/VNNI, EVEX-encoded 256-bit operations
// and the registers Y16-Y31): the same per-lane integers and the same
// float chain as q4kx4 / q6kx4, so the same bits. Three changes make them
// faster: the column's 8 chunks of activations are loaded once per
// super-block for the 4 rows; each pair of int16 products is multiplied by
// its sub-block's scale and added to the lanes by one VPDPWSSD whose scale
// operand is broadcast from a frame slot of (scale, scale) int16 pairs,
// instead of a VPSHUFB to spread the scale, a VPMADDWD and a VPADDD; and
// the scales and mins of super-block b+1 are unpacked (and the mins
// accumulated) while super-block b's products run, so that their long
// dependency chain (unpack, store, broadcast) is off the critical path.
// The integer lanes are exact sums, so the order of these additions does
// not change them; the float accumulators see the same operations in the
// same order per super-block.

// K4CHUNKV adds chunk j (32 bytes of nibbles at qoff(wp), activations ylo
// and yhi) of a row into the lanes lo (low nibbles, scale at s(fp)) and hi
// (high nibbles, scale at s+4(fp)). Y14 nibble mask; a, b scratch.
#define K4CHUNKV(wp, qoff, ylo, yhi, s, fp, lo, hi, a, b) \
	VMOVDQU64     qoff(wp), a \
	VPSRLW        $4, a, b \
	VPANDD        Y14, a, a \
	VPANDD        Y14, b, b \
	VPMADDUBSW    ylo, a, a \
	VPMADDUBSW    yhi, b, b \
	VPDPWSSD.BCST s(fp), a, lo \
	VPDPWSSD.BCST s+4(fp), b, hi

// K4ROWV accumulates row wp's super-block into acc; its scales are the
// (s, s) pairs at soff(fp). Y13 yd.
#define K4ROWV(wp, soff, fp, acc, a, b, lo, hi) \
	VPXORD       lo, lo, lo \
	VPXORD       hi, hi, hi \
	K4CHUNKV(wp, 16, Y16, Y17, soff, fp, lo, hi, a, b) \
	K4CHUNKV(wp, 48, Y18, Y19, soff+8, fp, lo, hi, a, b) \
	K4CHUNKV(wp, 80, Y20, Y21, soff+16, fp, lo, hi, a, b) \
	K4CHUNKV(wp, 112, Y22, Y23, soff+24, fp, lo, hi, a, b) \
	VPADDD       hi, lo, lo \
	MOVWLZX      (wp), AX \
	VBROADCASTSS (R8)(AX*4), a \
	VMULPS       Y13, a, a \
	VCVTDQ2PS    lo, lo \
	VFMADD231PS  a, lo, acc

// K4ROWS4V runs the 4 rows' products of the current super-block, their
// scales staged at (R12).
#define K4ROWS4V \
	K4ROWV(SI, 0, R12, Y0, Y24, Y25, Y26, Y27) \
	K4ROWV(BX, 32, R12, Y1, Y28, Y29, Y30, Y31) \
	K4ROWV(R10, 64, R12, Y2, Y24, Y25, Y26, Y27) \
	K4ROWV(R11, 96, R12, Y3, Y28, Y29, Y30, Y31)

// K4PAIRV unpacks the scales and mins of the super-blocks at o(ra) and
// o(rb) as K4PAIR does: the scales staged as (s, s) int16 pairs at
// soff(fp) (row ra) and soff+32(fp) (row rb), the mins accumulated into
// macc against the column's pair sums of bsums in Y15 and its yd in yd.
#define K4PAIRV(ra, rb, o, macc, soff, fp, yd) \
	VMOVDQU      o(ra), X6 \
	VINSERTI128  $1, o(rb), Y6, Y6 \
	K4UNPACK(Y6, Y8, Y7) \
	VPXOR        Y7, Y7, Y7 \
	VPUNPCKLBW   Y7, Y8, Y6 \
	VPUNPCKHBW   Y7, Y8, Y12 \
	VPUNPCKLWD   Y6, Y6, Y10 \
	VPUNPCKHWD   Y6, Y6, Y11 \
	VMOVDQU      X10, soff(fp) \
	VMOVDQU      X11, soff+16(fp) \
	VEXTRACTI128 $1, Y10, soff+32(fp) \
	VEXTRACTI128 $1, Y11, soff+48(fp) \
	VPMADDWD     Y15, Y12, Y12 \
	VCVTDQ2PS    Y12, Y12 \
	MOVWLZX      o+2(ra), AX \
	VBROADCASTSS (R8)(AX*4), Y6 \
	MOVWLZX      o+2(rb), AX \
	VBROADCASTSS (R8)(AX*4), Y7 \
	VBLENDPS     $0xf0, Y7, Y6, Y6 \
	VMULPS       yd, Y6, Y6 \
	VFMADD231PS  Y6, Y12, macc

// K4COLV loads the column's pair sums of bsums of the super-block at
// o(DI) into both halves of Y15 and its yd into yd.
#define K4COLV(o, yd) \
	VBROADCASTSS o(DI), yd \
	VMOVDQU      o+260(DI), X15 \
	VPHADDW      o+276(DI), X15, X15 \
	VPERMQ       $0x44, Y15, Y15

// func q4kx4V(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// q4kx4 on the VNNI units. The frame holds two slots of staged scales
// (4 rows × 32 bytes each): R12 the current super-block's, R13 the next.
TEXT ·q4kx4V(SB), NOSPLIT, $256-64
	MOVQ    w+0(FP), SI
	MOVQ    rs+8(FP), R9
	MOVQ    x+16(FP), DI
	MOVQ    nb+32(FP), CX
	MOVQ    tab+40(FP), R8
	LEAQ    (SI)(R9*1), BX
	LEAQ    (BX)(R9*1), R10
	LEAQ    (R10)(R9*1), R11
	LEAQ    0(SP), R12
	LEAQ    128(SP), R13
	VMOVDQU knib<>(SB), Y14
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	VXORPS  Y4, Y4, Y4
	VXORPS  Y5, Y5, Y5
	K4COLV(0, Y13)
	K4PAIRV(SI, BX, 0, Y4, 0, R12, Y13)
	K4PAIRV(R10, R11, 0, Y5, 64, R12, Y13)

q4kx4Vloop:
	PREFETCHT0   0(SI)(R9*4)
	PREFETCHT0   64(SI)(R9*4)
	PREFETCHT0   128(SI)(R9*4)
	PREFETCHT0   0(BX)(R9*8)
	PREFETCHT0   64(BX)(R9*8)
	PREFETCHT0   128(BX)(R9*8)
	PREFETCHT0   0(R10)(R9*8)
	PREFETCHT0   64(R10)(R9*8)
	PREFETCHT0   128(R10)(R9*8)
	PREFETCHT0   0(R11)(R9*8)
	PREFETCHT0   64(R11)(R9*8)
	PREFETCHT0   128(R11)(R9*8)
	VMOVDQU64    4(DI), Y16
	VMOVDQU64    36(DI), Y17
	VMOVDQU64    68(DI), Y18
	VMOVDQU64    100(DI), Y19
	VMOVDQU64    132(DI), Y20
	VMOVDQU64    164(DI), Y21
	VMOVDQU64    196(DI), Y22
	VMOVDQU64    228(DI), Y23
	DECQ         CX
	JZ           q4kx4Vlast
	K4COLV(292, Y9)
	K4PAIRV(SI, BX, 144, Y4, 0, R13, Y9)
	K4PAIRV(R10, R11, 144, Y5, 64, R13, Y9)
	VBROADCASTSS (DI), Y13
	K4ROWS4V
	XCHGQ        R12, R13
	ADDQ         $144, SI
	ADDQ         $144, BX
	ADDQ         $144, R10
	ADDQ         $144, R11
	ADDQ         $292, DI
	JMP          q4kx4Vloop

q4kx4Vlast:
	VBROADCASTSS (DI), Y13
	K4ROWS4V
	MOVQ         out+48(FP), DX
	VEXTRACTF128 $1, Y4, X10
	VEXTRACTF128 $1, Y5, X11
	K4OUT(Y0, X0, X4, 0(DX))
	K4OUT(Y1, X1, X10, 4(DX))
	K4OUT(Y2, X2, X5, 8(DX))
	K4OUT(Y3, X3, X11, 12(DX))
	VZEROUPPER
	RET

// Q6QV adds chunk c's products to the lanes lo: q (6-bit values) times the
// activations ya, minus the column's 32·y pair sums yc, times the scales
// of sub-blocks 2c, 2c+1 picked from sc by q6w mask m. Y8 scratch.
#define Q6QV(q, ya, yc, m, sc, lo) \
	VPMADDUBSW ya, q, q \
	VPSUBW     yc, q, q \
	VPSHUFB    m, sc, Y8 \
	VPDPWSSD   Y8, q, lo

// Q6HALFV runs the 128 elements of half ql/qh of row wp (chunks c0..c0+3:
// activations Y16+c, corrections Y24+c passed in), scales sc (the half's 8
// scales as int16 in both halves), into the lanes lo and hi. The 6-bit
// values are (ql nibble) | (qh bits masked to 0x30), the OR and the
// nibble mask in one VPTERNLOGD (Y7 | (x & Y14)). Y13 0x30, Y14 0x0f.
#define Q6HALFV(wp, qloff, qhoff, sc, lo, hi, y0, y1, y2, y3, c0, c1, c2, c3) \
	VMOVDQU    qloff(wp), Y4 \
	VMOVDQU    qloff+32(wp), Y5 \
	VMOVDQU    qhoff(wp), Y6 \
	VPSLLW     $4, Y6, Y7 \
	VPAND      Y13, Y7, Y7 \
	VPTERNLOGD $0xf8, Y14, Y4, Y7 \
	Q6QV(Y7, y0, c0, q6w<>+0(SB), sc, lo) \
	VPSLLW     $2, Y6, Y7 \
	VPAND      Y13, Y7, Y7 \
	VPTERNLOGD $0xf8, Y14, Y5, Y7 \
	Q6QV(Y7, y1, c1, q6w<>+32(SB), sc, hi) \
	VPAND      Y13, Y6, Y7 \
	VPSRLW     $4, Y4, Y4 \
	VPTERNLOGD $0xf8, Y14, Y4, Y7 \
	Q6QV(Y7, y2, c2, q6w<>+64(SB), sc, lo) \
	VPSRLW     $2, Y6, Y7 \
	VPAND      Y13, Y7, Y7 \
	VPSRLW     $4, Y5, Y5 \
	VPTERNLOGD $0xf8, Y14, Y5, Y7 \
	Q6QV(Y7, y3, c3, q6w<>+96(SB), sc, hi)

// Q6ROWV accumulates row wp's super-block into acc (as Q6ROW); Y15 d·yd
// is computed here, Y12 yd.
#define Q6ROWV(wp, acc) \
	VPMOVSXBW    192(wp), Y11 \
	VPERMQ       $0x44, Y11, Y10 \
	VPERMQ       $0xee, Y11, Y11 \
	VPXOR        Y9, Y9, Y9 \
	VPXORD       Y15, Y15, Y15 \
	Q6HALFV(wp, 0, 128, Y10, Y9, Y15, Y16, Y17, Y18, Y19, Y24, Y25, Y26, Y27) \
	Q6HALFV(wp, 64, 160, Y11, Y9, Y15, Y20, Y21, Y22, Y23, Y28, Y29, Y30, Y31) \
	VPADDD       Y15, Y9, Y9 \
	MOVWLZX      208(wp), AX \
	VBROADCASTSS (R8)(AX*4), Y8 \
	VMULPS       Y12, Y8, Y8 \
	VCVTDQ2PS    Y9, Y9 \
	VFMADD231PS  Y8, Y9, acc

// Q6COLV loads the column's super-block (activations Y16-Y23, their 32·y
// pair sums Y24-Y31, yd Y12); Y15 scratch.
#define Q6COLV \
	VMOVDQU      k32<>(SB), Y15 \
	VMOVDQU64    4(DI), Y16 \
	VMOVDQU64    36(DI), Y17 \
	VMOVDQU64    68(DI), Y18 \
	VMOVDQU64    100(DI), Y19 \
	VMOVDQU64    132(DI), Y20 \
	VMOVDQU64    164(DI), Y21 \
	VMOVDQU64    196(DI), Y22 \
	VMOVDQU64    228(DI), Y23 \
	VPMADDUBSW   Y16, Y15, Y24 \
	VPMADDUBSW   Y17, Y15, Y25 \
	VPMADDUBSW   Y18, Y15, Y26 \
	VPMADDUBSW   Y19, Y15, Y27 \
	VPMADDUBSW   Y20, Y15, Y28 \
	VPMADDUBSW   Y21, Y15, Y29 \
	VPMADDUBSW   Y22, Y15, Y30 \
	VPMADDUBSW   Y23, Y15, Y31 \
	VBROADCASTSS (DI), Y12

// func q6kx4V(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// q6kx4 on the VNNI units: the column's activations and 32·y corrections
// once per super-block for the 4 rows, one VPDPWSSD per chunk in place of
// VPMADDWD and VPADDD, the 6-bit unpacking with VPTERNLOGD.
TEXT ·q6kx4V(SB), NOSPLIT, $0-64
	MOVQ    w+0(FP), SI
	MOVQ    rs+8(FP), R9
	MOVQ    x+16(FP), DI
	MOVQ    nb+32(FP), CX
	MOVQ    tab+40(FP), R8
	LEAQ    (SI)(R9*1), BX
	LEAQ    (BX)(R9*1), R10
	LEAQ    (R10)(R9*1), R11
	VMOVDQU k30<>(SB), Y13
	VMOVDQU knib<>(SB), Y14
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3

q6kx4Vloop:
	Q6PFN(SI)
	Q6PFN(BX)
	Q6PFN(R10)
	Q6PFN(R11)
	Q6COLV
	Q6ROWV(SI, Y0)
	Q6ROWV(BX, Y1)
	Q6ROWV(R10, Y2)
	Q6ROWV(R11, Y3)
	ADDQ $210, SI
	ADDQ $210, BX
	ADDQ $210, R10
	ADDQ $210, R11
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kx4Vloop

	MOVQ   out+48(FP), DX
	KHSUM8(Y0, X0, X6)
	VMOVSS X0, 0(DX)
	KHSUM8(Y1, X1, X6)
	VMOVSS X1, 4(DX)
	KHSUM8(Y2, X2, X6)
	VMOVSS X2, 8(DX)
	KHSUM8(Y3, X3, X6)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET
