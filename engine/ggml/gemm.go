package ggml

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// Act is a batch of activation columns prepared once for the matrix kernels
// of one weight type, so that a matrix split into chunks of rows over
// several workers (or a prefill of many tokens) unpacks its activations
// once instead of once per chunk and per token.
//
// For the 32-block types with Q8_0 activations that have matrix kernels
// (Q4_0, Q8_0) the prepared layout per column is: the int8 values
// contiguous (qs, n bytes), each block's scale repeated in 8 lanes (dx8,
// 8 float32 per block) and the per-lane offset correction of the kernel
// tier in use (corr, 8 int32 per block; see prepCorrFor). The three arrays
// have the same column stride in bytes (32 per block), which the kernels
// rely on. In groups of 8 for the Q4_0 flat kernels the same arrays hold
// the pair layout instead (fillPair). For the float types with matrix
// kernels (F32, F16) it is the columns as float32 (xf): F16 activations
// widened exactly, F32 ones used in place. The K-quant tiles (Q2_K-Q6_K)
// read the Q8_K columns in place; the flat kernels of Q4_K and Q6_K read kf
// (fillKFlat). With the AMX tier (amx.go) Q4_0 and Q8_0 columns also get
// the tile layout's operands (fillB16: d_x and the correction per block,
// and for the tiles the values packed per group of 16), for the matrices
// held in that layout.
type Act struct {
	wt   Type   // weight type the columns are prepared for
	n    int    // elements per column
	cols int    // columns
	x    []byte // cols quantized columns of wt.VecDotType(), consecutive
	xs   int    // bytes per quantized column

	prepared bool     // the kernels' layout below holds the columns
	kind     prepKind // that layout
	off      int32    // prepKindQ8: the correction's offset
	// hi16 (prepKindQ8, Q4_0 with a negative offset: the VNNI kernels):
	// lanes 4-7 carry d_x/16 and 16·corr, for the high nibbles read
	// unshifted (16·q); exact, as powers of two.
	hi16 bool
	// pairs (hi16 with groups of 8: the Q4_0 flat kernels) interleaves each
	// column pair's lanes within the group, see fillPair.
	pairs bool
	group int // prepKindQ8: columns interleaved per block (1 or 8)
	// b16: bdx, bcorr (and bqs, for the tiles) hold the tile layout's
	// operands (fillB16).
	b16 bool
	// tilesOnly (BeginTiles, with b16): qs, dx8 and corr are not filled;
	// MatMulAct goes column by column through MatVec.
	tilesOnly bool
	bdx       []float32
	bcorr     []int32
	// bstep is the elements of bdx and bcorr between a column's
	// consecutive blocks (bIndex): 16, the 16 columns of a group side by
	// side as the tiles read them, but 1 for a lone column (growB16), so
	// that decode reads 16 blocks' operands a cache line instead of one
	// line each, two lines a block besides the weights' 4.5 (Q4_0) or 8.5
	// (Q8_0). On the EPYC VM (Zen 5, 2026-11-27) that took
	// BenchmarkStreamVsRead's Q8_0 strip from a median 84% of ReadSum's
	// rate over the same bytes to 93% (six alternations).
	bstep int
	bqs   []byte
	qs    []byte
	dx8   []float32
	corr  []int32
	xf    []float32  // float columns, n apart
	xfBuf []float32  // storage of xf when widened from F16
	one   [1]float32 // result of a single-row product
	kaux  []byte     // prepKindK, Q4_K: per 8 columns and super-block, see fillK
	kf    []byte     // prepKindK with kFlat: per 8 columns and super-block, see fillKFlat
	kfOn  bool       // kf is in use (kFlat)
}

// kfMaxBytes bounds the part of a group's Act.kf that the flat kernels
// read per row in one pass: they read it once per row, and beyond L1 (n =
// 5632: 50-56 KB) ran slower than the AVX2 tiles (Q4_K 31 against 36
// column-GB/s at 8 columns, 14 against 27 at 4), so longer rows run in
// ranges of super-blocks (kTiles.flatGroup).
const kfMaxBytes = 40 << 10

// kFlat: the K-quant flat kernels (Q4_K, Q6_K) run here and read Act.kf
// (set at start-up by the CPU tier that has them).
var kFlat bool

// kfStride is the bytes of Act.kf per group of 8 columns and super-block
// for weight type t: 8 chunks × 4 column pairs × 64 activation bytes, 4
// pairs × 16 d_x; for Q4_K also 8 columns × 8 int16 sums of 32
// activations and 2 × 16 d_x for the mins.
func kfStride(t Type) int {
	if t == Q4_K {
		return 8*4*64 + 4*64 + 128 + 128
	}
	return 8*4*64 + 4*64
}

