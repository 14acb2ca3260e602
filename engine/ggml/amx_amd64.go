//go:build amd64 && !noasm

package ggml

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"golang.org/x/sys/cpu"
)

// amxOn reports whether the AMX tier is installed (Accel names it); amxHW
// is nil where this CPU and OS can run the AMX kernel (amxUsable, checked
// at start-up), else why not.
var (
	amxOn bool
	amxHW = errors.New("not checked")
)

//go:noescape
func amxTile(cfg *byte, a *byte, astride, ablk int, dw *float32, b *byte, dx *float32, nb int, c *int32, dst *float32, idx *int32, nc, mr int)

// amxScaleOnly is amxTile's AVX-512 half over given C tiles (tests).
//
//go:noescape
func amxScaleOnly(dw *float32, dx *float32, nb int, c *int32, dst *float32, idx *int32, nc, mr int)

// amxScales and amxUnpackQ4 ready a row tile's d_w and Q4_0 A tiles
// (amxScratch.weightsGo is their plain-Go form and twin).
//
//go:noescape
func amxScales(w *byte, base, step *int32, nb, mr int, dw *float32)

//go:noescape
func amxUnpackQ4(w *byte, base, step *int32, nb, mr int, a *byte)

func xgetbv0() uint32

// amxAsmTile runs one amxCall through the assembly kernel. It needs no
// locked OS thread: the permission (amxPermit) is the process's, and the
// tile configuration lives from LDTILECFG to TILERELEASE inside the one
// assembly call, which no goroutine leaves for another thread (see the
// comment at the top of amx_amd64.s on preemption and signals).
func amxAsmTile(k *amxCall) {
	k.bounds()
	amxTile(&k.cfg[0], &k.a[k.aoff], k.astride, k.ablk, &k.dw[0], &k.b[k.boff], &k.dx[k.dxoff], k.nb, &k.c[0], &k.dst[k.dstoff], &k.idx[0], k.nc, k.mr)
}

func init() {
	if hasVNNI {
		amxWeights = (*amxScratch).weightsAsm
	}
}

// weightsAsm is weightsGo with a gather a block for d_w and the Q4_0
// unpack in AVX2 (the Go loops cost more than the tiles at 16 columns).
func (s *amxScratch) weightsAsm(t Type, nb int, w []byte, rs int, x amxRows) {
	k := &s.call
	for m := 0; m < x.mr; m++ { // the last block of every row lies in w
		_ = w[int(x.base[m])+int(x.step[m])*(nb-1)+t.TypeSize()-1]
	}
	amxScales(&w[0], &x.base[0], &x.step[0], nb, x.mr, &s.dw[0])
	if t == Q8_0 {
		k.a, k.aoff, k.astride, k.ablk = w, 2, rs, 34
		return
	}
	amxUnpackQ4(&w[0], &x.base[0], &x.step[0], nb, x.mr, &s.a[0])
	k.a, k.aoff, k.astride, k.ablk = s.a, 0, 32, 512
}

// amxSet is the AMX tier's matrix kernel of one type (Q4_0 or Q8_0):
// batches prepared in the AMX layout (at least amxCols columns) run on the
// tiles, the others on the tier below (base, the VNNI tiles).
type amxSet struct {
	t    Type
	base *tileSet
	tile func(*amxCall)
	r4   bool // the weights are in the interleaved layout (gemmRows4)
}

func (k *amxSet) run(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	if !a.amx {
		k.base.run(n, w, rows, a, dst, ldd)
		return
	}
	amxGemm(k.t, n, w, rows, a, dst, ldd, k.r4, k.tile)
}

// amxUsable checks, in order, what the tier needs: the VNNI tier below it
// (AVX-512F/VL for the scaling), AMX-TILE and AMX-INT8 in CPUID, the OS
// enabling the tile state in XCR0 (bits 17 XTILECFG, 18 XTILEDATA), and
// the kernel's permission to use XTILEDATA (amxPermit). The error says
// which step failed.
func amxUsable() error {
	switch {
	case !cpu.X86.HasAMXTile || !cpu.X86.HasAMXInt8:
		return fmt.Errorf("CPUID reports AMX-TILE %v, AMX-INT8 %v", cpu.X86.HasAMXTile, cpu.X86.HasAMXInt8)
	case !hasVNNI || !cpu.X86.HasOSXSAVE:
		return fmt.Errorf("AMX without the AVX-512 VNNI tier (OSXSAVE %v)", cpu.X86.HasOSXSAVE)
	}
	if x := xgetbv0(); x&(3<<17) != 3<<17 {
		return fmt.Errorf("the OS does not enable the AMX tile state (XCR0 %#x: bits 17, 18 needed)", x)
	}
	return amxPermit()
}

