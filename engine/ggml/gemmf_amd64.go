//go:build amd64 && !noasm

package ggml

import "golang.org/x/sys/cpu"

// hasAVX512 reports whether the 512-bit float kernels run here.
var hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

//go:noescape
func f32t33Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)

//go:noescape
func f16t43Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)

//go:noescape
func f16h43Z(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int)

//go:noescape
func f16t46Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)

//go:noescape
func f16h46Z(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int, s *float32)

//go:noescape
func f16t44Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int, s *float32)

//go:noescape
func f16h44Z(w *byte, rs int, x *uint16, cs int, ng int, out *float32, ldo int, s *float32)

//go:noescape
func f16p46Z(w *byte, rs int, x *uint16, cs int, ng int, acc *float32, first int)

//go:noescape
func f16r46Z(lo *float32, hi *float32, out *float32, ldo int)

//go:noescape
func fp16ToF32Z(x *uint16, y *float32, n int)

//go:noescape
func f32x4Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)

//go:noescape
func f16x4Z(w *byte, rs int, x *float32, cs int, ng int, out *float32, ldo int)

// floatTiles is a float weight type's matrix kernel: 3x3 register tiles
// for F32, 4x3 tiles widening F16 in registers (f16t43Z); both keep the
// row kernels' lane order, so every value equals VecDot's bit for bit.
type floatTiles struct{ t Type }

var avx512Float = map[Type]*floatTiles{F32: {F32}, F16: {F16}}

func cpuVendor() (b, d, c uint32)

// cpuIsAMD reports whether CPUID's vendor string is "AuthenticAMD".
func cpuIsAMD() bool {
	b, d, c := cpuVendor()
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163
}

// f16RowStream: F16 decode runs the row kernel row after row (rows16)
// rather than 4-row strips with a software prefetch, on AMD CPUs only. One
// core streaming a 5632x2048 matrix from a 600 MiB set (BenchmarkF16Stream,
// three alternations each): on the AMD EPYC VM the rows ran 25.5–27.8 GB/s
// against the strips' 24.5–25.3; on the Intel Xeon (AMX) VM 6.6–7.7
// against 10.7–12.5 (2026-11-26), where TinyLlama F16 generation ran at
// 0.70–0.85× llama.cpp with the rows. Same bits either way.
var f16RowStream bool

// f16Cols46: the 4-row F16 tiles (4x6, 4x4) read the columns as F16,
// widened in the tile (f16h46Z: 10 widenings per 24 FMAs instead of 4,
// but half the L1 footprint), on AMD CPUs; Intel's keep float32 columns.
// On the AMD EPYC VM (Zen 5, 48 KiB L1D; 2026-11-27) one core ran a 64-row
// chunk against 6 columns at 89–94 GMAC/s with F16 columns against 68–81
// with float32 ones at n = 2048, 71–84 against 62–67 at n = 5632, and
// TinyLlama F16's pp128/pp512 rose 10–20% (docs/PERFORMANCE.md). On the
// Xeon AMX VM, eight alternations at n = 5632 read 22.3–38.5 GMAC/s
// (median 31.7) with F16 columns against 22.7–42.8 (34.6).
var f16Cols46 bool

func init() {
	if !hasAVX512 {
		return
	}
	f16RowStream = cpuIsAMD()
	f16Cols46 = f16RowStream
	for t, k := range avx512Float {
		gemmImpl[t] = k.run
		prepKinds[t] = prepKindF32
	}
	widenF16 = widenF16Asm
}

func (k *floatTiles) run(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	switch {
	case a.cols < 3 && k.t == F16 && f16RowStream: // decode: the row kernel, row after row
		rows16(dotF16Asm, n, w, rows, a, 0, dst, ldd)
		return
	case a.cols < 3: // no whole tile: 4-row strips (decode)
		for c := 0; c < a.cols; c++ {
			k.strips(n, w, rows, a, c, dst[c*ldd:c*ldd+rows])
		}
		return
	case k.t == F32:
		k.runF32(n, w, rows, a, dst, ldd)
		return
	}
	k.runF16(n, w, rows, a, dst, ldd)
}

// f16ColsL1 is the most bytes three float32 columns take before runF16
// reads them as F16 instead (f16h43Z: 7 conversions per 24 FMAs instead of
// 4, but half the L1 footprint). On the AMD EPYC VM (48 KiB L1D, a noisy
// host: ranges over alternated runs) the float32 columns were faster at
// n = 2048 (a 64-row chunk against 128 columns: 102–116 against 78–100
// GMAC/s), the F16 ones at n = 5632 (81–87 against 55–69).
const f16ColsL1 = 32 << 10