// Prepare readies cols columns of n elements each, x holding them in
// t.VecDotType() consecutively, for MatMulAct with weights of type t. The
// Act keeps x (not a copy) and reuses its own buffers: once they have grown
// to the largest batch, Prepare allocates nothing.
func (a *Act) Prepare(t Type, n int, x []byte, cols int) {
	a.Begin(t, n, x, cols)
	a.Fill(0, cols)
}

// Begin is the first half of Prepare: it records the columns and sizes the
// buffers without reading x, so that the caller may still be writing x.
// Fill(c0, c1) then prepares columns [c0, c1); calls for disjoint ranges
// may run concurrently, and every column must be filled before MatMulAct.
func (a *Act) Begin(t Type, n int, x []byte, cols int) {
	if int(t) < len(prepKinds) {
		a.begin(t, n, x, cols, prepKinds[t], prepOffsets[t], prepGroups[t])
		a.b16 = b16On[t] && a.kind == prepKindQ8
		if a.b16 {
			a.growB16(n/32, cols, !r16On)
		}
		return
	}
	a.begin(t, n, x, cols, prepKindNone, 0, 1)
}

// BeginTiles is Begin for columns that only MatMulActRows4 will take
// (every matrix of the step interleaved by InterleaveRows4). Where that
// layout is the tile layout (Q4_0 and Q8_0 on every amd64 tier), Fill then
// prepares only its operands and skips the row-major kernels' (qs, dx8,
// corr): a decode step prepares each matrix's input on one thread while
// the others wait, and this cuts that work by more than half. MatMulAct over such columns is
// still right, column by column through MatVec, only slower.
func (a *Act) BeginTiles(t Type, n int, x []byte, cols int) {
	a.Begin(t, n, x, cols)
	a.tilesOnly = a.b16
}

// prepKind is the layout a weight type's matrix kernels read.
type prepKind uint8

const (
	prepKindNone prepKind = iota // no matrix kernel: column by column through MatVec
	prepKindQ8                   // qs, dx8, corr
	prepKindF32                  // xf
	prepKindK                    // the Q8_K columns in place (x, xs apart), kaux
)

// prepare is Prepare for the kernels of one tier: kind is the layout they
// read, off the correction they expect and group the column groups they
// take for batches of at least that many columns (prepKindQ8).
func (a *Act) prepare(t Type, n int, x []byte, cols int, kind prepKind, off int32, group int) {
	a.begin(t, n, x, cols, kind, off, group)
	a.Fill(0, cols)
}

// prepHi16: Q4_0 columns with a negative offset take the hi16 lanes (the
// VNNI tier's); false where the AVX-VNNI tier runs, whose offset −8 starts
// its sums without them.
var prepHi16 = true

func (a *Act) begin(t Type, n int, x []byte, cols int, kind prepKind, off int32, group int) {
	vt := t.VecDotType()
	xs := vt.RowSize(n)
	if cols < 1 || len(x) < xs*cols {
		panic(fmt.Sprintf("ggml: Prepare %d columns of %d %v elements from %d bytes", cols, n, vt, len(x)))
	}
	checkRow(vt, n, xs)
	a.wt, a.n, a.cols, a.x, a.xs = t, n, cols, x[:xs*cols], xs
	a.kind, a.off, a.prepared = prepKindNone, off, false
	a.hi16 = kind == prepKindQ8 && t == Q4_0 && off < 0 && prepHi16
	a.pairs, a.b16, a.tilesOnly = false, false, false
	switch {
	case kind == prepKindF32 && n%32 == 0 && n > 0:
		a.kind, a.prepared = kind, true
		if vt == F32 {
			a.xf = BytesF32(a.x)
			break
		}
		if cap(a.xfBuf) < n*cols {
			a.xfBuf = make([]float32, n*cols)
		}
		a.xf = a.xfBuf[:n*cols]
	case kind == prepKindK && n%QK_K == 0 && n > 0:
		a.kind, a.prepared = kind, true
		if t == Q4_K {
			size := cols / 8 * (n / QK_K) * 256
			if cap(a.kaux) < size {
				a.kaux = make([]byte, size)
			}
			a.kaux = a.kaux[:size]
		}
		a.kf = a.kf[:0]
		a.kfOn = kFlat && (t == Q4_K || t == Q6_K)
		if a.kfOn {
			size := a.kfCols() / 8 * (n / QK_K) * kfStride(t)
			if cap(a.kf) < size {
				a.kf = make([]byte, size)
			}
			a.kf = a.kf[:size]
		}
	case kind == prepKindQ8 && n >= 32:
		g := 1
		if group > 1 && cols >= min(group, groupMin) {
			g = group
		}
		groups := (cols + g - 1) / g
		a.grow(n / 32 * groups * g)
		a.kind, a.group, a.prepared = kind, g, true
		a.pairs = a.hi16 && g == 8
	}
}