// installAMX puts the AMX tier above tiles (the VNNI tier) for Q4_0 and
// Q8_0, and Q5_0 and IQ4_NL through the Q8_0 rewrite, when amxUsable,
// FLOWCHAT_AMX=1 and the self-check pass; otherwise it records why not.
//
// The tier is opt-in for one reason: batch invariance. Its block sums
// round differently from the decode kernels' lane sums (amx.go), so a
// sequence's logits are no longer bit-identical alone and in a batch of
// 16 or more rows, nor a prompt batch's to token-by-token decode
// (docs/ARCHITECTURE.md; the recompute after preemption relies on it).
// With it on, engine/model's TestBatchInvariance,
// TestSharedBuffersMatchPerToken, TestHugePagesEmbeddingByPread and
// TestInterleaveRows4Logits fail on those rounding differences (amplified
// where the next layer quantizes its activations to int8). Decode keeps
// the lane-sum chain (VPDPBUSD's lanes per row); a block-sum decode, which
// would let the tier be the default, needs another weight layout
// (docs/PERFORMANCE.md, issue 18). The assembly itself is checked: on
// an AMX Xeon VM (2026-11-26) it ran, the start-up self-check passed, and
// it equals the Go model bit for bit (TestAMXTiles); its prompt speed
// there was 1.4–2.5× the VNNI tiles' (docs/PERFORMANCE.md, issue 18).
// With FLOWCHAT_AMX other than 1 no tile instruction runs.
func installAMX(tiles map[Type]*tileSet) {
	amxHW = amxUsable()
	switch {
	case amxHW != nil:
		amxState = "no amx: " + amxHW.Error()
		return
	case os.Getenv("FLOWCHAT_AMX") != "1":
		amxState = "no amx: this CPU has AMX; the tier is off unless FLOWCHAT_AMX=1 (faster prompts, but its prompt batches round by block, not as decode does: not batch-invariant)"
		return
	}
	if err := amxSelfCheck(amxAsmTile); err != nil {
		amxState = "no amx: self-check failed, running the VNNI tiles: " + err.Error()
		return
	}
	useAMX(tiles, amxAsmTile)
}

// useAMX installs the AMX walk over tile (the assembly kernel; the model
// in the dispatch test) above tiles.
func useAMX(tiles map[Type]*tileSet, tile func(*amxCall)) {
	sets := map[Type]*amxSet{}
	for _, t := range []Type{Q4_0, Q8_0} {
		sets[t] = &amxSet{t, tiles[t], tile, false}
		gemmImpl[t], amxMin[t] = sets[t].run, amxCols
	}
	for _, t := range []Type{Q5_0, IQ4_NL} {
		gemmImpl[t], amxMin[t] = repackRun(t, sets[Q8_0].run), amxCols
	}
	// Q4_0 matrices interleaved at load (Rows4). Q8_0 ones are not
	// interleaved while the tier is on (Rows4(Q8_0) is false): its A tiles
	// load from the weight rows in place with one stride, which groups of 4
	// rows do not have, and its prompt batches prepare the AMX layout,
	// which the VNNI kernels do not read.
	gemmRows4[Q4_0] = (&amxSet{Q4_0, vnniRows4[Q4_0], tile, true}).run
	gemmRows4[Q8_0] = nil
	amxOn = true
	amxState = fmt.Sprintf("amx-int8 tiles for prompt batches of ≥ %d columns (Q4_0, Q8_0, Q5_0, IQ4_NL)", amxCols)
}

// amxSelfCheck runs fixed products (a full and a short row tile, a full
// and a partial column group, Q4_0 and Q8_0) through tile and through the
// plain-Go model, which must agree bit for bit. On an AMX CPU it guards
// users against an encoding or layout fault in the assembly that no
// machine without AMX could show (an illegal encoding would still fault).
func amxSelfCheck(tile func(*amxCall)) error {
	r := rand.New(rand.NewPCG(18, 18))
	const n, rows, cols = 96, 19, 21
	for _, t := range []Type{Q4_0, Q8_0} {
		w, x := amxCheckOperands(r, t, n, rows, cols)
		var a Act
		a.begin(t, n, x, cols, prepKindQ8, 0, amxGroup)
		a.Fill(0, cols)
		want := make([]float32, rows*cols)
		amxGemm(t, n, w, rows, &a, want, rows, false, amxModelTile)
		for _, r4 := range []bool{false, t == Q4_0} {
			w := w
			if r4 { // the interleaved layout (Rows4) of the same rows
				w = append([]byte(nil), w...)
				interleaveRows4Unpaired(t, n, w, rows)
			}
			got := make([]float32, rows*cols)
			amxGemm(t, n, w, rows, &a, got, rows, r4, tile)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					return fmt.Errorf("%v n=%d interleaved %v: row %d column %d is %v, the model's %v", t, n, r4, i%rows, i/rows, got[i], want[i])
				}
			}
		}
	}
	return nil
}

// amxCheckOperands is rows random rows of t and cols Q8_0 columns with
// scales of ±2⁻¹⁰..2 (fp16) and every int8 value possible.
func amxCheckOperands(r *rand.Rand, t Type, n, rows, cols int) (w, x []byte) {
	w = make([]byte, rows*t.RowSize(n))
	x = make([]byte, cols*Q8_0.RowSize(n))
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for i := range x {
		x[i] = byte(r.Uint32())
	}
	scale := func(b []byte) { put16(b, uint16(0x1400+r.IntN(0x2c00))|uint16(r.IntN(2))<<15) }
	for i := 0; i < len(w); i += t.TypeSize() {
		scale(w[i:])
	}
	for i := 0; i < len(x); i += 34 {
		scale(x[i:])
	}
	return w, x
}
