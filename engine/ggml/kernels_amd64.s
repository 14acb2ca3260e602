//go:build amd64 && !noasm

#include "textflag.h"

#define PFD 512


// AVX2 + FMA + F16C kernels. Every function ends with VZEROUPPER and uses
// only VEX-encoded vector instructions (no legacy SSE: see PERF-NOTES on the
// SSE/AVX transition penalty). The Go twins in vecdot_go.go are the
// reference for each.

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

// Shift counts per qword for VPSRLVQ: low 128 bits keep the low nibbles,
// high 128 bits get the high nibbles of a broadcast 16-byte Q4 payload.
DATA hishift<>+0(SB)/8, $0
DATA hishift<>+8(SB)/8, $0
DATA hishift<>+16(SB)/8, $4
DATA hishift<>+24(SB)/8, $4
GLOBL hishift<>(SB), RODATA|NOPTR, $32

// HSUM4 reduces the 4 floats of x into x[0] in ggml's order
// (hsum_float_8's tail): (x0+x2) + (x1+x3); t is scratch.
#define HSUM4(x, t) \
	VMOVHLPS  x, x, t \
	VADDPS    t, x, x \
	VMOVSHDUP x, t \
	VADDSS    t, x, x

// HSUM reduces the 8 floats of Y0 into X0[0] as ggml's hsum_float_8.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	HSUM4(X0, X1)

// F16DOTEND ends the F16 row kernels (dotF16AVX, dotF16QAVX): the octets
// left (CX elements at SI and DI) into Y0, the four accumulators summed
// as (Y0+Y1)+(Y2+Y3), HSUM, then the last elements one FMA at a time
// through the fp16 table at R8; its arguments are its labels.
#define F16DOTEND(t8, red, t1, done) \
t8: \
	CMPQ        CX, $8 \
	JLT         red \
	VCVTPH2PS   (SI), Y4 \
	VCVTPH2PS   (DI), Y8 \
	VFMADD231PS Y8, Y4, Y0 \
	ADDQ        $16, SI \
	ADDQ        $16, DI \
	SUBQ        $8, CX \
	JMP         t8 \
red: \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y0, Y0 \
	HSUM \
t1: \
	TESTQ       CX, CX \
	JEQ         done \
	MOVWLZX     (SI), AX \
	MOVWLZX     (DI), BX \
	VMOVSS      (R8)(AX*4), X1 \
	VFMADD231SS (R8)(BX*4), X1, X0 \
	ADDQ        $2, SI \
	ADDQ        $2, DI \
	DECQ        CX \
	JMP         t1 \
done: \
	VMOVSS X0, ret+32(FP) \
	VZEROUPPER \
	RET

// func dotF32AVX(a, b *float32, n int) float32
//
//	for i := 0; i < n; i++ { s += a[i] * b[i] }
//
// Each pass prefetches the two lines at the same offset of the next row,
// as dotF16QAVX does: on the AVX2 tier one core streamed F32 decode at
// 7.8–12.1 GB/s against 8.1–8.7 without, two at 20.9–24.5 against
// 16.0–17.2 (BenchmarkModelStream, Xeon VM, 2026-11-27).
TEXT ·dotF32AVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	LEAQ   (SI)(CX*4), R9      // the next row (see dotF16QAVX)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JLT    f32tail8

f32loop32:
	PREFETCHT0  (R9)
	PREFETCHT0  64(R9)
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, R9
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         f32loop32

f32tail8:
	CMPQ        CX, $8
	JLT         f32reduce
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         f32tail8

f32reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM

f32tail1:
	TESTQ       CX, CX
	JEQ         f32done
	VMOVSS      (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         f32tail1

f32done:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotF16AVX(a, b *uint16, n int, tab *float32) float32
//
//	for i := 0; i < n; i++ { s += fp16(a[i]) * fp16(b[i]) }
TEXT ·dotF16AVX(SB), NOSPLIT, $0-36
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	MOVQ   tab+24(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JLT    f16tail8

f16loop32:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         f16loop32

	F16DOTEND(f16tail8, f16reduce, f16tail1, f16done)

// func dotF16QAVX(a, b *uint16, n int, tab *float32) float32
//
// dotF16QAVX is the AVX2 tier's F16 row kernel (CPUs without AVX-512; the
// AVX-512 tier keeps dotF16AVX, whose order its tiles share): four 8-lane
// accumulators, accumulator k over the k-th of four ranges of
// ⌊n/128⌋·32 elements (octets in order), the octets past them into the
// first, then (a0+a1)+(a2+a3), HSUM and the tail one FMA at a time
// (dotF16QGo). Each range is one straight run of bytes, so the prefill
// tile (f16t43A) makes one pass per range instead of four over each block.
// The four streams in one row defeat the hardware's stream prefetcher
// (one stream per page). Each pass of the loop reads one line's worth of
// the row (16 bytes of each range) and prefetches the line at the same
// offset of the next row (R9), so decode, which runs this kernel row
// after row, asks for each row one row ahead, in order. A prefetch past
// the matrix's end is harmless (prefetches do not fault). One core
// streaming a 5632×2048 matrix from a 600 MiB set read 9.7–10.3 GB/s
// against 6.5–7.6 with four prefetches 512 bytes ahead, one per range,
// and dotF16AVX's 6.2–6.8 (BenchmarkF16StreamRows, three alternations,
// on the 2-vCPU Xeon VM, 2026-11-27; 5.1–6.1 without any prefetch).
// Decode now runs f16r4QAVX (below: four rows side by side, each
// one stream) and this kernel only for the rows left over: on a Zen 5
// core this one read 18–24 GB/s row after row, f16r4QAVX 26–36.
TEXT ·dotF16QAVX(SB), NOSPLIT, $0-36
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	MOVQ   tab+24(FP), R8
	LEAQ   (SI)(CX*2), R9      // the next row
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   CX, DX
	SHRQ   $7, DX              // groups per range
	MOVQ   DX, R10
	SHLQ   $6, R10             // a range's bytes
	LEAQ   (R10)(R10*2), R11   // three ranges' bytes
	MOVQ   DX, AX
	SHLQ   $7, AX
	SUBQ   AX, CX              // the elements past the four ranges
	SHLQ   $2, DX              // octets per range
	TESTQ  DX, DX
	JZ     f16qtail8

f16qloop8:
	PREFETCHT0  (R9)
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   (SI)(R10*1), Y5
	VCVTPH2PS   (SI)(R10*2), Y6
	VCVTPH2PS   (SI)(R11*1), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   (DI)(R10*1), Y9
	VCVTPH2PS   (DI)(R10*2), Y10
	VCVTPH2PS   (DI)(R11*1), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, R9
	ADDQ        $16, SI
	ADDQ        $16, DI
	DECQ        DX
	JNZ         f16qloop8
	ADDQ        R11, SI
	ADDQ        R11, DI

	F16DOTEND(f16qtail8, f16qreduce, f16qtail1, f16qdone)

// f16r4QAVX, the AVX2 tier's F16 decode kernel: four rows at a time in
// dotF16QAVX's order (dotF16QGo), so that each row is read as one
// straight run of bytes and each column octet is widened once for the
// four rows.

// PFDIST4 is the least distance, in bytes, of f16r4QAVX's prefetches:
// the same offset in the group of rows a whole number of groups ahead.
#define PFDIST4 4096

// R4OCT adds one octet (o bytes past w and x) of the four rows w,
// w+BX, w+2·BX and w+R12 times the column's octet into Y0–Y3.
#define R4OCT(o, w, x) \
	VCVTPH2PS   o(x), Y8 \
	VCVTPH2PS   o(w), Y4 \
	VFMADD231PS Y8, Y4, Y0 \
	VCVTPH2PS   o(w)(BX*1), Y4 \
	VFMADD231PS Y8, Y4, Y1 \
	VCVTPH2PS   o(w)(BX*2), Y4 \
	VFMADD231PS Y8, Y4, Y2 \
	VCVTPH2PS   o(w)(R12*1), Y4 \
	VFMADD231PS Y8, Y4, Y3

// R4RANGE zeroes Y0–Y3 and runs the four rows through one range (DX
// passes of 32 elements from SI and DI, which it advances), prefetching
// each row's line at R10.
#define R4RANGE(loop, done) \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	MOVQ   DX, AX \
	TESTQ  AX, AX \
	JZ     done \
loop: \
	PREFETCHT0 (R10) \
	PREFETCHT0 (R10)(BX*1) \
	PREFETCHT0 (R10)(BX*2) \
	PREFETCHT0 (R10)(R12*1) \
	R4OCT(0, SI, DI) \
	R4OCT(16, SI, DI) \
	R4OCT(32, SI, DI) \
	R4OCT(48, SI, DI) \
	ADDQ $64, SI \
	ADDQ $64, DI \
	ADDQ $64, R10 \
	DECQ AX \
	JNZ  loop \
done:

// func f16r4QAVX(w *uint16, rs int, x *uint16, n int, out *float32)
//
// out[r] = dotF16QGo over row r (rs bytes apart, r < 4) and x, for n a
// multiple of 8: accumulator k over the k-th of four ranges of
// ⌊n/128⌋·32 elements, the octets past them into the first, then
// (a0+a1)+(a2+a3) and HSUM. The ranges run one after another, the four
// rows side by side, so each row streams its bytes in order: dotF16QAVX
// reads four ranges of one row at once, four streams 1/4 row long, which
// the hardware prefetchers follow worse (docs/PERFORMANCE.md, sitting 15).
// Each pass prefetches the four rows' lines at the same offset of the
// group of rows a whole number of groups ahead, at least PFDIST4 bytes. A
// prefetch past the matrix's end is harmless.
TEXT ·f16r4QAVX(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ rs+8(FP), BX
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R13
	LEAQ (BX)(BX*2), R12 // three rows
	MOVQ BX, AX
	SHLQ $2, AX          // a group of four rows
	MOVQ AX, R10

r4dist:
	CMPQ R10, $PFDIST4
	JGE  r4dist1
	ADDQ AX, R10
	JMP  r4dist

r4dist1:
	ADDQ SI, R10
	MOVQ CX, DX
	SHRQ $7, DX          // passes per range
	MOVQ DX, R11
	SHLQ $6, R11         // a range's bytes
	ANDQ $127, CX
	SHRQ $3, CX          // the octets past the four ranges

	R4RANGE(r4loop0, r4done0)

	// The octets past the ranges, into the first range's accumulators.
	LEAQ  (R11)(R11*2), R9
	LEAQ  (SI)(R9*1), R8
	ADDQ  DI, R9
	TESTQ CX, CX
	JZ    r4tail1

r4tail:
	R4OCT(0, R8, R9)
	ADDQ $16, R8
	ADDQ $16, R9
	DECQ CX
	JNZ  r4tail

r4tail1:
	VMOVAPS Y0, Y12
	VMOVAPS Y1, Y13
	VMOVAPS Y2, Y14
	VMOVAPS Y3, Y15
	R4RANGE(r4loop1, r4done1)
	VADDPS  Y0, Y12, Y12
	VADDPS  Y1, Y13, Y13
	VADDPS  Y2, Y14, Y14
	VADDPS  Y3, Y15, Y15
	R4RANGE(r4loop2, r4done2)
	VMOVAPS Y0, Y5
	VMOVAPS Y1, Y6
	VMOVAPS Y2, Y7
	VMOVAPS Y3, Y9
	R4RANGE(r4loop3, r4done3)
	VADDPS  Y0, Y5, Y5
	VADDPS  Y1, Y6, Y6
	VADDPS  Y2, Y7, Y7
	VADDPS  Y3, Y9, Y9
	VADDPS  Y5, Y12, Y12
	VADDPS  Y6, Y13, Y13
	VADDPS  Y7, Y14, Y14
	VADDPS  Y9, Y15, Y15
	VMOVAPS Y12, Y0
	HSUM
	VMOVSS  X0, 0(R13)
	VMOVAPS Y13, Y0
	HSUM
	VMOVSS  X0, 4(R13)
	VMOVAPS Y14, Y0
	HSUM
	VMOVSS  X0, 8(R13)
	VMOVAPS Y15, Y0
	HSUM
	VMOVSS  X0, 12(R13)
	VZEROUPPER
	RET

// func dotBF16AVX(a, b *uint16, n int) float32
//
//	for i := 0; i < n; i++ { s += bf16(a[i]) * bf16(b[i]) }
//
// Each pass prefetches the next row at its offset (as dotF16QAVX does:
// one line a pass over two): one core streamed BF16 decode at 8.9–10.1
// GB/s against 5.5–6.5 without, two at 15.0–19.6 against 11.0–11.9
// (BenchmarkModelStream, Xeon VM, 2026-11-27).
TEXT ·dotBF16AVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	LEAQ   (SI)(CX*2), R9      // the next row (see dotF16QAVX)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ   CX, $16
	JLT    bf16tail8

bf16loop16:
	PREFETCHT0  (R9)
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   16(SI), Y5
	VPMOVZXWD   (DI), Y8
	VPMOVZXWD   16(DI), Y9
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y5, Y5
	VPSLLD      $16, Y8, Y8
	VPSLLD      $16, Y9, Y9
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	ADDQ        $32, R9
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         bf16loop16

bf16tail8:
	CMPQ        CX, $8
	JLT         bf16reduce
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   (DI), Y8
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y8, Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX

bf16reduce:
	VADDPS Y1, Y0, Y0
	HSUM

bf16tail1:
	TESTQ       CX, CX
	JEQ         bf16done
	MOVWLZX     (SI), AX
	MOVWLZX     (DI), BX
	SHLL        $16, AX
	SHLL        $16, BX
	VMOVD       AX, X1
	VMOVD       BX, X2
	VFMADD231SS X2, X1, X0
	ADDQ        $2, SI
	ADDQ        $2, DI
	DECQ        CX
	JMP         bf16tail1

bf16done:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// HSUMTO reduces the 8 floats of acc (Y register) into lane 0 of its X
// register xacc, using X9 as scratch, and stores it to dst.
#define HSUMTO(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X9 \
	VADDPS       X9, xacc, xacc \
	HSUM4(xacc, X9) \
	VMOVSS       xacc, dst

// shufk4<>+32*s broadcasts int16 lane s of each 128-bit half (VPSHUFB).
DATA shufk4<>+0(SB)/8, $0x0100010001000100
DATA shufk4<>+8(SB)/8, $0x0100010001000100
DATA shufk4<>+16(SB)/8, $0x0100010001000100
DATA shufk4<>+24(SB)/8, $0x0100010001000100
DATA shufk4<>+32(SB)/8, $0x0302030203020302
DATA shufk4<>+40(SB)/8, $0x0302030203020302
DATA shufk4<>+48(SB)/8, $0x0302030203020302
DATA shufk4<>+56(SB)/8, $0x0302030203020302
DATA shufk4<>+64(SB)/8, $0x0504050405040504
DATA shufk4<>+72(SB)/8, $0x0504050405040504
DATA shufk4<>+80(SB)/8, $0x0504050405040504
DATA shufk4<>+88(SB)/8, $0x0504050405040504
DATA shufk4<>+96(SB)/8, $0x0706070607060706
DATA shufk4<>+104(SB)/8, $0x0706070607060706
DATA shufk4<>+112(SB)/8, $0x0706070607060706
DATA shufk4<>+120(SB)/8, $0x0706070607060706
DATA shufk4<>+128(SB)/8, $0x0908090809080908
DATA shufk4<>+136(SB)/8, $0x0908090809080908
DATA shufk4<>+144(SB)/8, $0x0908090809080908
DATA shufk4<>+152(SB)/8, $0x0908090809080908
DATA shufk4<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufk4<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufk4<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufk4<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufk4<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufk4<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufk4<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufk4<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufk4<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufk4<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufk4<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufk4<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL shufk4<>(SB), RODATA|NOPTR, $256

// q6mask<>+16*g gathers int8 scales g*2 (8 times) then g*2+1 (8 times).
DATA q6mask<>+0(SB)/8, $0x0000000000000000
DATA q6mask<>+8(SB)/8, $0x0101010101010101
DATA q6mask<>+16(SB)/8, $0x0202020202020202
DATA q6mask<>+24(SB)/8, $0x0303030303030303
DATA q6mask<>+32(SB)/8, $0x0404040404040404
DATA q6mask<>+40(SB)/8, $0x0505050505050505
DATA q6mask<>+48(SB)/8, $0x0606060606060606
DATA q6mask<>+56(SB)/8, $0x0707070707070707
DATA q6mask<>+64(SB)/8, $0x0808080808080808
DATA q6mask<>+72(SB)/8, $0x0909090909090909
DATA q6mask<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q6mask<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA q6mask<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA q6mask<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA q6mask<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA q6mask<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6mask<>(SB), RODATA|NOPTR, $128

DATA mask30<>+0(SB)/8, $0x3030303030303030
DATA mask30<>+8(SB)/8, $0x3030303030303030
DATA mask30<>+16(SB)/8, $0x3030303030303030
DATA mask30<>+24(SB)/8, $0x3030303030303030
GLOBL mask30<>(SB), RODATA|NOPTR, $32

// Q4KSUB accumulates 64 elements (two sub-blocks sharing 32 bytes of
// nibbles at qoff(SI)) into the int32 lanes of Y9: scales are int16 lanes
// s0 and s0+1 of Y11; the activations are at yoff(DI) and yoff+32(DI).
#define Q4KSUB(qoff, yoff, m0, m1) \
	VMOVDQU    qoff(SI), Y3 \
	VPSRLW     $4, Y3, Y4 \
	VPAND      Y14, Y3, Y3 \
	VPAND      Y14, Y4, Y4 \
	VPMADDUBSW yoff(DI), Y3, Y3 \
	VPMADDUBSW yoff+32(DI), Y4, Y4 \
	VPSHUFB    m0, Y11, Y5 \
	VPSHUFB    m1, Y11, Y6 \
	VPMADDWD   Y5, Y3, Y3 \
	VPMADDWD   Y6, Y4, Y4 \
	VPADDD     Y3, Y9, Y9 \
	VPADDD     Y4, Y9, Y9

// func dotQ4_KAVX(w *byte, x *byte, nb int, tab *float32) float32
//
// Per super-block: d·yd·Σ_j sc_j·Σ q·y − dmin·yd·Σ_j m_j·(bsum_2j+bsum_2j+1),
// with the 6-bit scales and mins unpacked as ggml's utmp trick does.
TEXT ·dotQ4_KAVX(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	VMOVDQU nibble<>(SB), Y14
	VXORPS  Y0, Y0, Y0
	VXORPS  X10, X10, X10

q4kloop:
	PREFETCHT0 PFD(SI)
	PREFETCHT0 PFD+64(SI)
	PREFETCHT0 PFD+128(SI)
	// Unpack scales (bytes 0-7) and mins (bytes 8-15) into X1.
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R9
	SHRL  $4, R9
	ANDL  $0x0f0f0f0f, R9
	MOVL  BX, R10
	SHRL  $6, R10
	ANDL  $0x03030303, R10
	SHLL  $4, R10
	ORL   R10, R9
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R10
	SHRL  $6, R10
	ANDL  $0x03030303, R10
	SHLL  $4, R10
	ORL   R10, DX
	ANDL  $0x3f3f3f3f, BX
	ANDL  $0x3f3f3f3f, AX
	VMOVD AX, X1
	VPINSRD $1, DX, X1, X1
	VPINSRD $2, BX, X1, X1
	VPINSRD $3, R9, X1, X1
	VPMOVZXBW X1, Y1
	VPERMQ    $0x44, Y1, Y11
	VEXTRACTI128 $1, Y1, X2

	// Mins term: Σ m_j·(bsum_2j + bsum_2j+1), 4 int32 lanes.
	VMOVDQU  260(DI), X12
	VPHADDW  276(DI), X12, X12
	VPMADDWD X2, X12, X12

	VPXOR Y9, Y9, Y9
	Q4KSUB(16, 4, shufk4<>+0(SB), shufk4<>+32(SB))
	Q4KSUB(48, 68, shufk4<>+64(SB), shufk4<>+96(SB))
	Q4KSUB(80, 132, shufk4<>+128(SB), shufk4<>+160(SB))
	Q4KSUB(112, 196, shufk4<>+192(SB), shufk4<>+224(SB))

	MOVWLZX      (SI), AX
	VBROADCASTSS (DI), Y7
	VBROADCASTSS (R8)(AX*4), Y8
	VMULPS       Y7, Y8, Y8
	VCVTDQ2PS    Y9, Y9
	VFMADD231PS  Y8, Y9, Y0
	MOVWLZX      2(SI), AX
	VBROADCASTSS (R8)(AX*4), X8
	VMULPS       X7, X8, X8
	VCVTDQ2PS    X12, X12
	VFMADD231PS  X8, X12, X10

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kloop

	HSUM
	HSUM4(X10, X1)
	VSUBSS X10, X0, X0
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// Q6KQ accumulates 32 elements: the 6-bit values in register q (0..63)
// against the activations at yoff(DI) minus 32·y (Y15 = bytes of 32), as
// int16 pair sums, scaled per 16 by the int8 scales picked from X11 by
// mask m (the lanes of ggml's AVX2 ggml_vec_dot_q6_K_q8_K).
#define Q6KQ(q, yoff, m) \
	VPMADDUBSW yoff(DI), Y15, Y12 \
	VPMADDUBSW yoff(DI), q, q \
	VPSUBW     Y12, q, q \
	VPSHUFB    m, X11, X5 \
	VPMOVSXBW  X5, Y5 \
	VPMADDWD   Y5, q, q \
	VPADDD     q, Y9, Y9

// Q6KHALF handles 128 elements: ql at qloff(SI), qh at qhoff(SI).
#define Q6KHALF(qloff, qhoff, yoff, m0, m1, m2, m3) \
	VMOVDQU qloff(SI), Y1 \
	VMOVDQU qloff+32(SI), Y2 \
	VMOVDQU qhoff(SI), Y3 \
	VPAND   Y14, Y1, Y4 \
	VPSLLW  $4, Y3, Y5 \
	VPAND   Y13, Y5, Y5 \
	VPOR    Y5, Y4, Y4 \
	VPAND   Y14, Y2, Y6 \
	VPSLLW  $2, Y3, Y5 \
	VPAND   Y13, Y5, Y5 \
	VPOR    Y5, Y6, Y6 \
	VPSRLW  $4, Y1, Y7 \
	VPAND   Y14, Y7, Y7 \
	VPAND   Y13, Y3, Y5 \
	VPOR    Y5, Y7, Y7 \
	VPSRLW  $4, Y2, Y8 \
	VPAND   Y14, Y8, Y8 \
	VPSRLW  $2, Y3, Y5 \
	VPAND   Y13, Y5, Y5 \
	VPOR    Y5, Y8, Y8 \
	Q6KQ(Y4, yoff, m0) \
	Q6KQ(Y6, yoff+32, m1) \
	Q6KQ(Y7, yoff+64, m2) \
	Q6KQ(Y8, yoff+96, m3)

// func dotQ6_KAVX(w *byte, x *byte, nb int, tab *float32) float32
//
// Per super-block: d·yd·Σ_g sc_g·Σ (q−32)·y.
TEXT ·dotQ6_KAVX(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	VMOVDQU nibble<>(SB), Y14
	VMOVDQU mask30<>(SB), Y13
	VMOVDQU bytes32x32<>(SB), Y15
	VXORPS  Y0, Y0, Y0

q6kloop:
	PREFETCHT0 PFD(SI)
	PREFETCHT0 PFD+64(SI)
	PREFETCHT0 PFD+128(SI)
	PREFETCHT0 PFD+192(SI)
	VMOVDQU   192(SI), X11
	VPXOR     Y9, Y9, Y9
	Q6KHALF(0, 128, 4, q6mask<>+0(SB), q6mask<>+16(SB), q6mask<>+32(SB), q6mask<>+48(SB))
	Q6KHALF(64, 160, 132, q6mask<>+64(SB), q6mask<>+80(SB), q6mask<>+96(SB), q6mask<>+112(SB))

	MOVWLZX      208(SI), AX
	VBROADCASTSS (DI), Y7
	VBROADCASTSS (R8)(AX*4), Y8
	VMULPS       Y7, Y8, Y8
	VCVTDQ2PS    Y9, Y9
	VFMADD231PS  Y8, Y9, Y0

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kloop

	HSUM
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

DATA mask10<>+0(SB)/8, $0x1010101010101010
DATA mask10<>+8(SB)/8, $0x1010101010101010
DATA mask10<>+16(SB)/8, $0x1010101010101010
DATA mask10<>+24(SB)/8, $0x1010101010101010
GLOBL mask10<>(SB), RODATA|NOPTR, $32

DATA mask03<>+0(SB)/8, $0x0303030303030303
DATA mask03<>+8(SB)/8, $0x0303030303030303
DATA mask03<>+16(SB)/8, $0x0303030303030303
DATA mask03<>+24(SB)/8, $0x0303030303030303
GLOBL mask03<>(SB), RODATA|NOPTR, $32

DATA mask04<>+0(SB)/8, $0x0404040404040404
DATA mask04<>+8(SB)/8, $0x0404040404040404
DATA mask04<>+16(SB)/8, $0x0404040404040404
DATA mask04<>+24(SB)/8, $0x0404040404040404
GLOBL mask04<>(SB), RODATA|NOPTR, $32

DATA bytes32<>+0(SB)/8, $0x2020202020202020
DATA bytes32<>+8(SB)/8, $0x2020202020202020
GLOBL bytes32<>(SB), RODATA|NOPTR, $16

DATA bytes32x32<>+0(SB)/8, $0x2020202020202020
DATA bytes32x32<>+8(SB)/8, $0x2020202020202020
DATA bytes32x32<>+16(SB)/8, $0x2020202020202020
DATA bytes32x32<>+24(SB)/8, $0x2020202020202020
GLOBL bytes32x32<>(SB), RODATA|NOPTR, $32

// K4SCALES unpacks the 12-byte 6-bit scales/mins at 4(SI) (Q4_K, Q5_K):
// Y11 = int16 scales 0-7 in both 128-bit halves, X2 = int16 mins 0-7.
#define K4SCALES \
	MOVL         4(SI), AX \
	MOVL         8(SI), BX \
	MOVL         12(SI), DX \
	MOVL         DX, R9 \
	SHRL         $4, R9 \
	ANDL         $0x0f0f0f0f, R9 \
	MOVL         BX, R10 \
	SHRL         $6, R10 \
	ANDL         $0x03030303, R10 \
	SHLL         $4, R10 \
	ORL          R10, R9 \
	ANDL         $0x0f0f0f0f, DX \
	MOVL         AX, R10 \
	SHRL         $6, R10 \
	ANDL         $0x03030303, R10 \
	SHLL         $4, R10 \
	ORL          R10, DX \
	ANDL         $0x3f3f3f3f, BX \
	ANDL         $0x3f3f3f3f, AX \
	VMOVD        AX, X1 \
	VPINSRD      $1, DX, X1, X1 \
	VPINSRD      $2, BX, X1, X1 \
	VPINSRD      $3, R9, X1, X1 \
	VPMOVZXBW    X1, Y1 \
	VPERMQ       $0x44, Y1, Y11 \
	VEXTRACTI128 $1, Y1, X2

// Q5KSUB is Q4KSUB with the fifth bits taken from bits 0 and 1 of Y15
// (the qh bytes shifted right by 2 per call).
#define Q5KSUB(qoff, yoff, m0, m1) \
	VMOVDQU    qoff(SI), Y3 \
	VPSRLW     $4, Y3, Y4 \
	VPAND      Y14, Y3, Y3 \
	VPAND      Y14, Y4, Y4 \
	VPSLLW     $4, Y15, Y7 \
	VPAND      Y13, Y7, Y7 \
	VPOR       Y7, Y3, Y3 \
	VPSLLW     $3, Y15, Y8 \
	VPAND      Y13, Y8, Y8 \
	VPOR       Y8, Y4, Y4 \
	VPSRLW     $2, Y15, Y15 \
	VPMADDUBSW yoff(DI), Y3, Y3 \
	VPMADDUBSW yoff+32(DI), Y4, Y4 \
	VPSHUFB    m0, Y11, Y5 \
	VPSHUFB    m1, Y11, Y6 \
	VPMADDWD   Y5, Y3, Y3 \
	VPMADDWD   Y6, Y4, Y4 \
	VPADDD     Y3, Y9, Y9 \
	VPADDD     Y4, Y9, Y9

// func dotQ5_KAVX(w *byte, x *byte, nb int, tab *float32) float32
//
// As dotQ4_KAVX with 5-bit values: nibble | bit of qh << 4.
TEXT ·dotQ5_KAVX(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	VMOVDQU nibble<>(SB), Y14
	VMOVDQU mask10<>(SB), Y13
	VXORPS  Y0, Y0, Y0
	VXORPS  X10, X10, X10

q5kloop:
	PREFETCHT0 PFD(SI)
	PREFETCHT0 PFD+64(SI)
	PREFETCHT0 PFD+128(SI)
	K4SCALES
	VMOVDQU  260(DI), X12
	VPHADDW  276(DI), X12, X12
	VPMADDWD X2, X12, X12
	VMOVDQU  16(SI), Y15

	VPXOR Y9, Y9, Y9
	Q5KSUB(48, 4, shufk4<>+0(SB), shufk4<>+32(SB))
	Q5KSUB(80, 68, shufk4<>+64(SB), shufk4<>+96(SB))
	Q5KSUB(112, 132, shufk4<>+128(SB), shufk4<>+160(SB))
	Q5KSUB(144, 196, shufk4<>+192(SB), shufk4<>+224(SB))

	MOVWLZX      (SI), AX
	VBROADCASTSS (DI), Y7
	VBROADCASTSS (R8)(AX*4), Y8
	VMULPS       Y7, Y8, Y8
	VCVTDQ2PS    Y9, Y9
	VFMADD231PS  Y8, Y9, Y0
	// summs += −(yd·dmin)·float(Σ lanes), scalar as ggml's Q5_K.
	MOVWLZX      2(SI), AX
	VMOVSS       (R8)(AX*4), X8
	VMULSS       X7, X8, X8
	VPHADDD      X12, X12, X12
	VPHADDD      X12, X12, X12
	VCVTDQ2PS    X12, X12
	VFNMADD231SS X8, X12, X10

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5kloop

	HSUM
	VADDSS X10, X0, X0
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// Q3KQ accumulates 32 elements of a Q3_K half: 2-bit values from Y1
// shifted right by sh, minus 4 where the high bit (Y2 = hmask, moved to
// bit 2 by hop $hs, hop = VPSLLW or VPSRLW) is clear, as int16 pair sums
// (the lanes of ggml's AVX2 ggml_vec_dot_q3_K_q8_K).
#define Q3KQ(sh, hop, hs, yoff, m) \
	VPSRLW     $sh, Y1, Y3 \
	VPAND      Y14, Y3, Y3 \
	hop        $hs, Y2, Y4 \
	VPANDN     Y13, Y4, Y4 \
	VPMADDUBSW yoff(DI), Y3, Y3 \
	VPMADDUBSW yoff(DI), Y4, Y4 \
	VPSUBW     Y4, Y3, Y3 \
	VPSHUFB    m, X11, X5 \
	VPMOVSXBW  X5, Y5 \
	VPMADDWD   Y5, Y3, Y3 \
	VPADDD     Y3, Y9, Y9

// func dotQ3_KAVX(w *byte, x *byte, nb int, tab *float32) float32
//
// Per super-block: d·yd·Σ_g sc_g·Σ q·y with q in −4..3.
TEXT ·dotQ3_KAVX(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	VMOVDQU mask03<>(SB), Y14
	VMOVDQU mask04<>(SB), Y13
	VXORPS  Y0, Y0, Y0

q3kloop:
	PREFETCHT0 PFD(SI)
	PREFETCHT0 PFD+64(SI)
	// Unpack the 16 6-bit scales (q3Scales), minus 32, into X11.
	MOVL    96(SI), AX
	MOVL    100(SI), BX
	MOVL    104(SI), DX
	MOVL    AX, R9
	ANDL    $0x0f0f0f0f, R9
	MOVL    DX, R10
	ANDL    $0x03030303, R10
	SHLL    $4, R10
	ORL     R10, R9
	VMOVD   R9, X11
	MOVL    BX, R9
	ANDL    $0x0f0f0f0f, R9
	MOVL    DX, R10
	SHRL    $2, R10
	ANDL    $0x03030303, R10
	SHLL    $4, R10
	ORL     R10, R9
	VPINSRD $1, R9, X11, X11
	MOVL    AX, R9
	SHRL    $4, R9
	ANDL    $0x0f0f0f0f, R9
	MOVL    DX, R10
	SHRL    $4, R10
	ANDL    $0x03030303, R10
	SHLL    $4, R10
	ORL     R10, R9
	VPINSRD $2, R9, X11, X11
	MOVL    BX, R9
	SHRL    $4, R9
	ANDL    $0x0f0f0f0f, R9
	MOVL    DX, R10
	SHRL    $6, R10
	ANDL    $0x03030303, R10
	SHLL    $4, R10
	ORL     R10, R9
	VPINSRD $3, R9, X11, X11
	VPSUBB  bytes32<>(SB), X11, X11
	VPXOR   Y9, Y9, Y9

	VMOVDQU 32(SI), Y1
	VMOVDQU (SI), Y2
	Q3KQ(0, VPSLLW, 2, 4, q6mask<>+0(SB))
	Q3KQ(2, VPSLLW, 1, 36, q6mask<>+16(SB))
	Q3KQ(4, VPSRLW, 0, 68, q6mask<>+32(SB))
	Q3KQ(6, VPSRLW, 1, 100, q6mask<>+48(SB))
	VMOVDQU 64(SI), Y1
	Q3KQ(0, VPSRLW, 2, 132, q6mask<>+64(SB))
	Q3KQ(2, VPSRLW, 3, 164, q6mask<>+80(SB))
	Q3KQ(4, VPSRLW, 4, 196, q6mask<>+96(SB))
	Q3KQ(6, VPSRLW, 5, 228, q6mask<>+112(SB))

	MOVWLZX      108(SI), AX
	VBROADCASTSS (DI), Y7
	VBROADCASTSS (R8)(AX*4), Y8
	VMULPS       Y7, Y8, Y8
	VCVTDQ2PS    Y9, Y9
	VFMADD231PS  Y8, Y9, Y0

	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q3kloop

	HSUM
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// Q2KQ accumulates 32 elements of a Q2_K half: 2-bit values of Y1 shifted
// right by sh, against yoff(DI), scaled per 16 by bytes of X11 (mask m).
#define Q2KQ(sh, yoff, m) \
	VPSRLW     $sh, Y1, Y3 \
	VPAND      Y14, Y3, Y3 \
	VPMADDUBSW yoff(DI), Y3, Y3 \
	VPSHUFB    m, X11, X5 \
	VPMOVZXBW  X5, Y5 \
	VPMADDWD   Y5, Y3, Y3 \
	VPADDD     Y3, Y9, Y9

// func dotQ2_KAVX(w *byte, x *byte, nb int, tab *float32) float32
//
// Per super-block: d·yd·Σ_g (sc_g&15)·Σ q·y − dmin·yd·Σ_g (sc_g>>4)·bsum_g.
TEXT ·dotQ2_KAVX(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    tab+24(FP), R8
	VMOVDQU mask03<>(SB), Y14
	VMOVDQU nibble<>(SB), X13
	VXORPS  Y0, Y0, Y0

q2kloop:
	PREFETCHT0 PFD(SI)
	VMOVDQU   (SI), X12
	VPSRLW    $4, X12, X11
	VPAND     X13, X11, X11
	VPMOVZXBW X11, Y11
	VPMADDWD  260(DI), Y11, Y12
	VMOVDQU   (SI), X11
	VPAND     X13, X11, X11

	VPXOR   Y9, Y9, Y9
	VMOVDQU 16(SI), Y1
	Q2KQ(0, 4, q6mask<>+0(SB))
	Q2KQ(2, 36, q6mask<>+16(SB))
	Q2KQ(4, 68, q6mask<>+32(SB))
	Q2KQ(6, 100, q6mask<>+48(SB))
	VMOVDQU 48(SI), Y1
	Q2KQ(0, 132, q6mask<>+64(SB))
	Q2KQ(2, 164, q6mask<>+80(SB))
	Q2KQ(4, 196, q6mask<>+96(SB))
	Q2KQ(6, 228, q6mask<>+112(SB))

	// acc −= yd·dmin·mins first, then acc += yd·d·sumi, as ggml.
	VBROADCASTSS (DI), Y7
	MOVWLZX      82(SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	VMULPS       Y7, Y8, Y8
	VCVTDQ2PS    Y12, Y12
	VFNMADD231PS Y8, Y12, Y0
	MOVWLZX      80(SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	VMULPS       Y7, Y8, Y8
	VCVTDQ2PS    Y9, Y9
	VFMADD231PS  Y8, Y9, Y0

	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q2kloop

	HSUM
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

DATA allff<>+0(SB)/8, $-1
DATA allff<>+8(SB)/8, $-1
DATA allff<>+16(SB)/8, $-1
DATA allff<>+24(SB)/8, $-1
GLOBL allff<>(SB), RODATA|NOPTR, $32

// bitshuf<> spreads the 4 bytes of a broadcast uint32 over 8 bytes each;
// bitsel<> then leaves byte j all-ones iff bit j%8 was set.
DATA bitshuf<>+0(SB)/8, $0x0000000000000000
DATA bitshuf<>+8(SB)/8, $0x0101010101010101
DATA bitshuf<>+16(SB)/8, $0x0202020202020202
DATA bitshuf<>+24(SB)/8, $0x0303030303030303
GLOBL bitshuf<>(SB), RODATA|NOPTR, $32

DATA bitsel<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsel<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsel<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsel<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitsel<>(SB), RODATA|NOPTR, $32

// kvalues_iq4nl in both 128-bit halves (a VPSHUFB table).
DATA kvIQ4<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA kvIQ4<>+8(SB)/8, $0x7159453526190d01
DATA kvIQ4<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA kvIQ4<>+24(SB)/8, $0x7159453526190d01
GLOBL kvIQ4<>(SB), RODATA|NOPTR, $32

// NIBBLES32 loads the 16 bytes at off(ptr) as 32 nibbles into reg (low
// nibbles in the low half, high nibbles in the high half).
#define NIBBLES32(off, ptr, reg) \
	VBROADCASTI128 off(ptr), reg \
	VPSRLVQ        Y10, reg, reg \
	VPAND          Y14, reg, reg

// BITS32 expands the 32 bits at off(ptr) into 0x10 per set bit in Y7.
#define BITS32(off, ptr) \
	VPBROADCASTD off(ptr), Y7 \
	VPSHUFB      Y9, Y7, Y7 \
	VPOR         Y8, Y7, Y7 \
	VPCMPEQB     allff<>(SB), Y7, Y7 \
	VPAND        mask10<>(SB), Y7, Y7

// SCALEFMA: acc += (fp16 at (ptr) · Y13) · float(Y6 int32 lanes).
#define SCALEFMA(ptr, acc) \
	VCVTDQ2PS    Y6, Y6 \
	MOVWLZX      (ptr), AX \
	VBROADCASTSS (R8)(AX*4), Y4 \
	VMULPS       Y13, Y4, Y4 \
	VFMADD231PS  Y4, Y6, acc

// MINFMA adds fp16 at 2(ptr) times lane 0 of Y11 to lane 0 of acc.
#define MINFMA(ptr, acc) \
	MOVWLZX     2(ptr), AX \
	VMOVSS      (R8)(AX*4), X4 \
	VFMADD231PS Y11, Y4, acc

// Signed weights in Y5 times the activation Y12, as int32 lanes in Y6.
#define SIGNEDDOT \
	VPSIGNB    Y5, Y12, Y6 \
	VPABSB     Y5, Y5 \
	VPMADDUBSW Y6, Y5, Y6 \
	VPMADDWD   Y15, Y6, Y6

// Unsigned weights in Y5 times the activation Y12, as int32 lanes in Y6.
#define UNSIGNEDDOT \
	VPMADDUBSW Y12, Y5, Y6 \
	VPMADDWD   Y15, Y6, Y6

#define IQ4ROW(ptr, acc) \
	NIBBLES32(2, ptr, Y5) \
	VPSHUFB Y5, Y11, Y5 \
	SIGNEDDOT \
	SCALEFMA(ptr, acc)

#define Q50ROW(ptr, acc) \
	BITS32(2, ptr) \
	NIBBLES32(6, ptr, Y5) \
	VPOR   Y7, Y5, Y5 \
	UNSIGNEDDOT \
	VPSUBD Y11, Y6, Y6 \
	SCALEFMA(ptr, acc)

#define Q41ROW(ptr, acc) \
	NIBBLES32(4, ptr, Y5) \
	UNSIGNEDDOT \
	SCALEFMA(ptr, acc) \
	MINFMA(ptr, acc)

#define Q51ROW(ptr, acc) \
	BITS32(4, ptr) \
	NIBBLES32(8, ptr, Y5) \
	VPOR Y7, Y5, Y5 \
	UNSIGNEDDOT \
	SCALEFMA(ptr, acc) \
	MINFMA(ptr, acc)

// Shared setup of the 32-block kernels: args (w, rs, qs, dx, aux, nb, tab,
// out) with aux the per-lane correction (Q5_0) or sum (Q4_1, Q5_1).
#define SETUP32 \
	MOVQ    w+0(FP), SI \
	MOVQ    rs+8(FP), R9 \
	MOVQ    qs+16(FP), DI \
	MOVQ    dx+24(FP), DX \
	MOVQ    aux+32(FP), R12 \
	MOVQ    nb+40(FP), CX \
	MOVQ    tab+48(FP), R8 \
	LEAQ    (SI)(R9*1), BX \
	LEAQ    (BX)(R9*1), R10 \
	LEAQ    (R10)(R9*1), R11 \
	VMOVDQU ones16<>(SB), Y15 \
	VMOVDQU nibble<>(SB), Y14 \
	VMOVDQU hishift<>(SB), Y10 \
	VMOVDQU bitshuf<>(SB), Y9 \
	VMOVDQU bitsel<>(SB), Y8 \
	VXORPS  Y0, Y0, Y0 \
	VXORPS  Y1, Y1, Y1 \
	VXORPS  Y2, Y2, Y2 \
	VXORPS  Y3, Y3, Y3

// Activation loads per block: Y12 values, Y13 scale, Y11 aux (or the
// IQ4_NL table, loaded once).
#define ACT32 \
	VMOVDQU (DI), Y12 \
	VMOVUPS (DX), Y13

#define ACT32AUX \
	ACT32 \
	VMOVDQU (R12), Y11

#define ADVANCE4(bs) \
	ADDQ $bs, SI \
	ADDQ $bs, BX \
	ADDQ $bs, R10 \
	ADDQ $bs, R11 \
	ADDQ $32, DI \
	ADDQ $32, DX \
	ADDQ $32, R12

#define PREFETCH4 \
	PREFETCHT0 PFD(SI) \
	PREFETCHT0 PFD(BX) \
	PREFETCHT0 PFD(R10) \
	PREFETCHT0 PFD(R11)

#define STORE4 \
	MOVQ out+56(FP), DI \
	HSUMTO(Y0, X0, (DI)) \
	HSUMTO(Y1, X1, 4(DI)) \
	HSUMTO(Y2, X2, 8(DI)) \
	HSUMTO(Y3, X3, 12(DI)) \
	VZEROUPPER \
	RET

#define STORE1 \
	MOVQ out+56(FP), DI \
	HSUMTO(Y0, X0, (DI)) \
	VZEROUPPER \
	RET

// The x4 kernels compute out[0:4] for the 4 rows at w (rs bytes apart);
// the x1 kernels out[0] for one row. Each is the Go twin's block loop:
//
//	out[r] = Σ_b fp16(w.d)·dx_b·Σ q·y (+ fp16(w.m)·s_b)

// func matIQ4_NLx4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matIQ4_NLx4(SB), NOSPLIT, $0-64
	SETUP32
	VMOVDQU kvIQ4<>(SB), Y11

iq4x4loop:
	ACT32
	PREFETCH4
	IQ4ROW(SI, Y0)
	IQ4ROW(BX, Y1)
	IQ4ROW(R10, Y2)
	IQ4ROW(R11, Y3)
	ADVANCE4(18)
	DECQ CX
	JNZ  iq4x4loop
	STORE4

// func matIQ4_NLx1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matIQ4_NLx1(SB), NOSPLIT, $0-64
	SETUP32
	VMOVDQU kvIQ4<>(SB), Y11

iq4x1loop:
	ACT32
	IQ4ROW(SI, Y0)
	ADVANCE4(18)
	DECQ CX
	JNZ  iq4x1loop
	STORE1

// func matQ5_0x4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matQ5_0x4(SB), NOSPLIT, $0-64
	SETUP32

q50x4loop:
	ACT32AUX
	PREFETCH4
	Q50ROW(SI, Y0)
	Q50ROW(BX, Y1)
	Q50ROW(R10, Y2)
	Q50ROW(R11, Y3)
	ADVANCE4(22)
	DECQ CX
	JNZ  q50x4loop
	STORE4

// func matQ5_0x1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matQ5_0x1(SB), NOSPLIT, $0-64
	SETUP32

q50x1loop:
	ACT32AUX
	Q50ROW(SI, Y0)
	ADVANCE4(22)
	DECQ CX
	JNZ  q50x1loop
	STORE1

// func matQ4_1x4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matQ4_1x4(SB), NOSPLIT, $0-64
	SETUP32

q41x4loop:
	ACT32AUX
	PREFETCH4
	Q41ROW(SI, Y0)
	Q41ROW(BX, Y1)
	Q41ROW(R10, Y2)
	Q41ROW(R11, Y3)
	ADVANCE4(20)
	DECQ CX
	JNZ  q41x4loop
	STORE4

// func matQ4_1x1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matQ4_1x1(SB), NOSPLIT, $0-64
	SETUP32

q41x1loop:
	ACT32AUX
	Q41ROW(SI, Y0)
	ADVANCE4(20)
	DECQ CX
	JNZ  q41x1loop
	STORE1

// func matQ5_1x4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matQ5_1x4(SB), NOSPLIT, $0-64
	SETUP32

q51x4loop:
	ACT32AUX
	PREFETCH4
	Q51ROW(SI, Y0)
	Q51ROW(BX, Y1)
	Q51ROW(R10, Y2)
	Q51ROW(R11, Y3)
	ADVANCE4(24)
	DECQ CX
	JNZ  q51x4loop
	STORE4

// func matQ5_1x1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)
TEXT ·matQ5_1x1(SB), NOSPLIT, $0-64
	SETUP32

q51x1loop:
	ACT32AUX
	Q51ROW(SI, Y0)
	ADVANCE4(24)
	DECQ CX
	JNZ  q51x1loop
	STORE1

DATA absmask<>+0(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $4

DATA f127<>+0(SB)/4, $0x42fe0000
GLOBL f127<>(SB), RODATA|NOPTR, $4

DATA permq8<>+0(SB)/4, $0
DATA permq8<>+4(SB)/4, $4
DATA permq8<>+8(SB)/4, $1
DATA permq8<>+12(SB)/4, $5
DATA permq8<>+16(SB)/4, $2
DATA permq8<>+20(SB)/4, $6
DATA permq8<>+24(SB)/4, $3
DATA permq8<>+28(SB)/4, $7
GLOBL permq8<>(SB), RODATA|NOPTR, $32

// Q8BLOCK quantizes the block of 32 floats at SI as ggml-cpu's AVX2
// quantize_row_q8_0: X6 = d = amax/127 (float32), X7 = fp16(d), also
// stored at (DI), and Y0-Y3 the 32 values round-half-even(x·127/amax) as
// int32. It takes X13 = 127 and Y15 the abs mask, and uses AX, X4, X5
// and X8. (qa8zero: a label of the function that expands it.)
#define Q8BLOCK \
	VMOVUPS      (SI), Y0 \
	VMOVUPS      32(SI), Y1 \
	VMOVUPS      64(SI), Y2 \
	VMOVUPS      96(SI), Y3 \
	VANDPS       Y15, Y0, Y4 \
	VANDPS       Y15, Y1, Y5 \
	VMAXPS       Y5, Y4, Y4 \
	VANDPS       Y15, Y2, Y5 \
	VMAXPS       Y5, Y4, Y4 \
	VANDPS       Y15, Y3, Y5 \
	VMAXPS       Y5, Y4, Y4 \
	VEXTRACTF128 $1, Y4, X5 \
	VMAXPS       X5, X4, X4 \
	VMOVHLPS     X4, X4, X5 \
	VMAXPS       X5, X4, X4 \
	VMOVSHDUP    X4, X5 \
	VMAXSS       X5, X4, X4 \
	VDIVSS       X13, X4, X6 \
	VCVTPS2PH    $0, X6, X7 \
	VPEXTRW      $0, X7, AX \
	MOVW         AX, (DI) \
	VXORPS       X8, X8, X8 \
	VUCOMISS     X8, X4 \
	JEQ          qa8zero \
	VDIVSS       X4, X13, X8 \
qa8zero: \
	VBROADCASTSS X8, Y8 \
	VMULPS       Y8, Y0, Y0 \
	VMULPS       Y8, Y1, Y1 \
	VMULPS       Y8, Y2, Y2 \
	VMULPS       Y8, Y3, Y3 \
	VROUNDPS     $0, Y0, Y0 \
	VROUNDPS     $0, Y1, Y1 \
	VROUNDPS     $0, Y2, Y2 \
	VROUNDPS     $0, Y3, Y3 \
	VCVTPS2DQ    Y0, Y0 \
	VCVTPS2DQ    Y1, Y1 \
	VCVTPS2DQ    Y2, Y2 \
	VCVTPS2DQ    Y3, Y3

// Q8SUM puts Σq of Q8BLOCK's Y0-Y3 in X9's low lane (int32), using Y10.
#define Q8SUM \
	VPADDD       Y1, Y0, Y9 \
	VPADDD       Y3, Y2, Y10 \
	VPADDD       Y10, Y9, Y9 \
	VEXTRACTI128 $1, Y9, X10 \
	VPADDD       X10, X9, X9 \
	VPHADDD      X9, X9, X9 \
	VPHADDD      X9, X9, X9

// Q8PACK stores Q8BLOCK's Y0-Y3 as 32 int8 at dst (Y14 = permq8).
#define Q8PACK(dst) \
	VPACKSSDW Y1, Y0, Y0 \
	VPACKSSDW Y3, Y2, Y2 \
	VPACKSSWB Y2, Y0, Y0 \
	VPERMD    Y0, Y14, Y0 \
	VMOVDQU   Y0, dst

// func quantQ8AVX(x *float32, y *byte, nb int, stride int, withSum bool)
//
// ggml-cpu's AVX2 quantize_row_q8_0 (stride 34) / quantize_row_q8_1
// (stride 36, withSum): per block of 32, d = amax/127, q = round-half-even
// (x·127/amax), s = fp16(d·Σq).
TEXT ·quantQ8AVX(SB), NOSPLIT, $0-33
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         stride+24(FP), R9
	MOVBLZX      withSum+32(FP), R10
	VBROADCASTSS absmask<>(SB), Y15
	VMOVDQU      permq8<>(SB), Y14
	VMOVSS       f127<>(SB), X13
	LEAQ         2(DI), R11
	TESTQ        R10, R10
	JEQ          qa8loop
	LEAQ         4(DI), R11

qa8loop:
	Q8BLOCK
	TESTQ        R10, R10
	JEQ          qa8pack
	Q8SUM
	VCVTDQ2PS    X9, X9
	VMULSS       X9, X6, X9
	VCVTPS2PH    $0, X9, X9
	VPEXTRW      $0, X9, AX
	MOVW         AX, 2(DI)

qa8pack:
	Q8PACK((R11))
	ADDQ      $128, SI
	ADDQ      R9, DI
	ADDQ      R9, R11
	DECQ      CX
	JNZ       qa8loop
	VZEROUPPER
	RET

// func quantQ8TileAVX(x *float32, y *byte, nb int, dx *float32, corr *int32, step int, off int32)
//
// quantQ8AVX's Q8_0 blocks (stride 34) of one column and, for each block
// b, the tile layout's operands of that column (Act.fillB16 below the AMX
// tiles): dx[step·b] = float32(fp16(d)), corr[step·b] = off·Σq.
TEXT ·quantQ8TileAVX(SB), NOSPLIT, $0-52
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         dx+24(FP), R13
	MOVQ         corr+32(FP), R14
	MOVQ         step+40(FP), R8
	SHLQ         $2, R8
	MOVL         off+48(FP), R12
	VBROADCASTSS absmask<>(SB), Y15
	VMOVDQU      permq8<>(SB), Y14
	VMOVSS       f127<>(SB), X13

qa8loop:
	Q8BLOCK
	VCVTPH2PS    X7, X9
	VMOVSS       X9, (R13)
	Q8SUM
	VMOVD        X9, AX
	IMULL        R12, AX
	MOVL         AX, (R14)
	Q8PACK(2(DI))
	ADDQ         $128, SI
	ADDQ         $34, DI
	ADDQ         R8, R13
	ADDQ         R8, R14
	DECQ         CX
	JNZ          qa8loop
	VZEROUPPER
	RET

// func fp32ToFP16AVX(x *float32, y *uint16, n int)
//
// y[i] = FP32ToFP16(x[i]) for n a multiple of 8 (vcvtps2ph, round to
// nearest even).
TEXT ·fp32ToFP16AVX(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JEQ  h16done

h16loop:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VMOVDQU   X0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       h16loop

h16done:
	VZEROUPPER
	RET

// Q5_K prompt tile: one weight row against the 4 Q8_K columns at x, x+xs,
// x+2·xs, x+3·xs, the row's scales, mins and 5-bit values unpacked once
// per super-block for the 4 columns. Each column runs dotQ5_KAVX's chain
// on its own registers (8 int32 lanes of exact sums and one fused
// multiply-add per super-block by d·yd; the mins' scalar fused
// multiply-subtract by dmin·yd; hsum_float_8 plus the mins at the end),
// so every value is bit-identical to dotQ5_KAVX and dotQ5_KLanes. The
// column registers are Y16-Y19 (float lanes), Y24-Y27 (int32 sums) and
// X20-X23 (mins): EVEX, AVX-512 VL/BW.
//
//	func q5kt14(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

#define Q5C0(off) off(DI)
#define Q5C1(off) off(DI)(R13*1)
#define Q5C2(off) off(DI)(R13*2)
#define Q5C3(off) off(R11)

// Q5MIN: the column's mins term, macc −= (dmin·yd)·float(Σ bsum pairs ·
// mins) (X2 the mins, X1 dmin), as dotQ5_KAVX.
#define Q5MIN(col, macc) \
	VMOVDQU      col(260), X12 \
	VPHADDW      col(276), X12, X12 \
	VPMADDWD     X2, X12, X12 \
	VBROADCASTSS col(0), X7 \
	VMULSS       X7, X1, X8 \
	VPHADDD      X12, X12, X12 \
	VPHADDD      X12, X12, X12 \
	VCVTDQ2PS    X12, X12 \
	VFNMADD231SS X8, X12, macc

// Q5PAIR: the column's products with the pair's values Y3, Y4 (scales Y5,
// Y6) added to its sums.
#define Q5PAIR(col, yoff, isum) \
	VPMADDUBSW col(yoff), Y3, Y9 \
	VPMADDUBSW col(yoff+32), Y4, Y10 \
	VPMADDWD   Y5, Y9, Y9 \
	VPMADDWD   Y6, Y10, Y10 \
	VPADDD     Y9, isum, isum \
	VPADDD     Y10, isum, isum

// Q5UNPACK unpacks the pair of sub-blocks at qoff(SI) as Q5KSUB does (the
// fifth bits from Y15, shifted on by 2) into Y3, Y4 and their scales into
// Y5, Y6, then runs the 4 columns.
#define Q5UNPACK(qoff, yoff, m0, m1) \
	VMOVDQU    qoff(SI), Y3 \
	VPSRLW     $4, Y3, Y4 \
	VPAND      Y14, Y3, Y3 \
	VPAND      Y14, Y4, Y4 \
	VPSLLW     $4, Y15, Y7 \
	VPAND      Y13, Y7, Y7 \
	VPOR       Y7, Y3, Y3 \
	VPSLLW     $3, Y15, Y8 \
	VPAND      Y13, Y8, Y8 \
	VPOR       Y8, Y4, Y4 \
	VPSRLW     $2, Y15, Y15 \
	VPSHUFB    m0, Y11, Y5 \
	VPSHUFB    m1, Y11, Y6 \
	Q5PAIR(Q5C0, yoff, Y24) \
	Q5PAIR(Q5C1, yoff, Y25) \
	Q5PAIR(Q5C2, yoff, Y26) \
	Q5PAIR(Q5C3, yoff, Y27)

// Q5SUM: acc += (d·yd)·float(sums) (Y0: d).
#define Q5SUM(col, acc, isum) \
	VCVTDQ2PS    isum, isum \
	VBROADCASTSS col(0), Y7 \
	VMULPS       Y7, Y0, Y8 \
	VFMADD231PS  Y8, isum, acc

// Q5STORE: hsum_float_8 of acc plus the mins, to (R12), then the next
// output column.
#define Q5STORE(acc, macc) \
	VMOVAPS acc, Y0 \
	HSUM \
	VADDSS  macc, X0, X0 \
	VMOVSS  X0, (R12) \
	ADDQ    R9, R12

TEXT ·q5kt14(SB), NOSPLIT, $0-56
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    xs+16(FP), R13
	MOVQ    nb+24(FP), CX
	MOVQ    tab+32(FP), R8
	LEAQ    (DI)(R13*2), R11
	ADDQ    R13, R11
	VMOVDQU nibble<>(SB), Y14
	VMOVDQU mask10<>(SB), Y13
	VPXORD  Y16, Y16, Y16
	VPXORD  Y17, Y17, Y17
	VPXORD  Y18, Y18, Y18
	VPXORD  Y19, Y19, Y19
	VPXORD  X20, X20, X20
	VPXORD  X21, X21, X21
	VPXORD  X22, X22, X22
	VPXORD  X23, X23, X23

q5kt14l:
	PREFETCHT0 PFD(SI)
	PREFETCHT0 PFD+64(SI)
	PREFETCHT0 PFD+128(SI)
	K4SCALES
	MOVWLZX      2(SI), AX
	VMOVSS       (R8)(AX*4), X1
	Q5MIN(Q5C0, X20)
	Q5MIN(Q5C1, X21)
	Q5MIN(Q5C2, X22)
	Q5MIN(Q5C3, X23)
	VPXORD       Y24, Y24, Y24
	VPXORD       Y25, Y25, Y25
	VPXORD       Y26, Y26, Y26
	VPXORD       Y27, Y27, Y27
	VMOVDQU      16(SI), Y15
	Q5UNPACK(48, 4, shufk4<>+0(SB), shufk4<>+32(SB))
	Q5UNPACK(80, 68, shufk4<>+64(SB), shufk4<>+96(SB))
	Q5UNPACK(112, 132, shufk4<>+128(SB), shufk4<>+160(SB))
	Q5UNPACK(144, 196, shufk4<>+192(SB), shufk4<>+224(SB))
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Y0
	Q5SUM(Q5C0, Y16, Y24)
	Q5SUM(Q5C1, Y17, Y25)
	Q5SUM(Q5C2, Y18, Y26)
	Q5SUM(Q5C3, Y19, Y27)
	ADDQ         $176, SI
	ADDQ         $292, DI
	ADDQ         $292, R11
	DECQ         CX
	JNZ          q5kt14l

	MOVQ    out+40(FP), R12
	MOVQ    ldo+48(FP), R9
	Q5STORE(Y16, X20)
	Q5STORE(Y17, X21)
	Q5STORE(Y18, X22)
	Q5STORE(Y19, X23)
	VZEROUPPER
	RET

// Q3_K prompt tile: one weight row against the 8 Q8_K columns at x +
// c·xs, the row's scales, 2-bit values and high bits unpacked once per
// super-block for all of them. Each column runs dotQ3_KAVX's chain on its
// own registers (8 int32 lanes of exact sums, one fused multiply-add per
// super-block by d·yd, hsum_float_8 at the end), so every value is
// bit-identical to dotQ3_KAVX and dotQ3_KLanes. Column registers: Y16-Y23
// (float lanes) and Y24-Y31 (int32 sums), EVEX (AVX-512 VL/BW).
//
//	func q3kt18(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
//
// Columns: c0 (DI), c1 (DI)(R13*1), c2 (DI)(R13*2), c3 (R11), c4
// (R11)(R13*1), c5 (R12), c6 (R12)(R13*1), c7 (R12)(R13*2), with R11 =
// DI+3·xs and R12 = DI+5·xs.

#define Q3C0(off) off(DI)
#define Q3C1(off) off(DI)(R13*1)
#define Q3C2(off) off(DI)(R13*2)
#define Q3C3(off) off(R11)
#define Q3C4(off) off(R11)(R13*1)
#define Q3C5(off) off(R12)
#define Q3C6(off) off(R12)(R13*1)
#define Q3C7(off) off(R12)(R13*2)

// Q3DOT: the column's products with the values Y3 (2-bit) and Y4 (4 where
// the high bit is clear), scaled per 16 by the words of Y5, added to its
// sums.
#define Q3DOT(col, yoff, isum) \
	VPMADDUBSW col(yoff), Y3, Y6 \
	VPMADDUBSW col(yoff), Y4, Y7 \
	VPSUBW     Y7, Y6, Y6 \
	VPMADDWD   Y5, Y6, Y6 \
	VPADDD     Y6, isum, isum

// Q3GROUP unpacks group g as Q3KQ does and runs the columns' Q3DOT on it
// through dots.
#define Q3GROUP(sh, hop, hs, yoff, m, dots) \
	VPSRLW    $sh, Y1, Y3 \
	VPAND     Y14, Y3, Y3 \
	hop       $hs, Y2, Y4 \
	VPANDN    Y13, Y4, Y4 \
	VPSHUFB   m, X11, X5 \
	VPMOVSXBW X5, Y5 \
	dots(yoff)

#define Q3DOTS4(yoff) \
	Q3DOT(Q3C0, yoff, Y24) \
	Q3DOT(Q3C1, yoff, Y25) \
	Q3DOT(Q3C2, yoff, Y26) \
	Q3DOT(Q3C3, yoff, Y27)

#define Q3DOTS8(yoff) \
	Q3DOTS4(yoff) \
	Q3DOT(Q3C4, yoff, Y28) \
	Q3DOT(Q3C5, yoff, Y29) \
	Q3DOT(Q3C6, yoff, Y30) \
	Q3DOT(Q3C7, yoff, Y31)

#define Q3SUMS4 \
	Q3SUM(Q3C0, Y16, Y24) \
	Q3SUM(Q3C1, Y17, Y25) \
	Q3SUM(Q3C2, Y18, Y26) \
	Q3SUM(Q3C3, Y19, Y27)

#define Q3SUMS8 \
	Q3SUMS4 \
	Q3SUM(Q3C4, Y20, Y28) \
	Q3SUM(Q3C5, Y21, Y29) \
	Q3SUM(Q3C6, Y22, Y30) \
	Q3SUM(Q3C7, Y23, Y31)

#define Q3STORES4 \
	Q3STORE(Y16) \
	Q3STORE(Y17) \
	Q3STORE(Y18) \
	Q3STORE(Y19)

#define Q3STORES8 \
	Q3STORES4 \
	Q3STORE(Y20) \
	Q3STORE(Y21) \
	Q3STORE(Y22) \
	Q3STORE(Y23)

// Q3SUM: acc += (d·yd)·float(sums) (Y0: d), and the sums start again.
#define Q3SUM(col, acc, isum) \
	VCVTDQ2PS    isum, Y6 \
	VBROADCASTSS col(0), Y7 \
	VMULPS       Y7, Y0, Y8 \
	VFMADD231PS  Y8, Y6, acc \
	VPXORD       isum, isum, isum

// Q3STORE: hsum_float_8 of acc to (R9), then the next output column.
#define Q3STORE(acc) \
	VMOVAPS acc, Y0 \
	HSUM \
	VMOVSS  X0, (R9) \
	ADDQ    R10, R9

// Q3TILE is the whole kernel over the columns the macros name (unused
// column registers stay zero and are never stored).
#define Q3TILE(dots, sums, stores, label) \
	MOVQ    w+0(FP), SI \
	MOVQ    x+8(FP), DI \
	MOVQ    xs+16(FP), R13 \
	MOVQ    nb+24(FP), CX \
	MOVQ    tab+32(FP), R8 \
	LEAQ    (DI)(R13*2), R11 \
	ADDQ    R13, R11 \
	LEAQ    (R11)(R13*2), R12 \
	VMOVDQU mask03<>(SB), Y14 \
	VMOVDQU mask04<>(SB), Y13 \
	VPXORD  Y16, Y16, Y16 \
	VPXORD  Y17, Y17, Y17 \
	VPXORD  Y18, Y18, Y18 \
	VPXORD  Y19, Y19, Y19 \
	VPXORD  Y20, Y20, Y20 \
	VPXORD  Y21, Y21, Y21 \
	VPXORD  Y22, Y22, Y22 \
	VPXORD  Y23, Y23, Y23 \
	VPXORD  Y24, Y24, Y24 \
	VPXORD  Y25, Y25, Y25 \
	VPXORD  Y26, Y26, Y26 \
	VPXORD  Y27, Y27, Y27 \
	VPXORD  Y28, Y28, Y28 \
	VPXORD  Y29, Y29, Y29 \
	VPXORD  Y30, Y30, Y30 \
	VPXORD  Y31, Y31, Y31 \
label: \
	PREFETCHT0 PFD(SI) \
	PREFETCHT0 PFD+64(SI) \
	MOVL    96(SI), AX \
	MOVL    100(SI), BX \
	MOVL    104(SI), DX \
	MOVL    AX, R9 \
	ANDL    $0x0f0f0f0f, R9 \
	MOVL    DX, R10 \
	ANDL    $0x03030303, R10 \
	SHLL    $4, R10 \
	ORL     R10, R9 \
	VMOVD   R9, X11 \
	MOVL    BX, R9 \
	ANDL    $0x0f0f0f0f, R9 \
	MOVL    DX, R10 \
	SHRL    $2, R10 \
	ANDL    $0x03030303, R10 \
	SHLL    $4, R10 \
	ORL     R10, R9 \
	VPINSRD $1, R9, X11, X11 \
	MOVL    AX, R9 \
	SHRL    $4, R9 \
	ANDL    $0x0f0f0f0f, R9 \
	MOVL    DX, R10 \
	SHRL    $4, R10 \
	ANDL    $0x03030303, R10 \
	SHLL    $4, R10 \
	ORL     R10, R9 \
	VPINSRD $2, R9, X11, X11 \
	MOVL    BX, R9 \
	SHRL    $4, R9 \
	ANDL    $0x0f0f0f0f, R9 \
	MOVL    DX, R10 \
	SHRL    $6, R10 \
	ANDL    $0x03030303, R10 \
	SHLL    $4, R10 \
	ORL     R10, R9 \
	VPINSRD $3, R9, X11, X11 \
	VPSUBB  bytes32<>(SB), X11, X11 \
	VMOVDQU 32(SI), Y1 \
	VMOVDQU (SI), Y2 \
	Q3GROUP(0, VPSLLW, 2, 4, q6mask<>+0(SB), dots) \
	Q3GROUP(2, VPSLLW, 1, 36, q6mask<>+16(SB), dots) \
	Q3GROUP(4, VPSRLW, 0, 68, q6mask<>+32(SB), dots) \
	Q3GROUP(6, VPSRLW, 1, 100, q6mask<>+48(SB), dots) \
	VMOVDQU 64(SI), Y1 \
	Q3GROUP(0, VPSRLW, 2, 132, q6mask<>+64(SB), dots) \
	Q3GROUP(2, VPSRLW, 3, 164, q6mask<>+80(SB), dots) \
	Q3GROUP(4, VPSRLW, 4, 196, q6mask<>+96(SB), dots) \
	Q3GROUP(6, VPSRLW, 5, 228, q6mask<>+112(SB), dots) \
	MOVWLZX      108(SI), AX \
	VBROADCASTSS (R8)(AX*4), Y0 \
	sums \
	ADDQ $110, SI \
	ADDQ $292, DI \
	ADDQ $292, R11 \
	ADDQ $292, R12 \
	DECQ CX \
	JNZ  label \
	MOVQ out+40(FP), R9 \
	MOVQ ldo+48(FP), R10 \
	stores \
	VZEROUPPER \
	RET

TEXT ·q3kt18(SB), NOSPLIT, $0-56
	Q3TILE(Q3DOTS8, Q3SUMS8, Q3STORES8, q3kt18l)

// func q3kt14(w *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)
TEXT ·q3kt14(SB), NOSPLIT, $0-56
	Q3TILE(Q3DOTS4, Q3SUMS4, Q3STORES4, q3kt14l)


// F16ROW runs one weight row's octet at src (widened into Y15) against
// the 3 columns in Y12-Y14 into the row's accumulators a0-a2.
#define F16ROW(src, a0, a1, a2) \
	VCVTPH2PS   src, Y15 \
	VFMADD231PS Y12, Y15, a0 \
	VFMADD231PS Y13, Y15, a1 \
	VFMADD231PS Y14, Y15, a2

// F16ACC loads 6 of a pass's parked accumulators (at oN(R12)(AX*1)).
#define F16ACC(o0, y0, o1, y1, o2, y2, o3, y3, o4, y4, o5, y5) \
	VMOVUPS o0(R12)(AX*1), y0 \
	VMOVUPS o1(R12)(AX*1), y1 \
	VMOVUPS o2(R12)(AX*1), y2 \
	VMOVUPS o3(R12)(AX*1), y3 \
	VMOVUPS o4(R12)(AX*1), y4 \
	VMOVUPS o5(R12)(AX*1), y5

// F16PARK stores them back.
#define F16PARK(o0, y0, o1, y1, o2, y2, o3, y3, o4, y4, o5, y5) \
	VMOVUPS y0, o0(R12)(AX*1) \
	VMOVUPS y1, o1(R12)(AX*1) \
	VMOVUPS y2, o2(R12)(AX*1) \
	VMOVUPS y3, o3(R12)(AX*1) \
	VMOVUPS y4, o4(R12)(AX*1) \
	VMOVUPS y5, o5(R12)(AX*1)

// F16RED stores at dst the sum of one pair's four octet accumulators (at
// a0..a3 off R12) in dotF16AVX's order: (a0+a1)+(a2+a3), then HSUM.
#define F16RED(a0, a1, a2, a3, dst) \
	VMOVUPS a0(R12), Y0 \
	VADDPS  a1(R12), Y0, Y0 \
	VMOVUPS a2(R12), Y2 \
	VADDPS  a3(R12), Y2, Y2 \
	VADDPS  Y2, Y0, Y0 \
	HSUM \
	VMOVSS  X0, dst

// f16t43A is the AVX2 F16 tile of 4 rows (rs bytes apart) by 3 float32
// columns (cs bytes apart) over ng groups of 32, for prefill on CPUs
// without AVX-512. It keeps dotF16QAVX's order: four accumulators per
// pair, accumulator k over the k-th of four equal ranges of ⌊ng/4⌋ groups
// (octets in order), the groups past them into the first. Four per pair
// do not fit 16 registers for a tile of 12 pairs, so the tile makes one
// pass per range, each straight through its bytes, with the 12 pairs in
// Y0-Y11 (3 column and 1 weight register beside them: per octet 12 FMAs,
// 4 widenings and 3 loads), parking each pass's accumulators in s (384
// floats; the last pass takes the first range's back); the end sums each
// pair's four as dotF16QAVX does ((a0+a1)+(a2+a3), HSUM), so every value
// is VecDot's bit for bit. (The tile before it kept dotF16AVX's order,
// accumulator k over octet k of every group, and made its four passes
// over blocks of 16 groups: 10–30% slower on TinyLlama's shapes,
// docs/PERFORMANCE.md, issue 18, sitting 9.)

// F16QOCT runs one octet of the 3 columns (at xo off DI, R13 bytes apart)
// against the 4 weight rows' (at wo off SI) into Y0-Y11.
#define F16QOCT(xo, wo) \
	VMOVUPS xo(DI), Y12 \
	VMOVUPS xo(DI)(R13*1), Y13 \
	VMOVUPS xo(DI)(R13*2), Y14 \
	F16ROW(wo(SI), Y0, Y1, Y2) \
	F16ROW(wo(SI)(R9*1), Y3, Y4, Y5) \
	F16ROW(wo(SI)(R9*2), Y6, Y7, Y8) \
	F16ROW(wo(SI)(R10*1), Y9, Y10, Y11)

// F16QGROUP runs one group of 32 (four octets in order) and moves on.
#define F16QGROUP \
	F16QOCT(0, 0) \
	F16QOCT(32, 16) \
	F16QOCT(64, 32) \
	F16QOCT(96, 48) \
	ADDQ $64, SI \
	ADDQ $128, DI

// F16T43RED stores the tile's 12 sums at DI (columns R13 bytes apart).
#define F16T43RED \
	F16RED(0, 384, 768, 1152, 0(DI)) \
	F16RED(32, 416, 800, 1184, 0(DI)(R13*1)) \
	F16RED(64, 448, 832, 1216, 0(DI)(R13*2)) \
	F16RED(96, 480, 864, 1248, 4(DI)) \
	F16RED(128, 512, 896, 1280, 4(DI)(R13*1)) \
	F16RED(160, 544, 928, 1312, 4(DI)(R13*2)) \
	F16RED(192, 576, 960, 1344, 8(DI)) \
	F16RED(224, 608, 992, 1376, 8(DI)(R13*1)) \
	F16RED(256, 640, 1024, 1408, 8(DI)(R13*2)) \
	F16RED(288, 672, 1056, 1440, 12(DI)) \
	F16RED(320, 704, 1088, 1472, 12(DI)(R13*1)) \
	F16RED(352, 736, 1120, 1504, 12(DI)(R13*2)) \
	VZEROUPPER \
	RET

// func f16t43A(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)
TEXT ·f16t43A(SB), NOSPLIT, $0-64
	MOVQ rs+8(FP), R9
	MOVQ cs+24(FP), R13
	MOVQ s+56(FP), R12
	MOVQ w+0(FP), SI
	MOVQ x+16(FP), DI
	MOVQ ng+32(FP), R8
	LEAQ (R9)(R9*2), R10
	MOVQ R8, BX
	SHRQ $2, BX // groups per range
	XORQ AX, AX // the pass's slot in s

f16qpass:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ   BX, CX
	TESTQ  CX, CX
	JZ     f16qpark

f16qloop:
	F16QGROUP
	DECQ CX
	JNZ  f16qloop

f16qpark:
	F16PARK(0, Y0, 32, Y1, 64, Y2, 96, Y3, 128, Y4, 160, Y5)
	F16PARK(192, Y6, 224, Y7, 256, Y8, 288, Y9, 320, Y10, 352, Y11)
	ADDQ $384, AX
	CMPQ AX, $1536
	JLT  f16qpass

	// The groups past the four ranges, into the first range's sums.
	MOVQ BX, CX
	SHLQ $2, CX
	NEGQ CX
	ADDQ R8, CX
	JZ   f16qred
	XORQ AX, AX
	F16ACC(0, Y0, 32, Y1, 64, Y2, 96, Y3, 128, Y4, 160, Y5)
	F16ACC(192, Y6, 224, Y7, 256, Y8, 288, Y9, 320, Y10, 352, Y11)

f16qrest:
	F16QGROUP
	DECQ CX
	JNZ  f16qrest
	F16PARK(0, Y0, 32, Y1, 64, Y2, 96, Y3, 128, Y4, 160, Y5)
	F16PARK(192, Y6, 224, Y7, 256, Y8, 288, Y9, 320, Y10, 352, Y11)

f16qred:
	MOVQ out+40(FP), DI
	MOVQ ldo+48(FP), R13
	F16T43RED