// Fill prepares columns [c0, c1) (see Begin); the call that fills the last
// column also clears the padding of a last partial column group.
func (a *Act) Fill(c0, c1 int) {
	switch a.kind {
	case prepKindF32:
		if a.wt.VecDotType() != F32 {
			widenF16(bytesU16(a.x[2*a.n*c0:2*a.n*c1]), a.xf[a.n*c0:a.n*c1])
		}
	case prepKindK:
		if a.kfOn {
			end := min(c1, a.kfCols())
			if c1 == a.cols {
				end = a.kfCols()
			}
			for c := c0; c < end; c++ {
				a.fillKFlat(c)
			}
		} else if a.wt == Q4_K {
			for c := c0; c < min(c1, a.cols/8*8); c++ {
				a.fillK(c)
			}
		}
	case prepKindQ8:
		end := c1
		if c1 == a.cols {
			end = (a.cols + a.group - 1) / a.group * a.group
		}
		for c := c0; c < end && !a.tilesOnly; c++ {
			a.fillQ8(c)
		}
		if a.b16 {
			// Only the AMX tiles (bqs) take 16 columns at once; every
			// other kernel of the layout reads the columns it is given,
			// so a decode step fills one column, not sixteen.
			end = c1
			if c1 == a.cols && len(a.bqs) > 0 {
				end = (a.cols + 15) / 16 * 16
			}
			for c := c0; c < end; c++ {
				a.fillB16(c)
			}
		}
	}
}

// FillFrom quantizes columns [c0, c1) of x, rows of n float32 values, to
// the vec-dot type into the buffer given to Begin (QuantizeActivation) and
// prepares them (Fill). Where only the tile layout's operands are asked for
// (BeginTiles) and the AMX tiles do not take the columns, it does both in
// one pass (quantTile), with the same bytes and operands. Like Fill, calls
// for disjoint ranges may run concurrently.
func (a *Act) FillFrom(x []float32, c0, c1 int) {
	vt := a.wt.VecDotType()
	if vt == F32 {
		a.Fill(c0, c1) // the columns are x's own bytes
		return
	}
	n := a.n
	if a.Blockwise() {
		nb, off := n/32, b16Off(a.wt)
		for c := c0; c < c1; c++ {
			i := a.bIndex(c, 0)
			quantTile(x[c*n:(c+1)*n], a.x[c*a.xs:(c+1)*a.xs], nb, a.bdx[i:], a.bcorr[i:], a.bstep, off)
		}
		return
	}
	for c := c0; c < c1; c++ {
		QuantizeActivation(vt, x[c*n:(c+1)*n], a.x[c*a.xs:(c+1)*a.xs])
	}
	a.Fill(c0, c1)
}

// Blockwise reports whether FillSpan may prepare the columns block range
// by block range: FillFrom's one-pass case (tile operands only, below the
// AMX tiles, with the fused kernel).
func (a *Act) Blockwise() bool {
	return quantTile != nil && a.kind == prepKindQ8 && a.b16 && a.tilesOnly && len(a.bqs) == 0 && a.wt.VecDotType() == Q8_0
}

// FillSpan quantizes and prepares elements [i0, i1) of column c from x,
// those elements' floats, as FillFrom does the whole column: i0 and i1
// multiples of 32. For Blockwise columns only;
// disjoint spans may run concurrently, so the threads that computed a
// column's parts can prepare them where they are in cache.
func (a *Act) FillSpan(x []float32, c, i0, i1 int) {
	if !a.Blockwise() || i0%32 != 0 || i1%32 != 0 || i1 > a.n || len(x) < i1-i0 {
		panic(fmt.Sprintf("ggml: FillSpan [%d, %d) of %d over columns that are not Blockwise (%v)", i0, i1, a.n, a.Blockwise()))
	}
	b0 := i0 / 32
	i := a.bIndex(c, b0)
	quantTile(x[:i1-i0], a.x[c*a.xs+34*b0:c*a.xs+34*(i1/32)], (i1-i0)/32, a.bdx[i:], a.bcorr[i:], a.bstep, b16Off(a.wt))
}

