package ggml

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// The AMX tier (Intel Advanced Matrix Extensions, Sapphire Rapids and newer
// Xeons; amx_amd64.go, amx_amd64.s) runs prompt batches of at least
// amxCols columns of Q4_0 and Q8_0 weights (Q5_0 and IQ4_NL through their
// Q8_0 rewrite, gemm5_amd64.go) as int8 tile products: per 32-element
// block, TDPBSSD makes the exact int32 sums of 16 weight rows by 16
// columns, and AVX-512 scales them into float32 accumulators. This file
// holds what does not need the hardware: the activation layout the tiles
// read (fillAMX), the walk over row tiles and column groups (amxGemm), the
// tile configuration, and a plain-Go model of the tile kernel over an
// emulator of the tile instructions (amxModelTile), which the tests hold
// to the reference product and the start-up self-check holds to the
// assembly.
//
// Rounding: per (row, column) the chain is acc = fma(float32(Σ32 w·x),
// float32(d_w·d_x), acc) over the blocks in order (blocksQ32). The VNNI
// and AVX2 tiers instead keep 8 lanes of 4-element sums per block and add
// the lanes at the end (lanesQ32), so the AMX tier is NOT bit for bit the
// decode kernels' result: both are within (nb+4)·2⁻²⁴·Σ|w_i·x_i| of the
// exact product (TestAMXModelBound), so they differ by at most twice that. Getting the lane sums out of
// the tiles would need 8 times the tile work (a block-diagonal B), which
// is the VNNI tier's speed, so the tier is a block-sum one by design.

// amxGroup is the column group of the AMX layout; amxCols the fewest
// columns a batch needs to be prepared for (and run on) the tiles: one
// full B tile of 16 columns. Below it the VNNI kernels run (decode, the
// batching engine's small steps), whose layout they read. The tier was
// measured on a 2-core AMX Xeon VM (docs/PERFORMANCE.md, issue 18:
// 1.4–2.5× the VNNI tiles' prompt speed); the threshold was not swept.
const (
	amxGroup = 16
	amxCols  = 16
)

// amxMin[t] is amxCols where the AMX tier runs t's prompt batches, 0
// elsewhere (set at start-up by amx_amd64.go once the CPU, the OS,
// FLOWCHAT_AMX=1 and the self-check agree).
var amxMin [32]int

// amxState describes the AMX tier for AMXStatus.
var amxState string

// AMXStatus says whether the AMX tile tier runs here and, when it does
// not, why (no AMX on this CPU, not enabled by the OS, permission refused,
// not asked for with FLOWCHAT_AMX=1, self-check failed); empty in builds
// without the tier (not amd64, or noasm).
func AMXStatus() string { return amxState }

// fillAMX writes column c (zeros past the last column) in the AMX layout:
// per group of 16 columns and block, the 512-byte B tile of TDPBSSD (row
// k, k < 8, holds dword k, values 4k..4k+3, of each of the group's 16
// columns: byte 64k + 4·(c mod 16) + i) at qs[512·(G·nb + b):], and the
// 16 columns' d_x at dx8[128·(G·nb + b):] (the 8-per-slot arrays of
// groups of 16 give 128 floats per group and block; 16 are used).
func (a *Act) fillAMX(c int) {
	nb, g, j := a.n/32, c/amxGroup, c%amxGroup
	for b := 0; b < nb; b++ {
		gb := g*nb + b
		qs := a.qs[512*gb : 512*gb+512]
		if c >= a.cols {
			for k := 0; k < 8; k++ {
				clear(qs[64*k+4*j : 64*k+4*j+4])
			}
			a.dx8[128*gb+j] = 0
			continue
		}
		blk := a.x[c*a.xs+34*b:][:34]
		for k := 0; k < 8; k++ {
			copy(qs[64*k+4*j:64*k+4*j+4], blk[2+4*k:6+4*k])
		}
		a.dx8[128*gb+j] = f16(blk)
	}
}

// amxCall is one call of the tile kernel: mr ≤ 16 weight rows by the 16
// columns of one group over nb blocks.
type amxCall struct {
	cfg [64]byte // LDTILECFG's operand (amxConfig)
	// a holds the A tiles: block b's row m is the 32 int8 values at
	// aoff + b·ablk + m·astride (the Q8_0 rows in place, or the unpacked
	// Q4_0 ones in amxScratch.a).
	a                   []byte
	aoff, astride, ablk int
	dw                  []float32 // d_w of row m, block b at 16b + m (0 past mr)
	b                   []byte    // the group's B tiles: block b at boff + 512b
	boff                int
	dx                  []float32 // the group's d_x: block b, column n at dxoff + 128b + n
	dxoff               int
	nb                  int
	c                   [256]int32 // the C tile of one block, row-major, 16 int32 a row
	// The result of row m < mr, column n < nc goes to dst[dstoff + idx[n]
	// + m] (idx[n] = n·ldd: MatMulAct's column-major output).
	dst    []float32
	dstoff int
	idx    [16]int32
	nc, mr int
}

