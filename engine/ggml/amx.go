package ggml

import (
	"fmt"
	"strings"
	"sync"
)

// The AMX tier (Intel Advanced Matrix Extensions, Sapphire Rapids and newer
// Xeons; amx_amd64.go, amx_amd64.s) runs every product of a Q4_0 or Q8_0
// matrix held in the tile layout (b16.go), the layout it takes at load
// (Model.InterleaveRows4): batches of at least amxCols[t] columns as int8
// tile products, where per 32-element block TDPBSSD makes the exact int32
// sums of 16 weight rows (the B tile, the layout's block as it lies) by up
// to 16 activation columns (the A tile, the columns' Q8_0 blocks read in
// place), and AVX-512 scales them into float32 accumulators; smaller
// batches (decode) through VPDPBUSD over the same bytes (b16_amd64.s). This
// file holds what does not need the hardware: the walk over row groups and
// column groups (b16Gemm), the tile configuration, and a plain-Go model of
// the tile kernel over an emulator of the tile instructions
// (amxModelTile), which the tests hold to the twin and the start-up
// self-check holds to the assembly.
//
// Rounding: per (row, column) the chain is acc = fma(float32(Σ32 w·x),
// float32(d_w·d_x), acc) over the blocks in order (blocksQ32), in the
// tiles and in the decode kernel alike, so a sequence's logits are the
// same alone, in a batch, and in a prompt. The VNNI and AVX2 tiers keep 8
// lanes of 4-element sums per block and add the lanes at the end
// (lanesQ32): both are within (nb+4)·2⁻²⁴·Σ|w_i·x_i| of the exact product
// (TestAMXModelBound), and matrices outside the tile layout (--mmap, the
// token embedding as output head, other types) keep the VNNI tiers, whose
// prompt and decode kernels share the lane chain.

// amxCols[t] is the fewest columns a batch of t needs to run on the
// tiles; below it the AVX-512 VNNI kernels of the tier below (r16_amd64.go:
// up to 8 columns a call over each group of rows) take batches of 2 or
// more, and the decode kernel one column. On the 2-core AMX Xeon VM
// (BenchmarkAMX, 256×2048 in cache, GMAC per CPU second, two runs,
// 2026-11-26) those kernels beat the tiles below 16 columns for Q4_0,
// whose tiles first unpack each group's nibbles (4 columns: 131–143
// against 48–53; 8: 121–131 against 75–83; 16: 155–185 against 147–166),
// and below 8 for Q8_0 (4: 113–131 against 79–87; 8: 113–175 against
// 178–185); the decode kernel column by column, as before, ran 60–101
// (Q4_0) and 47–72 (Q8_0) at 2 to 8 columns.
var amxCols = [32]int{Q4_0: 16, Q8_0: 8}

// amxState describes the AMX tier for AMXStatus.
var amxState string

// AMXStatus says whether the AMX tile tier runs here and, when it does
// not, why (no AMX on this CPU, not enabled by the OS, permission refused,
// turned off with FLOWCHAT_AMX=0, self-check failed); empty in builds
// without the tier (not amd64, or noasm).
func AMXStatus() string { return amxState }

// amxCall is one call of the tile kernel: one group of 16 weight rows in
// the tile layout by nc ≤ 16 activation columns over nb blocks.
type amxCall struct {
	cfg [64]byte // LDTILECFG's operand (amxConfig(nc))
	// x holds the columns' int8 values: column m's block b at xoff + m·xs
	// + xblk·b (the A tile's row m: its 32 values; Act.bqs, 16 columns'
	// blocks packed in 512 bytes).
	x              []byte
	xoff, xs, xblk int
	dx             []float32 // d_x of column m, block b at dxoff + 16b + m (Act.bdx)
	dxoff          int
	// b holds the B tiles, block b's 512 bytes at boff + bblk·b (the
	// layout's Q8_0 block 32 bytes in, or the unpacked Q4_0 one); ws the
	// rows' fp16 scales, row n's of block b at wsoff + wsblk·b + 2n.
	b               []byte
	boff, bblk      int
	ws              []byte
	wsoff, wsblk    int
	nb              int
	c               [512]int32 // two blocks' C tiles (the pipeline's), row-major, 16 int32 a row
	dst             []float32  // column m's row n at dstoff + m·ldd + n
	dstoff, ldd, nc int
}