// quantTile, where set, quantizes one column's nb blocks of 32 floats to
// Q8_0 at y, as QuantizeActivation does, and writes the column's tile
// operands d_x and off·Σx into dx and corr, step apart (Act.bstep), as
// fillB16 does below the AMX tiles: one pass instead of two.
var quantTile func(x []float32, y []byte, nb int, dx []float32, corr []int32, step int, off int32)

// fillQ8 unpacks column c (zeros past the last column). With group g the
// columns are interleaved per block in groups of g: the 32-byte slot of
// column c, block b is ((c/g)·nb + b)·g + c%g (g = 1: column after column).
// With a.pairs the group's block is laid out by column pair instead (see
// fillPair).
func (a *Act) fillQ8(c int) {
	if a.pairs {
		a.fillPair(c)
		return
	}
	nb, g := a.n/32, a.group
	// hi16: lanes 4-7 take d_x/16 and 16·corr (exact: powers of two).
	hs, hc := float32(1), int32(1)
	if a.hi16 {
		hs, hc = 1.0/16, 16
	}
	for b := 0; b < nb; b++ {
		slot := ((c/g)*nb+b)*g + c%g
		qs := a.qs[32*slot : 32*slot+32]
		dx, corr := (*[8]float32)(a.dx8[8*slot:]), (*[8]int32)(a.corr[8*slot:])
		if c >= a.cols {
			clear(qs)
			clear(dx[:])
			clear(corr[:])
			continue
		}
		blk := a.x[c*a.xs+34*b:][:34]
		copy(qs, blk[2:])
		d := fp16ToFP32Normal(le16(blk))
		dh := d * hs
		s := quadSums(blk[2:])
		for l := 0; l < 4; l++ {
			dx[l], dx[l+4] = d, dh
			corr[l], corr[l+4] = a.off*s[l], a.off*hc*s[l+4]
		}
	}
}

// quadSums returns the sums of the eight groups of 4 int8 values at
// q[0:32], eight bytes at a time: each byte biased by 128 to unsigned,
// then neighbours added in 16-bit and 32-bit lanes that cannot carry into
// each other (at most 4·255). Decode prepares a matrix's input on one
// thread while the others wait, so its speed counts at high thread counts.
func quadSums(q []byte) (s [8]int32) {
	q = q[:32]
	for k := 0; k < 4; k++ {
		u := binary.LittleEndian.Uint64(q[8*k:]) ^ 0x8080808080808080
		p := u&0x00FF00FF00FF00FF + u>>8&0x00FF00FF00FF00FF
		p = p&0x0000FFFF0000FFFF + p>>16&0x0000FFFF0000FFFF
		s[2*k], s[2*k+1] = int32(uint32(p))-512, int32(p>>32)-512
	}
	return s
}

// blockSum returns the sum of the 32 int8 values at q[0:32], as quadSums
// does it: four words' byte pairs summed in 16-bit lanes (at most 4·510),
// then the lanes by one multiply into the top 16 bits.
func blockSum(q []byte) int32 {
	q = q[:32]
	var p uint64
	for k := 0; k < 4; k++ {
		u := binary.LittleEndian.Uint64(q[8*k:]) ^ 0x8080808080808080
		p += u&0x00FF00FF00FF00FF + u>>8&0x00FF00FF00FF00FF
	}
	return int32(p*0x0001000100010001>>48) - 32*128
}