// bounds panics unless every byte and value the kernel reads or writes
// lies in k's slices (the assembly cannot check; the model calls it too,
// so the tests hold the walk to it).
func (k *amxCall) bounds() {
	_ = k.a[k.aoff+(k.nb-1)*k.ablk+(k.mr-1)*k.astride+31]
	_ = k.b[k.boff+512*k.nb-1]
	_ = k.dx[k.dxoff+128*(k.nb-1)+15]
	_ = k.dw[16*k.nb-1]
	_ = k.dst[k.dstoff+int(k.idx[k.nc-1])+k.mr-1]
}

// amxConfig is the tile configuration for mr rows (palette 1): tmm0 = C,
// mr rows of 16 int32; tmm1 = A, mr rows of 32 int8; tmm2 = B, 8 rows of
// 64 int8. Bytes 16+2i hold tile i's bytes per row, 48+i its rows.
func amxConfig(mr int) [64]byte {
	var cfg [64]byte
	cfg[0] = 1
	for i, t := range [3]struct{ colsb, rows int }{{64, mr}, {32, mr}, {64, 8}} {
		cfg[16+2*i] = byte(t.colsb)
		cfg[48+i] = byte(t.rows)
	}
	return cfg
}

// amxScratch is one worker's buffers: the row tile's d_w and, for Q4_0,
// its unpacked A tiles (512 bytes a block).
type amxScratch struct {
	call amxCall
	dw   []float32
	a    []byte
}

var amxPool = sync.Pool{New: func() any { return new(amxScratch) }}

// amxGemm computes dst[c·ldd + r] for rows rows of w (t: Q4_0 or Q8_0;
// r4: Q4_0 in the interleaved layout, Rows4) and the columns of a
// (prepared in the AMX layout) in row tiles of 16 (the last one shorter),
// each against every column group, through tile (the assembly kernel, or
// amxModelTile in the tests and the self-check).
func amxGemm(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int, r4 bool, tile func(*amxCall)) {
	if !a.amx || a.wt.VecDotType() != Q8_0 || (t != Q4_0 && t != Q8_0) || (r4 && t != Q4_0) {
		panic(fmt.Sprintf("ggml: AMX tiles for %v (interleaved %v) over columns prepared for %v (AMX layout %v)", t, r4, a.wt, a.amx))
	}
	nb, rs := n/32, t.RowSize(n)
	s := amxPool.Get().(*amxScratch)
	s.grow(t, nb)
	k := &s.call
	k.nb, k.dw, k.b, k.dx, k.dst = nb, s.dw, a.qs, a.dx8, dst
	for n := range k.idx {
		k.idx[n] = int32(n * ldd)
	}
	for r0 := 0; r0 < rows; r0 += 16 {
		k.mr = min(16, rows-r0)
		k.cfg = amxConfig(k.mr)
		amxWeights(s, t, nb, w[r0*rs:], rs, amxRowAddr(t, rs, r0, k.mr, rows, r4))
		for g := 0; g*amxGroup < a.cols; g++ {
			k.boff, k.dxoff = 512*g*nb, 128*g*nb
			k.dstoff, k.nc = g*amxGroup*ldd+r0, min(amxGroup, a.cols-g*amxGroup)
			tile(k)
		}
	}
	k.a, k.b, k.dx, k.dst = nil, nil, nil, nil
	amxPool.Put(s)
}

func (s *amxScratch) grow(t Type, nb int) {
	if cap(s.dw) < 16*nb {
		s.dw = make([]float32, 16*nb)
	}
	s.dw = s.dw[:16*nb]
	if t == Q4_0 && cap(s.a) < 512*nb {
		s.a = make([]byte, 512*nb)
	}
}

// amxRows is where a row tile's weight blocks lie: row m < mr's block b
// at base[m] + b·step[m] bytes into the tile's part of w.
type amxRows struct {
	base, step [16]int32
	mr         int
}