// runF16 walks 4x6 tiles of F16 rows w (widened in registers), columns in
// groups of 6 over all rows, so the chunk's rows stream from L2 while the
// columns stay in L1 as far as they fit; then 4x4 and 4x3 tiles for the
// columns left over (f16Tail), 4-row strips for a last one or two; the
// rows left over go through the row kernel.
//
// The 4x6 tile (two passes, one per half of each group: f16t46Z) widens
// half as many weights per FMA as the 4x3 one. One core, TinyLlama's
// shapes in 64-row chunks against 128 columns (BenchmarkMatMulActF16Shapes,
// Xeon AMX VM, four alternations, GMAC/s): 2048x2048 33.7–42.2 → 37.4–48.1,
// 5632x2048 35.6–41.1 → 37.0–49.5, 2048x5632 29.8–34.3 → 31.4–38.5.
//
// Which columns the 4-row tiles read is f16Cols46's choice (float32 or
// F16); the 4x3 tile reads F16 columns past f16ColsL1 either way. With F16
// columns, rows longer than a K-block and at least 32 rows (below, f16h46K's
// 24 KiB of accumulators, zeroed each call, would cost more than a few per
// cent), the groups of 6 go through f16h46K.
func (k *floatTiles) runF16(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := 2 * n
	half := 12*n > f16ColsL1
	xh := bytesU16(a.x)
	var s [384]float32
	c, i0 := 0, 0
	n6, tail, nt := f16Tail(a.cols)
	if f16Cols46 && n/32 > f16KBlock && n6 > 0 && rows >= 32 {
		r := f16h46K(n, w, rows, xh, n6, dst, ldd)
		for ; r < rows; r++ {
			for cc := 0; cc < 6*n6; cc++ {
				dst[cc*ldd+r] = dotImpl[F16](n, w[r*rs:(r+1)*rs], a.Column(cc))
			}
		}
		c, i0 = 6*n6, n6
	}
	for i := i0; i < n6+nt; i++ {
		width := 6
		if i >= n6 {
			width = tail[i-n6]
		}
		r := 0
		for ; r+4 <= rows; r += 4 {
			wp, out := &w[r*rs], &dst[c*ldd+r]
			switch {
			case width == 6 && f16Cols46:
				f16h46Z(wp, rs, &xh[c*n], 2*n, n/32, out, 4*ldd, &s[0])
			case width == 6:
				f16t46Z(wp, rs, &a.xf[c*n], 4*n, n/32, out, 4*ldd, &s[0])
			case width == 4 && f16Cols46:
				f16h44Z(wp, rs, &xh[c*n], 2*n, n/32, out, 4*ldd, &s[0])
			case width == 4:
				f16t44Z(wp, rs, &a.xf[c*n], 4*n, n/32, out, 4*ldd, &s[0])
			case half:
				f16h43Z(wp, rs, &xh[c*n], 2*n, n/32, out, 4*ldd)
			default:
				f16t43Z(wp, rs, &a.xf[c*n], 4*n, n/32, out, 4*ldd)
			}
		}
		for ; r < rows; r++ {
			for cc := c; cc < c+width; cc++ {
				dst[cc*ldd+r] = dotImpl[F16](n, w[r*rs:(r+1)*rs], a.Column(cc))
			}
		}
		c += width
	}
	for ; c < a.cols; c++ {
		k.strips(n, w, rows, a, c, dst[c*ldd:c*ldd+rows])
	}
}

// f16KBlock is the groups of 32 in a K-block of f16h46K's walk: six F16
// columns' block then takes 24 KiB, four rows' 16 KiB, as at n = 2048.
const f16KBlock = 64

// f16h46K runs the first n6 groups of 6 F16 columns against rows' whole
// 4-row blocks when a row is longer than a K-block (n = 5632: TinyLlama's
// FFN down): per group of columns and 8 row blocks, each K-block's two
// passes (f16p46Z) for each row block, their accumulators parked in acc
// between blocks, then the reductions (f16r46Z). Every accumulator runs
// over the same values in the same order as f16h46Z's, so the bits are
// the same; the columns' block stays in L1 across the row blocks, where
// f16h46Z's whole 66 KiB of columns does not. One core on the EPYC Zen 5
// VM (2026-11-27, GMAC/s): one 64-row chunk, in L2, against 126 columns
// at n = 5632 (a throwaway benchmark, three runs) 74–83 with f16h46Z,
// 88–92 in K-blocks of 64 groups, 82–86 of 32; the whole 2048x5632
// matrix in 64-row chunks against 128 columns
// (BenchmarkMatMulActF16Shapes, three alternations) 72.7–74.3 → 78.0–80.6.
// Swapping the column and row loops gained nothing (74–82). It returns
// the rows done.
func f16h46K(n int, w []byte, rows int, xh []uint16, n6 int, dst []float32, ldd int) int {
	var acc [8][2][384]float32
	rs, ng := 2*n, n/32
	for c := 0; c < 6*n6; c += 6 {
		x := xh[c*n:]
		for r0 := 0; r0+4 <= rows; r0 += 32 {
			nb := min(8, (rows-r0)/4)
			for k0 := 0; k0 < ng; k0 += f16KBlock {
				nk, first := min(f16KBlock, ng-k0), 0
				if k0 == 0 {
					first = 1
				}
				for b := 0; b < nb; b++ {
					wb := w[(r0+4*b)*rs+k0*64:]
					f16p46Z(&wb[0], rs, &x[k0*32], 2*n, nk, &acc[b][0][0], first)
					f16p46Z(&wb[32], rs, &x[k0*32+16], 2*n, nk, &acc[b][1][0], first)
				}
			}
			for b := 0; b < nb; b++ {
				f16r46Z(&acc[b][0][0], &acc[b][1][0], &dst[c*ldd+r0+4*b], 4*ldd)
			}
		}
	}
	return rows &^ 3
}

