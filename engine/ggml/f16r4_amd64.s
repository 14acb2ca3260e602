//go:build amd64 && !noasm

#include "textflag.h"

// The AVX2 tier's F16 decode kernel: four rows at a time in dotF16QAVX's
// order (dotF16QGo), so that each row is read as one straight run of
// bytes and each column octet is widened once for the four rows.

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

// R4HSUM stores the 8 floats of y summed as ggml's hsum_float_8 (the row
// kernels' HSUM) at dst.
#define R4HSUM(y, dst) \
	VEXTRACTF128 $1, y, X1 \
	VMOVAPS      y, Y0 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0 \
	VMOVSS       X0, dst

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
	R4HSUM(Y12, 0(R13))
	R4HSUM(Y13, 4(R13))
	R4HSUM(Y14, 8(R13))
	R4HSUM(Y15, 12(R13))
	VZEROUPPER
	RET