// fillPair writes column c (zeros past the last column) in the pair
// layout of the Q4_0 flat kernels (hi16, groups of 8): column pair p =
// c%8/2 of a group's block owns 64 bytes of qs and 16 lanes of corr at 64p
// bytes into the block's 256; in them, 128-bit chunk i holds, as 4 dword
// lanes, column 2p's lane i, column 2p+1's lane i, column 2p's lane 4+i
// and column 2p+1's lane 4+i (lane l = values 4l..4l+3; lanes 4-7 with
// 16·corr). The block's first 16 floats of dx8 hold each pair's [d_x(2p),
// d_x(2p+1), d_x(2p)/16, d_x(2p+1)/16]: times a row's d_w, a 128-bit chunk
// of it is the scale of every lane of the pair.
func (a *Act) fillPair(c int) {
	nb := a.n / 32
	p, h := c%8/2, c%2
	for b := 0; b < nb; b++ {
		s0 := ((c/8)*nb + b) * 8
		q := (*[64]byte)(a.qs[32*s0+64*p:])
		cr := (*[16]int32)(a.corr[8*s0+16*p:])
		d := (*[16]float32)(a.dx8[8*s0:])
		var x [32]byte
		var dx float32
		if c < a.cols {
			blk := (*[34]byte)(a.x[c*a.xs+34*b:])
			x, dx = [32]byte(blk[2:]), f16(blk[:])
		}
		for i := 0; i < 4; i++ {
			lo, hi := (*[4]byte)(x[4*i:]), (*[4]byte)(x[16+4*i:])
			*(*[4]byte)(q[16*i+4*h:]) = *lo
			*(*[4]byte)(q[16*i+8+4*h:]) = *hi
			cr[4*i+h] = a.off * (int32(int8(lo[0])) + int32(int8(lo[1])) + int32(int8(lo[2])) + int32(int8(lo[3])))
			cr[4*i+2+h] = a.off * 16 * (int32(int8(hi[0])) + int32(int8(hi[1])) + int32(int8(hi[2])) + int32(int8(hi[3])))
		}
		d[4*p+h], d[4*p+2+h] = dx, dx/16
	}
}

// fillK writes column c's part of kaux, the Q4_K tiles' per-column mins
// operands: for each group of 8 columns and super-block, 256 bytes, 64 per
// column pair p: the 8 int16 sums of adjacent bsums of column 2p, those of
// column 2p+1, then float32 d_x of column 2p four times and of 2p+1 four
// times (the two 128-bit halves the tile's mins lanes use).
func (a *Act) fillK(c int) {
	nb := a.n / QK_K
	for b := 0; b < nb; b++ {
		blk := a.x[c*a.xs+292*b : c*a.xs+292*(b+1)]
		at := ((c/8)*nb+b)*256 + 64*(c%8/2) + 16*(c%2)
		for j := 0; j < 8; j++ {
			s := int16(le16(blk[260+4*j:])) + int16(le16(blk[262+4*j:]))
			put16(a.kaux[at+2*j:], uint16(s))
		}
		for j := 0; j < 4; j++ {
			copy(a.kaux[at+32+4*j:at+36+4*j], blk[:4])
		}
	}
}

// kfCols is the columns kf holds: the full groups of 8, and a last
// partial group padded with zero columns where the flat kernel over 8
// columns costs less than strips for its columns (measured, column-GB/s at
// 8 flat against 1 strip: ~60-84 against ~25-31): from 4 columns, from 5
// where rows run in ranges of super-blocks (n > 4096 or so).
func (a *Act) kfCols() int {
	need := 4
	if a.n/QK_K*kfStride(a.wt) > kfMaxBytes {
		need = 5
	}
	if a.cols%8 >= need {
		return (a.cols + 7) / 8 * 8
	}
	return a.cols / 8 * 8
}

// fillKFlat writes column c's part of kf (zeros for c past the last
// column), the flat kernels' operands: for each group of 8 columns and
// super-block, chunk j (values 32j..32j+31) of column pair p at 256j +
// 64p, column 2p's 32 values then 2p+1's (Q6_K: plus 128, unsigned for
// VPMADDUBSW against the signed q−32; Q4_K: as they are, against the
// unsigned nibbles); at 2048 + 64p, d_x of column 2p 8 times and of 2p+1
// 8 times. Q4_K then has, at 2304 + 16·(c mod 8), the column's 8 int16
// sums of 32 values (adjacent bsums), and at 2432 + 16·(c mod 8) its d_x
// 4 times (the mins lanes).
func (a *Act) fillKFlat(c int) {
	nb, st := a.n/QK_K, kfStride(a.wt)
	p, h, flip := c%8/2, c%2, uint64(0)
	if a.wt == Q6_K {
		flip = 0x8080808080808080
	}
	for b := 0; b < nb; b++ {
		k := a.kf[((c/8)*nb+b)*st:][:st]
		if c >= a.cols {
			for j := 0; j < 8; j++ {
				clear(k[256*j+64*p+32*h:][:32])
			}
			clear(k[2048+64*p+32*h:][:32])
			if a.wt == Q4_K {
				clear(k[2304+16*(c%8):][:16])
				clear(k[2432+16*(c%8):][:16])
			}
			continue
		}
		blk := a.x[c*a.xs+292*b : c*a.xs+292*(b+1)]
		for j := 0; j < 8; j++ {
			dst, src := k[256*j+64*p+32*h:][:32], blk[4+32*j:][:32]
			for i := 0; i < 32; i += 8 {
				binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])^flip)
			}
		}
		for l := 0; l < 8; l++ {
			copy(k[2048+64*p+32*h+4*l:][:4], blk[:4])
		}
		if a.wt != Q4_K {
			continue
		}
		for j := 0; j < 8; j++ {
			s := int16(le16(blk[260+4*j:])) + int16(le16(blk[262+4*j:]))
			put16(k[2304+16*(c%8)+2*j:], uint16(s))
		}
		for l := 0; l < 4; l++ {
			copy(k[2432+16*(c%8)+4*l:][:4], blk[:4])
		}
	}
}