// amxRowAddr places the row tile of mr rows at row r0 (a multiple of 16)
// of a rows-row matrix of type t: row-major, or (r4) in the interleaved
// layout, where rows in full groups of 4 hold their blocks 4 apart within
// the group and the rows past the last full group are row-major.
func amxRowAddr(t Type, rs, r0, mr, rows int, r4 bool) amxRows {
	ts := t.TypeSize()
	x := amxRows{mr: mr}
	for m := 0; m < 16; m++ {
		x.base[m], x.step[m] = int32(m*rs), int32(ts)
		if r4 && r0+m < rows/4*4 {
			x.base[m], x.step[m] = int32(m/4*4*rs+m%4*ts), int32(4*ts)
		}
	}
	return x
}

// amxWeights readies a row tile: weightsGo, or its assembly form where the
// CPU has AVX-512 (amx_amd64.go).
var amxWeights = (*amxScratch).weightsGo

// weightsGo readies the row tile at w (rows placed by x): d_w of each row
// and block (zero past x.mr), and the A tiles: Q8_0's values in place
// (row-major only: 34-byte blocks, rows rs apart), Q4_0's nibbles
// unpacked to q − 8 as int8, 32 a row, 512 a block.
func (s *amxScratch) weightsGo(t Type, nb int, w []byte, rs int, x amxRows) {
	k := &s.call
	for b := 0; b < nb; b++ {
		for m := 0; m < 16; m++ {
			d := float32(0)
			if m < x.mr {
				d = f16(w[int(x.base[m])+int(x.step[m])*b:])
			}
			s.dw[16*b+m] = d
		}
	}
	if t == Q8_0 {
		k.a, k.aoff, k.astride, k.ablk = w, 2, rs, 34
		return
	}
	k.a, k.aoff, k.astride, k.ablk = s.a, 0, 32, 512
	for b := 0; b < nb; b++ {
		for m := 0; m < x.mr; m++ {
			unpackQ4(w[int(x.base[m])+int(x.step[m])*b+2:][:16], s.a[512*b+32*m:][:32])
		}
	}
}

// unpackQ4 writes the 32 values q − 8 of a Q4_0 block's nibbles as int8
// (low nibbles first), eight at a time: for v in 0..15, v − 8 as a byte is
// v ^ 8 with the high nibble set where v < 8.
func unpackQ4(q []byte, dst []byte) {
	const m4, b8 = 0x0f0f0f0f0f0f0f0f, 0x0808080808080808
	le := binary.LittleEndian
	for h := 0; h < 2; h++ {
		x := le.Uint64(q[8*h:])
		lo, hi := x&m4, x>>4&m4
		le.PutUint64(dst[8*h:], lo^b8|(^lo&b8)*0x1e)
		le.PutUint64(dst[16+8*h:], hi^b8|(^hi&b8)*0x1e)
	}
}

// blocksQ32 is the AMX tier's chain over the nb blocks of a row, the twin
// of amxGemm: per block the exact integer sum of the 32 products, times
// the block scale d_w·d_x rounded to float32, added with one fused
// multiply-add. level and wd are as for lanesQ32.
func blocksQ32(nb int, x []byte, level func(b, j int) int, wd func(b int) float32) float32 {
	var acc float32
	for b := 0; b < nb; b++ {
		xb := x[34*b : 34*b+34]
		sum := 0
		for j := 0; j < 32; j++ {
			sum += level(b, j) * int(int8(xb[2+j]))
		}
		acc = fma32(float32(sum), float32(wd(b)*f16(xb)), acc)
	}
	return acc
}

// dotQ4_0Blocks and dotQ8_0Blocks are the block twins of the AMX tier.
func dotQ4_0Blocks(n int, w, x []byte) float32 {
	return blocksQ32(n/32, x, func(b, j int) int {
		q := w[18*b+2+j%16]
		if j >= 16 {
			q >>= 4
		}
		return int(q&0xf) - 8
	}, func(b int) float32 { return f16(w[18*b:]) })
}

func dotQ8_0Blocks(n int, w, x []byte) float32 {
	return blocksQ32(n/32, x, func(b, j int) int { return int(int8(w[34*b+2+j])) },
		func(b int) float32 { return f16(w[34*b:]) })
}

// Kernels is Accel with AMXStatus beside it where the build has the AMX
// tier: "avx2+avx512-vnni (no amx: CPUID reports …)".
func Kernels() string {
	if s := AMXStatus(); s != "" {
		return Accel() + " (" + s + ")"
	}
	return Accel()
}
