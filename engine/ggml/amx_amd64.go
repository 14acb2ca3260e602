//go:build amd64 && !noasm

package ggml

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

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
func amxTileB(cfg *byte, x *byte, xs, xblk int, dx *float32, b *byte, bblk int, ws *byte, wsblk int, nb int, c *int32, dst *float32, ldd int, nc int)

// The tile layout's decode kernels and Q4_0 unpack (b16_amd64.s; b16DecGo
// and b16UnpackGo are their twins).
//
//go:noescape
func b16q40(w *byte, nb int, x *byte, dx *float32, corr *int32, dst *float32, step int)

//go:noescape
func b16q80(w *byte, nb int, x *byte, dx *float32, corr *int32, dst *float32, step int)

//go:noescape
func b16UnpackQ4(w *byte, nb int, dst *byte)

func xgetbv0() uint32

// amxAsmTile runs one amxCall through the assembly kernel. It needs no
// locked OS thread: the permission (amxPermit) is the process's, and the
// tile configuration lives from LDTILECFG to TILERELEASE inside the one
// assembly call, which no goroutine leaves for another thread (see the
// comment at the top of amx_amd64.s on preemption and signals).
func amxAsmTile(k *amxCall) {
	k.bounds()
	amxTileB(&k.cfg[0], &k.x[k.xoff], k.xs, k.xblk, &k.dx[k.dxoff], &k.b[k.boff], k.bblk, &k.ws[k.wsoff], k.wsblk, k.nb, &k.c[0], &k.dst[k.dstoff], k.ldd, k.nc)
}

// b16AheadQ4 is how many bytes ahead of the block it reads b16q40
// prefetches its group into L2 (b16_amd64.s loads it at each call): 16
// blocks (4.6 KiB), as sitting 12 tuned it on the Xeon, but 32 blocks
// (9.2 KiB) on AMD, about b16q80's 16 blocks of 544 bytes. On the EPYC VM
// (Zen 5, 2026-11-27), BenchmarkRows4Stream's 600 MiB of Q4_0 groups read
// 23.1–26.0 cpuGB/s against 22.3–24.1 in six alternations (1.00–1.12×
// pair by pair), and TinyLlama Q4_0 generation, 14 alternations of
// `flowchat bench -t 1,2 -p 0 -n 64 -r 3`, read 0.85–1.19× (median
// ~1.06×, 11 pairs of 14 above 1) at 1 thread and 0.87–1.25× (~1.06×,
// 10 of 14) at 2. Q8_0 at 24 and 32 blocks read the same as at 16.
// FLOWCHAT_Q4AHEAD (in blocks) overrides it, for measuring elsewhere.
var b16AheadQ4 = 16 * 288

// b16AheadQ8 is b16AheadQ4 for b16q80 (and the AVX2 and AVX-VNNI Q8_0
// decode kernels): 16 blocks (8.5 KiB), but 24 on AMD. On the EPYC VM
// (Zen 5, 2026-11-27, the lone column's operands one apart: Act.bstep)
// BenchmarkStreamVsRead's Q8_0 strip read a median 97% of ReadSum at 24
// blocks against 92% at 16 (one thread, 5632×2048, four alternations;
// 86–95% at 12, 82–99% at 32), and 24 won 13 of 16 pairs over both
// shapes at 1 and 2 threads. TinyLlama Q8_0 generation (`flowchat bench
// --vs-read`, six alternations) read medians of 94% and 89% of the read
// probe at 1 and 2 threads against 87.5% and 82.5% at 16 blocks, ahead in
// 5 of 6 pairs at each. FLOWCHAT_Q8AHEAD (blocks) overrides it.
var b16AheadQ8 = 16 * 544

// b16Q4L1 is whether b16q40 also prefetches into L1, 6 blocks ahead: on
// Intel, as sitting 12 tuned it on the Xeon VM, but not on AMD. On the
// EPYC VM (Zen 5, 2026-11-27) BenchmarkStreamVsRead's Q4_0 strip (one
// thread, each pass of 600 MiB against ReadSum over the same bytes, wall
// time) read a median 94–97% of ReadSum without it against 84–86% with it
// (four alternations of 9 pairs); with it at 3 or 12 blocks, 77–87%; into
// L1 only (PREFETCHT0 32 blocks ahead), 88–91%. TinyLlama Q4_0
// generation at 1 thread (`flowchat bench --vs-read`, eight alternations)
// read a median 90.5% of the read probe without it against 87% with it,
// higher or equal in all eight pairs. The AVX2 and AVX-VNNI decode kernels
// (r16_amd64.s) follow it and b16AheadQ4 too. FLOWCHAT_Q4L1=0 or 1
// overrides it.
var b16Q4L1 = true

func init() {
	if cpuIsAMD() {
		b16AheadQ4 = 32 * 288
		b16AheadQ8 = 24 * 544
		b16Q4L1 = false
	}
	if v, err := strconv.Atoi(os.Getenv("FLOWCHAT_Q8AHEAD")); err == nil && v >= 0 && v <= 256 {
		b16AheadQ8 = v * 544
	}
	if v, err := strconv.Atoi(os.Getenv("FLOWCHAT_Q4AHEAD")); err == nil && v >= 0 && v <= 256 {
		b16AheadQ4 = v * 288
	}
	if v := os.Getenv("FLOWCHAT_Q4L1"); v == "0" || v == "1" {
		b16Q4L1 = v == "1"
	}
}