// bounds panics unless every byte and value the kernel reads or writes
// lies in k's slices (the assembly cannot check; the model calls it too,
// so the tests hold the walk to it).
func (k *amxCall) bounds() {
	_ = k.x[k.xoff+(k.nc-1)*k.xs+k.xblk*(k.nb-1)+31]
	_ = k.dx[k.dxoff+16*(k.nb-1)+15]
	_ = k.b[k.boff+k.bblk*(k.nb-1)+511]
	_ = k.ws[k.wsoff+k.wsblk*(k.nb-1)+31]
	_ = k.dst[k.dstoff+(k.nc-1)*k.ldd+15]
}

// amxConfig is the tile configuration for nc columns (palette 1): tmm0
// and tmm3 = C, nc rows of 16 int32; tmm1 and tmm4 = A, nc rows of 32
// int8; tmm2 and tmm5 = B, 8 rows of 64 int8. Bytes 16+2i hold tile i's
// bytes per row, 48+i its rows.
func amxConfig(nc int) [64]byte {
	var cfg [64]byte
	cfg[0] = 1
	for i, t := range [6]struct{ colsb, rows int }{{64, nc}, {32, nc}, {64, 8}, {64, nc}, {32, nc}, {64, 8}} {
		cfg[16+2*i] = byte(t.colsb)
		cfg[48+i] = byte(t.rows)
	}
	return cfg
}

// b16Kernels are the tile layout's kernels: tile, the AMX product of one
// group of rows by up to 16 columns (amxTileB, or amxModelTile); dec, one
// column by one group of rows (b16q40/b16q80, or b16DecGo); unpack, a
// Q4_0 group's B tiles (b16UnpackQ4, or b16UnpackGo).
type b16Kernels struct {
	tile   func(*amxCall)
	dec    func(t Type, nb int, w, x []byte, dx []float32, corr []int32, step int, dst []float32)
	unpack func(w []byte, nb int, dst []byte)
	// narrow, where set, computes a whole product of 2 to amxCols[t]−1
	// columns (the AVX-512 VNNI kernels of r16_amd64.go, several columns a
	// call); without it they run column by column through dec.
	narrow func(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int)
}

// amxScratch is one worker's buffers: the call and a Q4_0 group's
// unpacked B tiles (512 bytes a block).
type amxScratch struct {
	call amxCall
	b    []byte
}

var amxPool = sync.Pool{New: func() any { return new(amxScratch) }}

// b16Gemm computes dst[c·ldd + r] for rows rows of w (Q4_0 or Q8_0 in the
// tile layout) and the columns of a (with the tile layout's operands,
// Act.bdx/bcorr): group of 16 rows by group, batches of amxCols[t] or more
// columns through k.tile in groups of 16 columns, smaller ones through
// k.narrow, or k.dec column by column; the rows past the last group
// through the twin.
func b16Gemm(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int, k *b16Kernels) {
	if !a.b16 || (t != Q4_0 && t != Q8_0) || a.wt != t {
		panic(fmt.Sprintf("ggml: tile layout kernels for %v over columns prepared for %v (tile operands %v)", t, a.wt, a.b16))
	}
	if len(a.bqs) == 0 && a.cols > 1 && k.narrow != nil {
		k.narrow(t, n, w, rows, a, dst, ldd)
		return
	}
	nb, rs, ts := n/32, t.RowSize(n), t.TypeSize()
	full := rows / 16 * 16
	s := amxPool.Get().(*amxScratch)
	if t == Q4_0 && cap(s.b) < 512*nb {
		s.b = make([]byte, 512*nb)
	}
	c := &s.call
	c.x, c.xs, c.xblk, c.dx, c.nb, c.dst, c.ldd = a.bqs, 32, 512, a.bdx, nb, dst, ldd
	for g := 0; g < full; g += 16 {
		grp := w[g*rs : (g+16)*rs]
		if len(a.bqs) == 0 { // fewer than amxCols[t] columns when prepared
			for col := 0; col < a.cols; col++ {
				i := a.bIndex(col, 0)
				k.dec(t, nb, grp, a.Column(col), a.bdx[i:], a.bcorr[i:], a.bstep, dst[col*ldd+g:][:16])
			}
			continue
		}
		c.b, c.boff, c.bblk = grp, 32, 16*ts
		if t == Q4_0 {
			k.unpack(grp, nb, s.b)
			c.b, c.boff, c.bblk = s.b, 0, 512
		}
		c.ws, c.wsoff, c.wsblk = grp, 0, 16*ts
		for c0 := 0; c0 < a.cols; c0 += 16 {
			c.nc = min(16, a.cols-c0)
			c.cfg = amxConfig(c.nc)
			c.xoff, c.dxoff, c.dstoff = c0/16*nb*512, c0/16*nb*16, c0*ldd+g
			k.tile(c)
		}
	}
	b16Tail(t, n, w, full, rows, a, dst, ldd)
	c.x, c.dx, c.b, c.ws, c.dst = nil, nil, nil, nil, nil
	amxPool.Put(s)
}

// b16Tail computes rows [full, rows) of w, the row-major rows past the
// tile layout's last full group, through the block twin.
func b16Tail(t Type, n int, w []byte, full, rows int, a *Act, dst []float32, ldd int) {
	dot, rs := dotQ8_0Blocks, t.RowSize(n)
	if t == Q4_0 {
		dot = dotQ4_0Blocks
	}
	for r := full; r < rows; r++ {
		row := w[r*rs : (r+1)*rs]
		for c := 0; c < a.cols; c++ {
			dst[c*ldd+r] = dot(n, row, a.Column(c))
		}
	}
}

// b16DecGo is the decode kernel (b16q40, b16q80) in plain Go: per row m of
// the group and block, the integer sum from off·Σx (corr) over the
// weights as unsigned bytes (nibbles q; w+128), then the float step.
func b16DecGo(t Type, nb int, w, x []byte, dx []float32, corr []int32, step int, dst []float32) {
	ts := t.TypeSize()
	var acc [16]float32
	for b := 0; b < nb; b++ {
		blk, xb := w[16*ts*b:], x[34*b:]
		for m := 0; m < 16; m++ {
			s := corr[step*b]
			for k := 0; k < ts-2; k++ { // bytes of the row's block
				v := blk[32+64*(k/4)+4*m+k%4]
				if t == Q4_0 {
					s += int32(v&15)*int32(int8(xb[2+k])) + int32(v>>4)*int32(int8(xb[18+k]))
				} else {
					s += int32(v^0x80) * int32(int8(xb[2+k]))
				}
			}
			acc[m] = fma32(float32(s), float32(f16(blk[2*m:])*dx[step*b]), acc[m])
		}
	}
	copy(dst[:16], acc[:])
}

// b16UnpackGo is b16UnpackQ4 in plain Go: per block, chunk k's low
// nibbles less 8 at 512b + 64k, its high nibbles less 8 at 512b + 256 + 64k.
func b16UnpackGo(w []byte, nb int, dst []byte) {
	for b := 0; b < nb; b++ {
		src, out := w[288*b+32:][:256], dst[512*b:][:512]
		for i, v := range src {
			out[i] = byte(int8(v&15) - 8)
			out[256+i] = byte(int8(v>>4) - 8)
		}
	}
}

// blocksQ32 is the AMX tier's chain over the nb blocks of a row, the twin
// of b16Gemm: per block the exact integer sum of the 32 products, times
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

// Kernels is Accel with AMXStatus and the K-quant tile layouts' state
// beside it where the build has them: "avx2+avx512-vnni (no amx: CPUID
// reports …; k-quant tiles: …)".
func Kernels() string {
	var notes []string
	for _, s := range []string{AMXStatus(), k16State, r16State} {
		if s != "" {
			notes = append(notes, s)
		}
	}
	if len(notes) == 0 {
		return Accel()
	}
	return Accel() + " (" + strings.Join(notes, "; ") + ")"
}