// f16Tail splits cols columns into n6 groups of 6 and the widths of the
// tiles after them (4 and 3), giving up one group of 6 where that leaves
// no column to the strips: 128 = 20·6 + 4 + 4, where 21·6 would leave 2
// columns to the strips, each a pass over the rows (3% of TinyLlama's
// F16 pp128). Whatever the tiles leave (at most 2 columns, only when cols
// < 7) goes through the strips.
func f16Tail(cols int) (n6 int, tail [3]int, nt int) {
	n6 = cols / 6
	rem := cols % 6
	if n6 > 0 && (rem == 1 || rem == 2 || rem == 5) {
		n6, rem = n6-1, rem+6
	}
	for ; rem >= 3; nt++ {
		tail[nt] = 4
		if rem == 3 || rem == 6 || rem == 9 {
			tail[nt] = 3
		}
		rem -= tail[nt]
	}
	return n6, tail, nt
}

// runF32 walks 3x3 tiles of float32 rows w, columns in groups of 3 over all
// rows; leftover rows and columns go through the single-row F32 kernel.
func (k *floatTiles) runF32(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := 4 * n
	c := 0
	for ; c+3 <= a.cols; c += 3 {
		r := 0
		for ; r+3 <= rows; r += 3 {
			f32t33Z(&w[r*rs], rs, &a.xf[c*n], 4*n, n/32, &dst[c*ldd+r], 4*ldd)
		}
		for ; r < rows; r++ {
			for cc := c; cc < c+3; cc++ {
				dst[cc*ldd+r] = dotImpl[F32](n, w[r*rs:(r+1)*rs], F32Bytes(a.xf[cc*n:(cc+1)*n]))
			}
		}
	}
	for ; c < a.cols; c++ {
		MatVec(F32, n, w[:rows*rs], F32Bytes(a.xf[c*n:(c+1)*n]), dst[c*ldd:c*ldd+rows])
	}
}

// strips computes rows rows of w against column c in 4-row strips of the
// 512-bit kernels (same bits as the row kernels), leftover rows one by
// one.
func (k *floatTiles) strips(n int, w []byte, rows int, a *Act, c int, out []float32) {
	rs := k.t.RowSize(n)
	x := a.xf[c*n : (c+1)*n]
	r := 0
	for ; r+4 <= rows; r += 4 {
		if k.t == F32 {
			f32x4Z(&w[r*rs], rs, &x[0], 0, n/32, &out[r], 4)
		} else {
			f16x4Z(&w[r*rs], rs, &x[0], 0, n/32, &out[r], 4)
		}
	}
	for ; r < rows; r++ {
		out[r] = dotImpl[k.t](n, w[r*rs:(r+1)*rs], a.Column(c))
	}
}

func widenF16Asm(h []uint16, f []float32) {
	n := len(h) &^ 15
	if n > 0 {
		fp16ToF32Z(&h[0], &f[0], n)
	}
	for i := n; i < len(h); i++ {
		f[i] = fp16Table[h[i]]
	}
}

// rows16 runs columns [c0, a.cols) of F16 (decode: fewer than 3
// columns) through the row kernel dot (the AVX-512 tier's dotF16Asm on
// AMD; the AVX2 tier's dotF16QAsm only where rows4Q cannot take the rows)
// on the F16 columns, one row after the other:
// with dotF16Asm the rows are one
// sequential stream, which the hardware prefetcher follows, where the
// 4-row strip reads four streams with a software prefetch. One core, a
// 5632x2048 matrix streamed from a 600 MiB set on the EPYC VM
// (BenchmarkF16Stream): 25.5–27.8 GB/s against 24.5–25.3 for the strip
// (three alternations, 2026-11-26).
// Same bits either way (the strip's lanes are the row kernel's).
func rows16(dot dotFunc, n int, w []byte, rows int, a *Act, c0 int, dst []float32, ldd int) {
	rs := 2 * n
	for c := c0; c < a.cols; c++ {
		x, out := a.Column(c), dst[c*ldd:c*ldd+rows]
		for r := range out {
			out[r] = dot(n, w[r*rs:(r+1)*rs], x)
		}
	}
}
