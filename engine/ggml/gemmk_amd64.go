//go:build amd64 && !noasm

package ggml

import (
	"os"
	"strconv"

	"golang.org/x/sys/cpu"
)

// The K-quant matrix kernels (gemmk_amd64.s): 4-row strips for decode and
// 1-row × 8-column tiles for prompt batches, bit-identical to the
// single-row kernels (dotQ4_KAVX, dotQ6_KAVX) for every (row, column).
// With AVX-512 BW/VNNI, groups of 8 columns take the flat kernels q4kf8
// and q6kf8 (gemmkflat_amd64.s) over the columns prepared by
// Act.fillKFlat.

//go:noescape
func q4kx4(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q4kt18(w *byte, aux *byte, x *byte, xs int, nb int, tab *float32, out *float32, ldo int, step int)

//go:noescape
func q6kx4(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q6kx4I(w *byte, x *byte, nb int, tab *float32, out *float32)

//go:noescape
func q4kx4I(w *byte, x *byte, nb int, tab *float32, out *float32)

//go:noescape
func q4kx4V(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q6kx4V(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q6kt18(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

// kTypes are the weight types with K-quant matrix kernels.
var kTypes = []Type{Q4_K, Q6_K}

// stripFunc is the signature of the 4-row strips.
type stripFunc func(w *byte, rs int, x *byte, xs int, nb int, tab *float32, out *float32, ldo int)

// hasKVNNI reports whether the VNNI strips run here (EVEX-encoded 256-bit
// VPDPWSSD, VPMADDUBSW on Y16-Y31: AVX-512 VL, BW and VNNI).
var hasKVNNI = hasVNNI && cpu.X86.HasAVX512BW

// q4kStrip and q6kStrip are the decode strips in use: the VNNI ones where
// the CPU has them, the AVX2 ones otherwise (the same bits).
var q4kStrip, q6kStrip stripFunc = q4kx4, q6kx4

// installKTiles installs the K-quant matrix kernels; installAVX2 calls it
// last, so that its single-row MatVec does not replace the strips.
func installKTiles() {
	if hasKVNNI {
		q4kStrip, q6kStrip = q4kx4V, q6kx4V
		kFlat = true
	}
	for _, t := range kTypes {
		useKTiles(t)
	}
	installQ2KTiles()
	if !hasKVNNI {
		gemmRows4[Q4_K] = kTiles(Q4_K).rows4
		gemmRows4[Q6_K] = kTiles(Q6_K).rows4
	}
}

// useKTiles installs the strips (MatVec) and tiles (MatMulAct) of t; the
// tiles read the Q8_K columns in place (prepKindK).
func useKTiles(t Type) {
	k := kTiles(t)
	gemmImpl[t] = k.run
	prepKinds[t] = prepKindK
	matVecImpl[t] = k.matVec
}

// kTiles selects the kernels of one K-quant type.
type kTiles Type

// strip computes the 4 rows at w (rs bytes apart) against column x into
// out[0:4].
func (k kTiles) strip(w *byte, rs int, x *byte, nb int, out *float32) {
	if Type(k) == Q4_K {
		q4kStrip(w, rs, x, 0, nb, &fp16Table[0], out, 0)
	} else {
		q6kStrip(w, rs, x, 0, nb, &fp16Table[0], out, 0)
	}
}

// tile computes the row at w against the 8 columns at x (xs bytes apart)
// into out[c·ldo/4]; aux is the group's part of Act.kaux (Q4_K); step is
// the bytes from one of the row's super-blocks to the next (the block
// size row-major, four of them interleaved).
func (k kTiles) tile(w, aux, x *byte, xs, nb int, out *float32, ldo, step int) {
	if Type(k) == Q4_K {
		q4kt18(w, aux, x, xs, nb, &fp16Table[0], out, ldo, step)
	} else {
		q6kt18(w, step, x, xs, nb, &fp16Table[0], out, ldo)
	}
}

// stripI computes the 4 rows of the interleaved group at w against column
// x into out[0:4].
func (k kTiles) stripI(w, x *byte, nb int, out *float32) {
	if Type(k) == Q4_K {
		q4kx4I(w, x, nb, &fp16Table[0], out)
	} else {
		q6kx4I(w, x, nb, &fp16Table[0], out)
	}
}

// one is the single-row kernel.
func (k kTiles) one(w, x *byte, nb int) float32 {
	if Type(k) == Q4_K {
		return dotQ4_KAVX(w, x, nb, &fp16Table[0])
	}
	return dotQ6_KAVX(w, x, nb, &fp16Table[0])
}

// matVec runs 4-row strips, the leftover rows one by one.
func (k kTiles) matVec(n int, w, x []byte, dst []float32) {
	nb := n / QK_K
	if nb == 0 {
		clear(dst)
		return
	}
	rs := Type(k).RowSize(n)
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		k.strip(&w[r*rs], rs, &x[0], nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dst[r] = k.one(&w[r*rs], &x[0], nb)
	}
}

// run walks the columns in groups of 8, each group row by row over all
// rows (which the caller sizes to stay in cache); leftover columns go
// through the strips.
func (k kTiles) run(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	nb := n / QK_K
	rs, xs := Type(k).RowSize(n), a.xs
	c := 0
	for ; c+8 <= a.cols; c += 8 {
		var aux *byte
		if Type(k) == Q4_K {
			aux = &a.kaux[c/8*nb*256]
		}
		if len(a.kf) > 0 {
			k.flatGroup(nb, w, rows, a, c, dst[c*ldd:], ldd)
			continue
		}
		for r := 0; r < rows; r++ {
			k.tile(&w[r*rs], aux, &a.x[c*xs], xs, nb, &dst[c*ldd+r], 4*ldd, rs/nb)
		}
	}
	if c < a.cols && len(a.kf) > c/8*nb*kfStride(Type(k)) {
		k.flatPart(nb, w, rows, a, c, dst, ldd)
		return
	}
	for ; c < a.cols; c++ {
		k.matVec(n, w, a.Column(c), dst[c*ldd:c*ldd+rows])
	}
}

// kfRows is the rows a long row's super-block ranges are interleaved
// over (their accumulators on the stack, 96 floats each).
const kfRows = 64

// flatGroup runs every row of w against the group of 8 columns c.. of
// a.kf into out[c'·ldd + r] for the group's columns c' (relative to c).
// Rows whose group part exceeds kfMaxBytes run in ranges of super-blocks
// that fit it, kfRows rows at a time, carrying the accumulators: each
// range's columns stay in L1 while the rows pass (read once per row, the
// whole row's columns did not, and ran slower than the AVX2 tiles).
func (k kTiles) flatGroup(nb int, w []byte, rows int, a *Act, c int, out []float32, ldd int) {
	t := Type(k)
	rs, bs, st := t.RowSize(nb*QK_K), t.RowSize(QK_K), kfStride(t)
	kf := a.kf[c/8*nb*st:]
	kt := max(1, min(nb, kfMaxBytes/st))
	if kt == nb {
		for r := 0; r < rows; r++ {
			k.flat(&w[r*rs], &kf[0], nb, &out[r], 4*ldd, nil, 0)
		}
		return
	}
	var acc [kfRows * 96]float32
	for r0 := 0; r0 < rows; r0 += kfRows {
		r1 := min(r0+kfRows, rows)
		for b0 := 0; b0 < nb; b0 += kt {
			b1, flags := min(b0+kt, nb), 0
			if b0 > 0 {
				flags |= 1
			}
			if b1 < nb {
				flags |= 2
			}
			for r := r0; r < r1; r++ {
				k.flat(&w[r*rs+b0*bs], &kf[b0*st], b1-b0, &out[r], 4*ldd, &acc[96*(r-r0)], flags)
			}
		}
	}
}

// flat runs k's flat kernel: the row at w against the 8 columns at kf
// (see q6kf8 for st and flags).
func (k kTiles) flat(w, kf *byte, nb int, out *float32, ldo int, st *float32, flags int) {
	if Type(k) == Q4_K {
		q4kf8(w, kf, nb, &fp16Table[0], out, ldo, st, flags)
	} else {
		q6kf8(w, kf, nb, &fp16Table[0], out, ldo, st, flags)
	}
}

// flatPart runs the last, partial group of columns c.. (3-7, padded with
// zero columns in Act.kf) through flatGroup, kfRows rows at a time into a
// scratch.
func (k kTiles) flatPart(nb int, w []byte, rows int, a *Act, c int, dst []float32, ldd int) {
	rs := Type(k).RowSize(nb * QK_K)
	var part [8 * kfRows]float32
	for r0 := 0; r0 < rows; r0 += kfRows {
		r1 := min(r0+kfRows, rows)
		k.flatGroup(nb, w[r0*rs:], r1-r0, a, c, part[:], kfRows)
		for cc := c; cc < a.cols; cc++ {
			copy(dst[cc*ldd+r0:cc*ldd+r1], part[(cc-c)*kfRows:(cc-c)*kfRows+r1-r0])
		}
	}
}

//go:noescape
func q6kf8(w *byte, x *byte, nb int, tab *float32, out *float32, ldo int, st *float32, flags int)

//go:noescape
func q4kf8(w *byte, x *byte, nb int, tab *float32, out *float32, ldo int, st *float32, flags int)

// kAheadK is how far ahead of its reads q6kx4I and q4kx4I prefetch
// (bytes); FLOWCHAT_KAHEAD (bytes) overrides it, for measuring elsewhere.
// On the Zen 3 VM (2026-12-07) 1, 2, 4 and 8 KiB read the same share of
// ReadSum within the VM's noise (84–103%, BenchmarkStreamVsRead).
var kAheadK = 4096

func init() {
	if v, err := strconv.Atoi(os.Getenv("FLOWCHAT_KAHEAD")); err == nil && v >= 0 && v <= 1<<16 {
		kAheadK = v
	}
}

// rows4 is the AVX2 tier's Q4_K and Q6_K matrix kernel on the interleaved
// layout (Rows4: groups of 4 rows, super-block by super-block; the rows
// past the last group row-major). CPUs with AVX-512 VNNI hold these types
// in a 16-row tile layout instead (k16.go). Decode reads each group as one
// stream (q4kx4I, q6kx4I) where the row-major strips (q4kx4, q6kx4) read
// four rows of 0.6–4.6 KB side by side, which the hardware prefetcher of a
// Zen 3 core did not follow: the Q6_K strip read 57–61% of ReadSum on
// 2048-wide rows, 100–108% interleaved (docs/PERFORMANCE.md, issue 18,
// sitting 18). Prompts run the same 1×8 tiles (q4kt18, q6kt18), stepping
// four blocks from one of a row's super-blocks to the next. Every value
// is the row-major kernels' bits (TestKRows4MatchesLanes).
func (k kTiles) rows4(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	t := Type(k)
	nb := n / QK_K
	rs, bs, xs, g4 := t.RowSize(n), t.RowSize(QK_K), a.xs, rows/4*4
	if nb == 0 {
		for c := 0; c < a.cols; c++ {
			clear(dst[c*ldd : c*ldd+rows])
		}
		return
	}
	_ = w[rows*rs-1]
	c := 0
	for ; c+8 <= a.cols; c += 8 {
		_ = a.x[(c+7)*xs+nb*292-1]
		var aux *byte
		if t == Q4_K {
			aux = &a.kaux[c/8*nb*256]
		}
		for r := 0; r < rows; r++ {
			off, step := r*rs, bs
			if r < g4 {
				off, step = r/4*4*rs+r%4*bs, 4*bs
			}
			k.tile(&w[off], aux, &a.x[c*xs], xs, nb, &dst[c*ldd+r], 4*ldd, step)
		}
	}
	for ; c < a.cols; c++ {
		x, out := a.Column(c), dst[c*ldd:c*ldd+rows]
		_ = x[nb*292-1]
		for r := 0; r < g4; r += 4 {
			k.stripI(&w[r*rs], &x[0], nb, &out[r])
		}
		for r := g4; r < rows; r++ {
			out[r] = k.one(&w[r*rs], &x[0], nb)
		}
	}
}