// widenF16 converts fp16 values to float32 (exact); replaced by assembly
// where the CPU allows.
var widenF16 = func(h []uint16, f []float32) {
	for i, v := range h {
		f[i] = fp16Table[v]
	}
}

func (a *Act) grow(blocks int) {
	if cap(a.qs) < 32*blocks {
		a.qs, a.dx8, a.corr = make([]byte, 32*blocks), make([]float32, 8*blocks), make([]int32, 8*blocks)
	}
	a.qs, a.dx8, a.corr = a.qs[:32*blocks], a.dx8[:8*blocks], a.corr[:8*blocks]
}

// Column returns the quantized bytes of column c.
func (a *Act) Column(c int) []byte { return a.x[c*a.xs : (c+1)*a.xs] }

// Cols is the number of prepared columns.
func (a *Act) Cols() int { return a.cols }

// prepCorr sets corr[l] = offset·Σ qs[4l:4l+4] (int8 values).
func prepCorr(qs []byte, corr []int32, offset int32) {
	for l := 0; l < 8; l++ {
		s := int32(int8(qs[4*l])) + int32(int8(qs[4*l+1])) + int32(int8(qs[4*l+2])) + int32(int8(qs[4*l+3]))
		corr[l] = offset * s
	}
}

var actPool = sync.Pool{New: func() any { return new(Act) }}

// gemmFunc computes dst[c*ldd+r] for rows rows of w and every column of a.
type gemmFunc func(n int, w []byte, rows int, a *Act, dst []float32, ldd int)

// gemmImpl holds the matrix kernels by weight type (nil: column by column
// through MatVec); prepKinds the layout each reads and prepOffsets the
// activation correction of the Q8 ones.
var (
	gemmImpl    [32]gemmFunc
	prepKinds   [32]prepKind
	prepOffsets [32]int32
	prepGroups  [32]int // the kernels take column groups of this size (≥ 2), padded with zero columns
	// groupMin is the fewest columns prepared in groups (the flat kernels
	// take a group of 2-7); a variable so that benchmarks can compare.
	groupMin = 2
)

// checkMatMul panics unless a was prepared for t×n and w and dst hold
// rows rows and a's columns; it returns the row size.
func checkMatMul(fn string, t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int) int {
	if a.wt != t || a.n != n {
		panic(fmt.Sprintf("ggml: activations prepared for %v×%d, used with %v×%d", a.wt, a.n, t, n))
	}
	rs := t.RowSize(n)
	if rows < 0 || len(w) < rs*rows || ldd < rows || len(dst) < (a.cols-1)*ldd+rows {
		panic(fmt.Sprintf("ggml: %s %v %dx%d by %d columns: operands too short", fn, t, rows, n, a.cols))
	}
	return rs
}

// gemmFor is t's matrix kernel, nil when it has none (registered external
// types included).
func gemmFor(t Type) gemmFunc {
	if int(t) >= len(gemmImpl) {
		return nil
	}
	return gemmImpl[t]
}

// MatMulAct computes dst[c*ldd+r] = VecDot(t, n, row r of w, column c of a)
// for the rows rows at the start of w and every column of a. The kernel is
// chosen by shape: a matrix-vector kernel for one column, register tiles of
// several rows by several columns for more. Each value is bit-identical to
// the MatVec result for its column, except under the opt-in AMX tier (a
// batch of 16 or more columns of its types: within the bound of amx.go).
func MatMulAct(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	rs := checkMatMul("MatMulAct", t, n, w, rows, a, dst, ldd)
	if rows == 0 {
		return
	}
	if g := gemmFor(t); g != nil && a.prepared && !a.tilesOnly {
		g(n, w[:rs*rows], rows, a, dst, ldd)
		return
	}
	for c := 0; c < a.cols; c++ {
		MatVec(t, n, w[:rs*rows], a.Column(c), dst[c*ldd:c*ldd+rows])
	}
}
