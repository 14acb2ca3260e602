//go:build amd64 && !noasm

package ggml

import (
	"os"
	"strconv"
	"unsafe"
)

// The AVX2 tier's F16 matrix kernel (CPUs without AVX-512, whose F16
// kernels are in gemmf_amd64.go): 4x3 tiles for prefill (f16t43A), four
// rows at a time for decode (f16r4QAVX), the row kernel (dotF16QAVX) for
// the leftovers. All keep the tier's own order (dotF16QGo: four
// accumulators, each over a quarter of the row), which lets the tile run
// straight through each quarter's bytes. Decode row after row through
// dotF16QAVX read four quarter-row streams at once and streamed at
// 18–24 GB/s on a Zen 5 core; four rows side by side, each one stream,
// read 25–36 (BenchmarkF16StreamRows, docs/PERFORMANCE.md, sitting 15).
// F16 prefill on AVX2 was first one row dot per (row, column), two
// widenings per FMA (TinyLlama F16 pp128 0.54–0.61× llama.cpp's AVX2
// build, docs/PERFORMANCE.md, sitting 5); then a tile over dotF16AVX's
// order, four passes over each block of 16 groups (0.80–0.94×, sittings 5
// and 6); with this one, 0.97–1.25× (sitting 9).

// f16R4MinN is the least row length (elements) at which the AVX2 tier's
// F16 decode runs f16r4QAVX (four rows side by side) rather than
// dotF16QAVX row after row: 0 (always), but 2048 on AMD families before
// 0x1A (Zen 1–3; Zen 4 has AVX-512 and takes that tier). On the Zen 5 VM
// the four rows streamed 26–36 GB/s against 18–24 (sitting 15). On the
// Zen 3 VM (family 0x19 model 1, 2026-12-07) short rows streamed better
// one after another (BenchmarkF16StreamRows, three alternations, GB/s of
// weights per CPU second: 9.4–10.1 against 7.1–8.6 at 32000×288,
// stories15M's head), and stories15M and stories110M F16 generation rose
// 25–50% that way (docs/PERFORMANCE.md, sitting 18); TinyLlama's rows of
// 2048 and 5632 did not (four alternations at 1 thread: 5.8–6.3 t/s four
// rows at a time, 4.8–5.5 row after row). FLOWCHAT_F16R4MIN overrides it.
// Same bits either way.
var f16R4MinN = 0

// cpuFamily is CPUID's display family (the base family plus, for 0xF,
// the extended family).
func cpuFamily() uint32 {
	s := cpuSignature()
	f := s >> 8 & 0xF
	if f == 0xF {
		f += s >> 20 & 0xFF
	}
	return f
}

//go:noescape
func cpuSignature() uint32

//go:noescape
func f16r4QAVX(w *uint16, rs int, x *uint16, n int, out *float32)

//go:noescape
func f16t43A(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)

func init() {
	if hasAVX2 && !hasAVX512 {
		gemmImpl[F16] = gemmF16A
		prepKinds[F16] = prepKindF32
		if cpuIsAMD() && cpuFamily() < 0x1A {
			f16R4MinN = 2048
		}
	}
	if v, err := strconv.Atoi(os.Getenv("FLOWCHAT_F16R4MIN")); err == nil && v >= 0 {
		f16R4MinN = v
	}
}

// gemmF16A walks 4x3 tiles, columns in groups of 3 over all rows (the
// caller's chunk, in L2; the three float32 columns in L1 as far as they
// fit); leftover rows and columns, and decode, go through the row kernel
// on the F16 columns. The tile reads the float32 columns at every width:
// in one pass per quarter they beat F16 columns widened in the tile (the
// AVX-512 tier's choice past f16ColsL1) at n = 5632 too: 26.7–29.6 against
// 23.6–25.6 GMAC/s, 64-row chunks by 128 columns (a throwaway benchmark of
// both one-pass tiles, docs/PERFORMANCE.md, sitting 9).
//
// A last one or two columns past the groups of 3 (from 3 columns on) go
// through the tile too, as the last 3 columns (recomputing one or two, to
// the same bits), not through the row kernel, which read the chunk's rows
// once more for each. On the Zen 3 VM five columns of 2048×2048 in 64-row
// chunks ran 21.4–27.3 GMAC/s (median ~26) against 21.3–23.0 (a throwaway
// copy of BenchmarkMatMulActF16Shapes, four alternations); at 128 columns
// (42·3 + 2) the change is within that VM's noise (docs/PERFORMANCE.md,
// sitting 21).
func gemmF16A(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := 2 * n
	var s [384]float32
	c := 0
	for ; c < a.cols && a.cols >= 3; c += 3 {
		c = min(c, a.cols-3)
		r := 0
		for ; r+4 <= rows; r += 4 {
			f16t43A(&w[r*rs], rs, &a.xf[c*n], 4*n, n/32, &dst[c*ldd+r], 4*ldd, &s[0])
		}
		for ; r < rows; r++ {
			for cc := c; cc < c+3; cc++ {
				dst[cc*ldd+r] = dotF16QAsm(n, w[r*rs:(r+1)*rs], a.Column(cc))
			}
		}
	}
	rows4Q(n, w, rows, a, c, dst, ldd)
}

// rows4Q is the AVX2 tier's F16 decode: columns c0… against the rows,
// four rows at a time through f16r4QAVX (rows n%8 == 0, n > 0: the
// kernel's prefetch distance is a multiple of the row), the rest row by
// row. Both give dotF16QGo's bits.
func rows4Q(n int, w []byte, rows int, a *Act, c0 int, dst []float32, ldd int) {
	if n <= 0 || n%8 != 0 || n < f16R4MinN {
		rows16(dotF16QAsm, n, w, rows, a, c0, dst, ldd)
		return
	}
	rs := 2 * n
	for c := c0; c < a.cols; c++ {
		x, out := a.Column(c), dst[c*ldd:c*ldd+rows]
		r := 0
		for ; r+4 <= rows; r += 4 {
			f16r4QAVX((*uint16)(unsafe.Pointer(&w[r*rs])), rs, (*uint16)(unsafe.Pointer(&x[0])), n, &out[r])
		}
		for ; r < rows; r++ {
			out[r] = dotF16QAsm(n, w[r*rs:(r+1)*rs], x)
		}
	}
}
