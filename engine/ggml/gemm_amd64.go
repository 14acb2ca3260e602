//go:build amd64 && !noasm

package ggml

import "golang.org/x/sys/cpu"

// hasVNNI reports whether the AVX-512 VNNI tier runs here (EVEX-encoded
// 256-bit vpdpbusd and the 32 vector registers of AVX-512VL).
var hasVNNI = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// hasAVXVNNI reports whether the AVX-VNNI tier's Q4_0 and Q8_0 kernels
// run here: the VEX-encoded vpdpbusd (Alder Lake and newer desktops) on a
// CPU without the AVX-512 VNNI tier. Other types keep the AVX2 kernels.
var hasAVXVNNI = hasAVX2 && cpu.X86.HasAVXVNNI && !hasVNNI

// tileFunc is the uniform signature of the tile kernels in gemm_amd64.s.
type tileFunc func(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x1AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x4AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40t24AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80x1AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80x4AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80t24AVX2(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x4AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40t24AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80x4AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80t24AVX2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x1VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x4VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40t44VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80x1VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80x4VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80t44VNNI(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x4VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40t44VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p1R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p3R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p4R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80x4VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80t44VNNIR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p1R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p2R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p3R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p4R4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80z48(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80z18(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p1(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p2(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p3(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f4p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40f1p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p1(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p2(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p3(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80f4p4(w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, tab *float32, out *float32, ldo int)

// tileSet is one weight type's kernels in one tier: a tr×tc tile, a strip
// of 4 rows by one column (decode) and one row by one column; off is the
// activation correction they expect (Act.corr = off·Σ4).
type tileSet struct {
	t                Type
	tier             string
	tr, tc           int
	tile, strip, one tileFunc
	off              int32
	z                bool // 512-bit tiles over column groups of 8 (gemmz_amd64.s)
	// r4: the weights are in the interleaved layout (Rows4): the tile,
	// strip and flat kernels take a group's rows one block (18 bytes)
	// apart (a 2-row tile starts at the group's row 0 or 2); rows past the
	// last full group are row-major and run the 1-row kernels.
	r4 bool
	// pairs: the interleaved layout pairs the blocks too (rows4Pairs).
	pairs bool
}

// The kernel sets by tier. Q4_0 feeds unsigned nibbles q (w = q−8) and
// corrects by 8·Σx: subtracted in AVX2, the accumulator's starting value
// −8·Σx in VNNI. Q8_0 in VNNI feeds w+128 and starts from −128·Σx; AVX2
// uses the sign trick and needs no correction.
var (
	avx2Tiles = map[Type]*tileSet{
		Q4_0: {Q4_0, "avx2", 2, 4, q40t24AVX2, q40x4AVX2, q40x1AVX2, 8, false, false, false},
		Q8_0: {Q8_0, "avx2", 2, 4, q80t24AVX2, q80x4AVX2, q80x1AVX2, 0, false, false, false},
	}
	vnniTiles = map[Type]*tileSet{
		Q4_0: {Q4_0, "vnni", 4, 4, q40t44VNNI, q40x4VNNI, q40x1VNNI, -8, true, false, false},
		Q8_0: {Q8_0, "vnni", 4, 4, q80t44VNNI, q80x4VNNI, q80x1VNNI, -128, true, false, false},
	}
	// avx2Rows4 and vnniRows4 are the tiers' kernels on the interleaved
	// layout (Rows4): the same arithmetic, so bit-identical to avx2Tiles
	// and vnniTiles. The AVX2 tier's Q4_0 pairs the blocks as well.
	avx2Rows4 = map[Type]*tileSet{
		Q4_0: {Q4_0, "avx2", 2, 4, q40t24AVX2R4, q40x4AVX2R4, q40x1AVX2, 8, false, true, true},
		Q8_0: {Q8_0, "avx2", 2, 4, q80t24AVX2R4, q80x4AVX2R4, q80x1AVX2, 0, false, true, false},
	}
	// avxvnniTiles and avxvnniRows4: the AVX-VNNI tier's Q4_0 and Q8_0
	// (the AVX2 kernels with vpdpbusd, gemm_amd64.s), bit-identical to
	// avx2Tiles.
	avxvnniTiles = map[Type]*tileSet{
		Q4_0: {Q4_0, "avxvnni", 2, 4, q40t24AVXV, q40x4AVXV, q40x1AVXV, -8, false, false, false},
		Q8_0: {Q8_0, "avxvnni", 2, 4, q80t24AVXV, q80x4AVX2, q80x1AVX2, -128, false, false, false},
	}
	avxvnniRows4 = map[Type]*tileSet{
		Q4_0: {Q4_0, "avxvnni", 2, 4, q40t24AVXVR4, q40x4AVXVR4, q40x1AVXV, -8, false, true, true},
		Q8_0: {Q8_0, "avxvnni", 2, 4, q80t24AVXVR4, q80x4AVX2R4, q80x1AVX2, -128, false, true, false},
	}
	vnniRows4 = map[Type]*tileSet{
		Q4_0: {Q4_0, "vnni", 4, 4, q40t44VNNIR4, q40x4VNNIR4, q40x1VNNI, -8, true, true, false},
		Q8_0: {Q8_0, "vnni", 4, 4, q80t44VNNIR4, q80x4VNNIR4, q80x1VNNI, -128, true, true, false},
	}
)

func init() {
	if !hasVNNI { // installAMX says why otherwise
		amxState = "no amx: the AMX tier runs on top of AVX-512 VNNI, which this CPU lacks"
	}
	if !hasAVX2 {
		return
	}
	tiles, rows4 := avx2Tiles, avx2Rows4
	if hasVNNI {
		tiles, rows4 = vnniTiles, vnniRows4
	}
	if hasAVXVNNI {
		tiles, rows4 = withTier(avx2Tiles, avxvnniTiles), withTier(avx2Rows4, avxvnniRows4)
		prepHi16 = false
	}
	for t, k := range tiles {
		useTiles(t, k)
	}
	for t, k := range rows4 {
		gemmRows4[t], rows4Pairs[t] = k.run, k.pairs
	}
	installRepack(tiles[Q8_0])
	if hasVNNI {
		installK16() // the K-quant tile layouts (AVX-512 VNNI and BW)
		installAMX() // above VNNI where the CPU, the OS and the self-check allow
	}
	installR16() // Q4_0 and Q8_0 in the tile layout where the AMX tier is not
}

// withTier is base with the types of over replaced by over's kernels.
func withTier(base, over map[Type]*tileSet) map[Type]*tileSet {
	m := make(map[Type]*tileSet, len(base))
	for t, k := range base {
		m[t] = k
	}
	for t, k := range over {
		m[t] = k
	}
	return m
}

// useTiles installs k as the matrix (and matrix-vector) kernels of t.
func useTiles(t Type, k *tileSet) {
	gemmImpl[t] = k.run
	prepOffsets[t], prepKinds[t] = k.off, prepKindQ8
	if k.z {
		prepGroups[t] = 8
	}
	matVecImpl[t] = k.matVec
	dotImpl[t] = k.dot
}

// run walks the tiles: columns in groups of tc, each group over all rows
// (which the caller sizes to stay in cache) in groups of tr; leftover rows
// one by one, leftover columns as 4-row strips.
func (k *tileSet) run(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	if a.group == 8 {
		k.runZ(n, w, rows, a, dst, ldd)
		return
	}
	nb := n / 32
	rs, cs := k.rowSize(n), 32*nb
	rs4, tab := k.rs4(rs), &fp16Table[0]
	tileRows := rows
	if k.r4 {
		tileRows = rows &^ 3 // the interleaved groups
	}
	c := 0
	for ; c+k.tc <= a.cols; c += k.tc {
		qs, dx, corr := &a.qs[c*cs], &a.dx8[c*8*nb], &a.corr[c*8*nb]
		r := 0
		for ; r+k.tr <= tileRows; r += k.tr {
			k.tile(k.row(w, r, rs), rs4, qs, dx, corr, cs, nb, tab, &dst[c*ldd+r], 4*ldd)
		}
		for cc := c; cc < c+k.tc; cc++ {
			k.rest(n, w, r, rows, a, cc, dst[cc*ldd:])
		}
	}
	for ; c < a.cols; c++ {
		k.column(n, w, rows, a, c, dst[c*ldd:])
	}
}

// column computes rows rows of w against column c into out[0:rows].
func (k *tileSet) column(n int, w []byte, rows int, a *Act, c int, out []float32) {
	nb := n / 32
	rs, cs := k.rowSize(n), 32*nb
	qs, dx, corr := &a.qs[c*cs], &a.dx8[c*8*nb], &a.corr[c*8*nb]
	rs4 := k.rs4(rs)
	r := 0
	for ; r+4 <= rows; r += 4 {
		k.strip(&w[r*rs], rs4, qs, dx, corr, cs, nb, &fp16Table[0], &out[r], 4)
	}
	k.rest(n, w, r, rows, a, c, out)
}

// rest computes rows [r0, rows) against column c one by one.
func (k *tileSet) rest(n int, w []byte, r0, rows int, a *Act, c int, out []float32) {
	nb := n / 32
	rs, cs := k.rowSize(n), 32*nb
	qs, dx, corr := &a.qs[c*cs], &a.dx8[c*8*nb], &a.corr[c*8*nb]
	for r := r0; r < rows; r++ {
		k.one(&w[r*rs], rs, qs, dx, corr, cs, nb, &fp16Table[0], &out[r], 4)
	}
}

func (k *tileSet) rowSize(n int) int { return k.t.RowSize(n) }

// row points at row r (of a tile, a multiple of tr) of w: in the
// interleaved layout row r of a group is its first block, r%4 blocks into
// the group.
func (k *tileSet) row(w []byte, r, rs int) *byte {
	if k.r4 && r%4 != 0 {
		return &w[(r&^3)*rs+r%4*k.rs4(rs)]
	}
	return &w[r*rs]
}

// rs4 is the row stride the 4-row kernels take: rs row-major, the block
// size in the interleaved layout (where a group of 4 rows still starts at
// 4·rs, so the callers' &w[r·rs] holds for both).
func (k *tileSet) rs4(rs int) int {
	if k.r4 {
		return k.t.RowSize(k.t.BlockSize())
	}
	return rs
}

// matVec is MatVec through a pooled Act.
func (k *tileSet) matVec(n int, w, x []byte, dst []float32) {
	if n < 32 {
		clear(dst)
		return
	}
	a := actPool.Get().(*Act)
	a.prepare(k.t, n, x, 1, prepKindQ8, k.off, 1)
	k.column(n, w, len(dst), a, 0, dst)
	a.x = nil
	actPool.Put(a)
}

// dot is the single-row product; its result goes through the pooled Act
// because a local would escape through the kernel's func value.
func (k *tileSet) dot(n int, w, x []byte) float32 {
	if n < 32 {
		return 0
	}
	a := actPool.Get().(*Act)
	a.prepare(k.t, n, x, 1, prepKindQ8, k.off, 1)
	k.rest(n, w, 0, 1, a, 0, a.one[:])
	d := a.one[0]
	a.x = nil
	actPool.Put(a)
	return d
}

// runZ walks the column groups of 8 (a.group == 8), each over all rows in
// 4-row tiles, leftover rows one by one. A last partial group of nc
// columns runs the flat kernel of ⌈nc/2⌉ column pairs (gemmflat_amd64.s),
// through a scratch tile when nc is odd; the 1-row kernel always takes the
// 4 pairs (zero columns past the end) through the scratch tile.
func (k *tileSet) runZ(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := k.rowSize(n)
	for r := 0; r < rows; {
		nr := 1
		if r+4 <= rows {
			nr = 4
		}
		if rowsOuter {
			for g := 0; 8*g < a.cols; g++ {
				k.zgroup(n, &w[r*rs], nr, a, g, dst[r:], ldd)
			}
		}
		r += nr
	}
	if rowsOuter {
		return
	}
	for g := 0; 8*g < a.cols; g++ {
		for r := 0; r < rows; {
			nr := 1
			if r+4 <= rows {
				nr = 4
			}
			k.zgroup(n, &w[r*rs], nr, a, g, dst[r:], ldd)
			r += nr
		}
	}
}

// rowsOuter runs every column group over a 4-row tile before the next
// tile (false: each group over all rows).
var rowsOuter = true

// zgroup computes nr (4 or 1) rows at w against column group g into
// dst[c·ldd + r] for the group's columns c.
func (k *tileSet) zgroup(n int, w *byte, nr int, a *Act, g int, dst []float32, ldd int) {
	nb := n / 32
	rs := k.rowSize(n)
	slot := g * nb * 8
	qs, dx, corr := &a.qs[32*slot], &a.dx8[8*slot], &a.corr[8*slot]
	c0, nc := 8*g, min(8, a.cols-8*g)
	pairs := (nc + 1) / 2
	if !flatGEMM {
		pairs = 4
	}
	if nr == 4 {
		rs = k.rs4(rs)
	}
	if nr == 4 && nc == 2*pairs {
		k.ztile(pairs, w, rs, qs, dx, corr, nb, &dst[c0*ldd], 4*ldd)
		return
	}
	var part [8 * 4]float32 // a partial group's rows, 4 per column
	p := pairs
	if nr == 1 {
		p = 0
	}
	k.ztile(p, w, rs, qs, dx, corr, nb, &part[0], 16)
	for c := 0; c < nc; c++ {
		copy(dst[(c0+c)*ldd:(c0+c)*ldd+nr], part[4*c:4*c+nr])
	}
}

// flatGEMM selects the flat kernels for batches of 2-7 columns and for a
// last partial group of 8 (false: 256-bit tiles and strips below 8
// columns, the 4×8 tile padded with zero columns for a partial group; kept
// for comparison in the benchmarks). zFull selects the 4×8 tile of
// gemmz_amd64.s for full groups of 8 (false: the flat kernel of 4 pairs).
var flatGEMM, zFull = true, false

// ztile calls k's kernel for 4 rows by pairs column pairs (pairs = 0: the
// 1-row kernel over 4 pairs) directly (a call through a func value would
// make out escape).
func (k *tileSet) ztile(pairs int, w *byte, rs int, qs *byte, dx *float32, corr *int32, nb int, out *float32, ldo int) {
	tab := &fp16Table[0]
	if pairs == 4 && zFull && k.t != Q4_0 && !k.r4 {
		pairs = 5
	}
	if k.t == Q4_0 {
		// The pair layout (Act.pairs) is read by the flat kernels only.
		if k.r4 && pairs > 0 {
			switch pairs {
			case 1:
				q40f4p1R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
			case 2:
				q40f4p2R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
			case 3:
				q40f4p3R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
			default:
				q40f4p4R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
			}
			return
		}
		switch pairs {
		case 0:
			q40f1p4(w, rs, qs, dx, corr, nb, tab, out, ldo)
		case 1:
			q40f4p1(w, rs, qs, dx, corr, nb, tab, out, ldo)
		case 2:
			q40f4p2(w, rs, qs, dx, corr, nb, tab, out, ldo)
		case 3:
			q40f4p3(w, rs, qs, dx, corr, nb, tab, out, ldo)
		default:
			q40f4p4(w, rs, qs, dx, corr, nb, tab, out, ldo)
		}
		return
	}
	if k.r4 && pairs > 0 {
		switch pairs {
		case 1:
			q80f4p1R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
		case 2:
			q80f4p2R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
		case 3:
			q80f4p3R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
		default:
			q80f4p4R4(w, rs, qs, dx, corr, nb, tab, out, ldo)
		}
		return
	}
	switch pairs {
	case 0:
		q80z18(w, rs, qs, dx, corr, nb, tab, out, ldo)
	case 1:
		q80f4p1(w, rs, qs, dx, corr, nb, tab, out, ldo)
	case 2:
		q80f4p2(w, rs, qs, dx, corr, nb, tab, out, ldo)
	case 3:
		q80f4p3(w, rs, qs, dx, corr, nb, tab, out, ldo)
	case 4:
		q80f4p4(w, rs, qs, dx, corr, nb, tab, out, ldo)
	default:
		q80z48(w, rs, qs, dx, corr, nb, tab, out, ldo)
	}
}

//go:noescape
func q40x1AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x4AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40t24AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40x4AVXVR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q40t24AVXVR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80t24AVXV(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)

//go:noescape
func q80t24AVXVR4(w *byte, rs int, qs *byte, dx *float32, corr *int32, cs int, nb int, tab *float32, out *float32, ldo int)
