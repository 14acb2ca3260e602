//go:build amd64 && !noasm

#include "textflag.h"

// SUM4 adds the four 8-lane accumulators Y0-Y3 into one uint32 in AX.
#define SUM4 \
	VPADDD       Y1, Y0, Y0 \
	VPADDD       Y3, Y2, Y2 \
	VPADDD       Y2, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0x4e, X0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0xb1, X0, X1 \
	VPADDD       X1, X0, X0 \
	VMOVD        X0, AX

// func readSumAVX(p *byte, n int) uint32
//
// The 32-bit words of n bytes (n a positive multiple of 128) summed mod 2³²
// in four 8-lane accumulators, each pass prefetching the two lines 4 KiB
// ahead into L2 (ReadSum).
TEXT ·readSumAVX(SB), NOSPLIT, $0-20
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXOR  Y0, Y0, Y0
	VPXOR  Y1, Y1, Y1
	VPXOR  Y2, Y2, Y2
	VPXOR  Y3, Y3, Y3

loop:
	PREFETCHT1 4096(SI)
	PREFETCHT1 4160(SI)
	VPADDD     (SI), Y0, Y0
	VPADDD     32(SI), Y1, Y1
	VPADDD     64(SI), Y2, Y2
	VPADDD     96(SI), Y3, Y3
	ADDQ       $128, SI
	SUBQ       $128, CX
	JNZ        loop

	SUM4
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// STREAMS4 sets up the four streams over the n bytes at p (SI, DI, R8,
// R9: its quarters; CX the bytes of each) and zeroes the sums Y0-Y3;
// STREAMS4NEXT moves each on by 64 bytes and counts them off.
#define STREAMS4 \
	MOVQ  p+0(FP), SI \
	MOVQ  n+8(FP), CX \
	SHRQ  $2, CX \
	LEAQ  (SI)(CX*1), DI \
	LEAQ  (DI)(CX*1), R8 \
	LEAQ  (R8)(CX*1), R9 \
	VPXOR Y0, Y0, Y0 \
	VPXOR Y1, Y1, Y1 \
	VPXOR Y2, Y2, Y2 \
	VPXOR Y3, Y3, Y3

#define STREAMS4NEXT \
	ADDQ $64, SI \
	ADDQ $64, DI \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	SUBQ $64, CX

// func readStreamsAVX(p *byte, n int) uint32
//
// The 32-bit words of n bytes (n a positive multiple of 256) summed mod 2³²
// as four streams, the quarters of p, 64 bytes of each per pass, with no
// software prefetch (ReadStreams).
TEXT ·readStreamsAVX(SB), NOSPLIT, $0-20
	STREAMS4

streams:
	VPADDD (SI), Y0, Y0
	VPADDD 32(SI), Y1, Y1
	VPADDD (DI), Y2, Y2
	VPADDD 32(DI), Y3, Y3
	VPADDD (R8), Y0, Y0
	VPADDD 32(R8), Y1, Y1
	VPADDD (R9), Y2, Y2
	VPADDD 32(R9), Y3, Y3
	STREAMS4NEXT
	JNZ    streams

	SUM4
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// BUSY4 and BUSY8 are 4 and 8 vector integer operations on the chunk just
// loaded (Y12), as a kernel's work waits on its loads, whose results
// nothing reads (readStreamsBusy4AVX, readStreamsBusy8AVX).
#define BUSY4 \
	VPMADDUBSW Y12, Y15, Y4 \
	VPADDW     Y12, Y15, Y5 \
	VPADDW     Y12, Y14, Y6 \
	VPMADDUBSW Y12, Y14, Y7

#define BUSY8 \
	BUSY4 \
	VPMADDUBSW Y12, Y13, Y8 \
	VPADDW     Y12, Y13, Y9 \
	VPADDW     Y12, Y14, Y10 \
	VPMADDUBSW Y12, Y15, Y11

// BUSYCHUNK adds the chunk at addr into acc and does busy's work on it;
// BUSYPASS does so for 64 bytes of each stream.
#define BUSYCHUNK(addr, acc, busy) \
	VMOVDQU addr, Y12 \
	VPADDD  Y12, acc, acc \
	busy

#define BUSYPASS(busy) \
	BUSYCHUNK((SI), Y0, busy) \
	BUSYCHUNK(32(SI), Y1, busy) \
	BUSYCHUNK((DI), Y2, busy) \
	BUSYCHUNK(32(DI), Y3, busy) \
	BUSYCHUNK((R8), Y0, busy) \
	BUSYCHUNK(32(R8), Y1, busy) \
	BUSYCHUNK((R9), Y2, busy) \
	BUSYCHUNK(32(R9), Y3, busy)

// func readStreamsBusy4AVX(p *byte, n int) uint32
//
// readStreamsAVX's sum with 4 vector integer operations on each 32-byte
// chunk after its load (VPMADDUBSW and VPADDW, one to two, as the tile
// decode kernels mix them; results discarded): the read rate at a kernel's ALU
// density (BenchmarkReadBusy).
TEXT ·readStreamsBusy4AVX(SB), NOSPLIT, $0-20
	STREAMS4

readStreamsBusy4AVXloop:
	BUSYPASS(BUSY4)
	STREAMS4NEXT
	JNZ    readStreamsBusy4AVXloop

	SUM4
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func readStreamsBusy8AVX(p *byte, n int) uint32
//
// readStreamsAVX's sum with 8 vector integer operations on each 32-byte
// chunk after its load (VPMADDUBSW and VPADDW, one to two, as the tile
// decode kernels mix them; results discarded): the read rate at a kernel's ALU
// density (BenchmarkReadBusy).
TEXT ·readStreamsBusy8AVX(SB), NOSPLIT, $0-20
	STREAMS4

readStreamsBusy8AVXloop:
	BUSYPASS(BUSY8)
	STREAMS4NEXT
	JNZ    readStreamsBusy8AVXloop

	SUM4
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET
