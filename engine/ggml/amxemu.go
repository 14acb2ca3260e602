package ggml

import "fmt"

// amxEmu is a plain-Go emulator of the AMX tile instructions the tier uses
// (Intel SDM vol. 2, "Intel AMX instructions"): 8 tiles of up to 16 rows
// of 64 bytes, shaped by LDTILECFG (palette 1); TILELOADD, TILESTORED,
// TILEZERO, TDPBSSD and TDPBUSD with the SDM's pseudo-code semantics,
// including zeroing of the bytes and rows past a tile's shape and the
// shape checks that raise #UD (here a panic). It runs the tier's tile
// algorithm (amxModelTile) on machines without AMX.
type amxEmu struct {
	rows  [8]int
	colsb [8]int
	t     [8][16][64]byte
	valid bool // a palette-1 configuration is loaded
}

// ldtilecfg loads the 64-byte configuration (palette 1 only; start_row 0).
func (e *amxEmu) ldtilecfg(cfg *[64]byte) {
	if cfg[0] != 1 || cfg[1] != 0 {
		panic(fmt.Sprintf("amx: palette %d start_row %d", cfg[0], cfg[1]))
	}
	for i := 0; i < 8; i++ {
		e.colsb[i] = int(cfg[16+2*i]) | int(cfg[17+2*i])<<8
		e.rows[i] = int(cfg[48+i])
		if e.rows[i] > 16 || e.colsb[i] > 64 || (e.rows[i] == 0) != (e.colsb[i] == 0) {
			panic(fmt.Sprintf("amx: tile %d configured %d rows of %d bytes", i, e.rows[i], e.colsb[i]))
		}
	}
	e.t = [8][16][64]byte{}
	e.valid = true
}

func (e *amxEmu) check(i int) {
	if !e.valid || e.rows[i] == 0 {
		panic(fmt.Sprintf("amx: tile %d used unconfigured", i))
	}
}

// tileloadd loads tile i: row r from mem[base + r·stride:], colsb bytes;
// the rest of the row and the rows past rows are zeroed.
func (e *amxEmu) tileloadd(i int, mem []byte, base, stride int) {
	e.check(i)
	e.t[i] = [16][64]byte{}
	for r := 0; r < e.rows[i]; r++ {
		copy(e.t[i][r][:e.colsb[i]], mem[base+r*stride:][:e.colsb[i]])
	}
}

// tilestored stores tile i's rows rows of colsb bytes at mem[base + r·stride:].
func (e *amxEmu) tilestored(i int, mem []byte, base, stride int) {
	e.check(i)
	for r := 0; r < e.rows[i]; r++ {
		copy(mem[base+r*stride:][:e.colsb[i]], e.t[i][r][:e.colsb[i]])
	}
}

func (e *amxEmu) tilezero(i int) {
	e.check(i)
	e.t[i] = [16][64]byte{}
}

// tdpbssd is TDPBSSD dst, a, b (signed a, signed b); tdpbusd TDPBUSD
// (unsigned a, signed b).
func (e *amxEmu) tdpbssd(dst, a, b int) { e.tdp(dst, a, b, true) }
func (e *amxEmu) tdpbusd(dst, a, b int) { e.tdp(dst, a, b, false) }

// tdp is the SDM's DPBD loop: for each row m of dst and dword k of a's row
// m, for each int32 n of dst's row, dst[m][n] += Σ_{i<4} a[m][4k+i] ·
// b[k][4n+i] (wrapping int32 arithmetic), then the row's bytes past colsb
// and the rows past rows are zeroed. The shapes must agree: a.rows =
// dst.rows, a.colsb = 4·b.rows, b.colsb = dst.colsb; K ≤ 64 bytes.
func (e *amxEmu) tdp(dst, a, b int, signedA bool) {
	e.check(dst)
	e.check(a)
	e.check(b)
	if dst == a || dst == b || a == b {
		panic("amx: TDP* operands must be distinct tiles")
	}
	if e.rows[a] != e.rows[dst] || e.colsb[a] != 4*e.rows[b] || e.colsb[b] != e.colsb[dst] || e.colsb[dst]%4 != 0 || e.colsb[a]%4 != 0 {
		panic(fmt.Sprintf("amx: TDP shapes C %dx%d A %dx%d B %dx%d", e.rows[dst], e.colsb[dst], e.rows[a], e.colsb[a], e.rows[b], e.colsb[b]))
	}
	var out [16][64]byte
	for m := 0; m < e.rows[dst]; m++ {
		for n := 0; n < e.colsb[dst]/4; n++ {
			acc := int32(le32(e.t[dst][m][4*n:]))
			for k := 0; k < e.colsb[a]/4; k++ {
				for i := 0; i < 4; i++ {
					av := int32(int8(e.t[a][m][4*k+i]))
					if !signedA {
						av = int32(e.t[a][m][4*k+i])
					}
					acc += av * int32(int8(e.t[b][k][4*n+i]))
				}
			}
			put32(out[m][4*n:], uint32(acc))
		}
	}
	e.t[dst] = out
}

// tilerelease returns the tiles to the initial state (unconfigured).
func (e *amxEmu) tilerelease() { *e = amxEmu{} }

// amxModelTile is the assembly kernel amxTileB step for step over the
// emulator: per block, C = 0, C += A·B (TDPBSSD: A the nc columns' values,
// B the block's 16 weight rows), C stored, then each tile row m (column
// m) scaled into its accumulator: acc[m][n] = fma(float32(C[m][n]),
// d_x[m]·d_w[n], acc[m][n]) with the product rounded to float32 first
// (VMULPS, then VFMADD231PS). The rows past the configured ones keep the
// stale C rows of the scratch, as in the assembly (whose pipeline stores
// even blocks' C at c, odd ones' at c + 1024); columns m < nc are written
// to dst.
func amxModelTile(k *amxCall) {
	k.bounds()
	var e amxEmu
	e.ldtilecfg(&k.cfg)
	var acc [256]float32
	cb := make([]byte, 2048)
	for i, v := range k.c {
		put32(cb[4*i:], uint32(v))
	}
	for b := 0; b < k.nb; b++ {
		e.tilezero(0)
		e.tileloadd(1, k.x, k.xoff+k.xblk*b, k.xs)
		e.tileloadd(2, k.b, k.boff+k.bblk*b, 64)
		e.tdpbssd(0, 1, 2)
		e.tilestored(0, cb, 1024*(b%2), 64) // the pipeline's two C buffers
		ws := k.ws[k.wsoff+k.wsblk*b:][:32]
		for m := 0; m < 16; m++ {
			dx := k.dx[k.dxoff+16*b+m]
			for n := 0; n < 16; n++ {
				s := float32(dx * f16(ws[2*n:]))
				acc[16*m+n] = fma32(float32(int32(le32(cb[1024*(b%2)+64*m+4*n:]))), s, acc[16*m+n])
			}
		}
	}
	e.tilerelease()
	for i := range k.c {
		k.c[i] = int32(le32(cb[4*i:]))
	}
	for m := 0; m < k.nc; m++ {
		copy(k.dst[k.dstoff+m*k.ldd:][:16], acc[16*m:16*m+16])
	}
}