// b16AsmDec runs the decode kernel of t after checking its operands' extent.
func b16AsmDec(t Type, nb int, w, x []byte, dx []float32, corr []int32, step int, dst []float32) {
	_, _, _, _ = w[16*t.TypeSize()*nb-1], x[34*nb-1], dx[step*(nb-1)], corr[step*(nb-1)]
	_ = dst[15]
	if step < 1 {
		panic("ggml: decode operands step < 1")
	}
	if t == Q4_0 {
		b16q40(&w[0], nb, &x[0], &dx[0], &corr[0], &dst[0], step)
		return
	}
	b16q80(&w[0], nb, &x[0], &dx[0], &corr[0], &dst[0], step)
}

func b16AsmUnpack(w []byte, nb int, dst []byte) {
	_, _ = w[288*nb-1], dst[512*nb-1]
	b16UnpackQ4(&w[0], nb, &dst[0])
}

// amxAsm is the tier's assembly kernels; batches narrower than the tiles
// take the AVX-512 VNNI kernels of r16_amd64.go (every AMX CPU has
// AVX-512 VNNI and BW; amxNarrow is nil on one that would not).
var amxAsm = b16Kernels{amxAsmTile, b16AsmDec, b16AsmUnpack, amxNarrow()}

func amxNarrow() func(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
	if !hasKVNNI {
		return nil
	}
	return func(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
		r16Gemm(t, n, w, rows, a, dst, ldd, r16VNNI[t])
	}
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

// installAMX installs the AMX tier for Q4_0 and Q8_0 when amxUsable and
// the self-check pass and FLOWCHAT_AMX is not 0; otherwise it records why
// not. The tier is the interleaved layout of those types (the tile layout,
// b16.go: Model.InterleaveRows4 rewrites their matrices at load) and its
// kernels: AMX tiles for batches of amxCols[t] or more columns, VPDPBUSD over
// the same bytes below that, one rounding for both (amx.go), so prompt
// batches and decode give the same bits and the tier can be the default.
// Matrices kept row-major (--mmap, the token embedding, Q5_0 and IQ4_NL)
// run the VNNI tier as before. The first AMX tier (2026-11-26) ran prompt
// batches over the row-major layout and rounded by block where decode
// rounded by lane, so it was opt-in (docs/PERFORMANCE.md, issue 18).
func installAMX() {
	amxHW = amxUsable()
	switch {
	case amxHW != nil:
		amxState = "no amx: " + amxHW.Error()
		return
	case os.Getenv("FLOWCHAT_AMX") == "0":
		amxState = "no amx: this CPU has AMX; FLOWCHAT_AMX=0 turned the tier off"
		return
	}
	if err := amxSelfCheck(amxAsm); err != nil {
		amxState = "no amx: self-check failed, running the VNNI tiles: " + err.Error()
		return
	}
	useAMX(amxAsm)
}

// useAMX installs the tile layout with kernels k (the assembly; the
// models in the dispatch test) for Q4_0 and Q8_0.
func useAMX(k b16Kernels) {
	for _, t := range []Type{Q4_0, Q8_0} {
		t := t
		gemmRows4[t] = func(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
			b16Gemm(t, n, w, rows, a, dst, ldd, &k)
		}
		rows4Pairs[t], tileRows16[t], b16On[t] = false, true, true
	}
	amxOn = true
	amxState = fmt.Sprintf("amx-int8 tiles in the tile layout (Q4_0, Q8_0): batches of ≥ %d (Q4_0), %d (Q8_0) columns on the tiles, smaller batches and decode by VPDPBUSD, one rounding", amxCols[Q4_0], amxCols[Q8_0])
}

// amxSelfCheck runs fixed products (a full group and a tail row, a full
// and a partial column group, a decode batch; Q4_0 and Q8_0) through k and
// through the plain-Go twin, which must agree bit for bit. On an AMX CPU
// it guards users against an encoding or layout fault in the assembly that
// no machine without AMX could show (an illegal encoding would still
// fault).
func amxSelfCheck(k b16Kernels) error {
	r := rand.New(rand.NewPCG(18, 18))
	const n, rows = 96, 33
	for _, t := range []Type{Q4_0, Q8_0} {
		for _, cols := range []int{1, amxCols[t] - 1, amxCols[t], 21} {
			w, x := amxCheckOperands(r, t, n, rows, cols)
			rows16Move(t, n, w, rows, nil, true)
			var a Act
			a.prepareB16(t, n, x, cols, true)
			want, got := make([]float32, rows*cols), make([]float32, rows*cols)
			b16Twin(t, n, w, rows, 0, rows, &a, want, rows)
			b16Gemm(t, n, w, rows, &a, got, rows, &k)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					return fmt.Errorf("%v n=%d, %d columns: row %d column %d is %v, the twin's %v", t, n, cols, i%rows, i/rows, got[i], want[i])
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
