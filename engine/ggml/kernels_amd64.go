//go:build amd64 && !noasm

package ggml

import (
	"math"
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 reports whether the AVX2+FMA+F16C kernels run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

func init() {
	if hasAVX2 {
		installAVX2()
		quantActQ8Rows = quantActQ8Asm
		fp32ToFP16Row = fp32ToFP16Asm
		quantActQ8K = quantActQ8KAsm
		quantTile = quantTileAsm
	}
}

//go:noescape
func quantQ8TileAVX(x *float32, y *byte, nb int, dx *float32, corr *int32, step int, off int32)

// quantTileAsm runs quantQ8TileAVX after checking its operands' extent.
func quantTileAsm(x []float32, y []byte, nb int, dx []float32, corr []int32, step int, off int32) {
	if nb == 0 {
		return
	}
	_, _, _, _ = x[32*nb-1], y[34*nb-1], dx[step*(nb-1)], corr[step*(nb-1)]
	if step < 1 {
		panic("ggml: tile operands step < 1")
	}
	quantQ8TileAVX(&x[0], &y[0], nb, &dx[0], &corr[0], step, off)
}

//go:noescape
func quantQ8KAVX2(x *float32, y *byte, nb int) int

// quantActQ8KAsm is quantActQ8KGo through quantQ8KAVX2 (quantk_amd64.s),
// the blocks it leaves (a NaN or an infinity in them, or a scale that
// overflows) through the Go code.
// It was 7% of a TinyLlama Q4_K_M prompt in Go (the K-quants' columns).
func quantActQ8KAsm(x []float32, y []byte) {
	nb := len(x) / QK_K
	if nb == 0 {
		return
	}
	_ = y[292*nb-1]
	for b := 0; b < nb; {
		b += quantQ8KAVX2(&x[QK_K*b], &y[292*b], nb-b)
		if b < nb {
			quantRefQ8_K(x[QK_K*b:QK_K*(b+1)], y[292*b:292*(b+1)])
			b++
		}
	}
}

//go:noescape
func quantQ8AVX(x *float32, y *byte, nb int, stride int, withSum bool)

//go:noescape
func fp32ToFP16AVX(x *float32, y *uint16, n int)

func quantActQ8Asm(x []float32, y []byte, withSum bool) {
	if len(x) < 32 {
		return
	}
	stride := 34
	if withSum {
		stride = 36
	}
	quantQ8AVX(&x[0], &y[0], len(x)/32, stride, withSum)
}

func fp32ToFP16Asm(x []float32, y []byte) {
	n := len(x) &^ 7
	if n > 0 {
		fp32ToFP16AVX(&x[0], &bytesU16(y)[0], n)
	}
	for i := n; i < len(x); i++ {
		put16(y[2*i:], FP32ToFP16(x[i]))
	}
}

//go:noescape
func dotF32AVX(a, b *float32, n int) float32

//go:noescape
func dotF16AVX(a, b *uint16, n int, tab *float32) float32

//go:noescape
func dotF16QAVX(a, b *uint16, n int, tab *float32) float32

//go:noescape
func dotBF16AVX(a, b *uint16, n int) float32

//go:noescape
func dotQ4_KAVX(w *byte, x *byte, nb int, tab *float32) float32

//go:noescape
func dotQ6_KAVX(w *byte, x *byte, nb int, tab *float32) float32

//go:noescape
func dotQ5_KAVX(w *byte, x *byte, nb int, tab *float32) float32

//go:noescape
func dotQ3_KAVX(w *byte, x *byte, nb int, tab *float32) float32

//go:noescape
func dotQ2_KAVX(w *byte, x *byte, nb int, tab *float32) float32

// The 32-block kernels with a prepared activation (see prepQ8): out[0:4]
// for 4 rows rs bytes apart (x4) or out[0] for one row (x1); aux is the
// per-lane correction (Q5_0) or the activation block sums (Q4_1, Q5_1).
//
//go:noescape
func matIQ4_NLx4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matIQ4_NLx1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matQ5_0x4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matQ5_0x1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matQ4_1x4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matQ4_1x1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matQ5_1x4(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

//go:noescape
func matQ5_1x1(w *byte, rs int, qs *byte, dx *float32, aux *int32, nb int, tab *float32, out *float32)

// avx2Dot and avx2MatVec are the assembly kernels by weight type.
var (
	avx2Dot = map[Type]dotFunc{
		F32: dotF32Asm, F16: dotF16Asm, BF16: dotBF16Asm,
		Q4_K: superDot(dotQ4_KAVX), Q6_K: superDot(dotQ6_KAVX), Q5_K: superDot(dotQ5_KAVX),
		Q3_K: superDot(dotQ3_KAVX), Q2_K: superDot(dotQ2_KAVX),
	}
	avx2MatVec = map[Type]matVecFunc{
		F32: rowsMatVec(F32, dotF32Asm), F16: rowsMatVec(F16, dotF16Asm), BF16: rowsMatVec(BF16, dotBF16Asm),
		IQ4_NL: matVec32(IQ4_NL, 0), Q5_0: matVec32(Q5_0, 16),
		Q4_1: matVec32(Q4_1, 0), Q5_1: matVec32(Q5_1, 0),
	}
)

func installAVX2() {
	if !hasAVX512 {
		// The AVX2 tier's F16 order (dotF16QAVX; its prefill tile in
		// gemmfa_amd64.go): the plain-Go reference follows it.
		avx2Dot[F16], avx2MatVec[F16] = dotF16QAsm, rowsMatVec(F16, dotF16QAsm)
		goDot[F16] = dotF16QGo
	}
	for t, off := range map[Type]int32{IQ4_NL: 0, Q5_0: 16, Q4_1: 0, Q5_1: 0} {
		avx2Dot[t] = dot32(t, off)
	}
	for t, f := range avx2Dot {
		dotImpl[t] = f
		if avx2MatVec[t] == nil {
			avx2MatVec[t] = rowsMatVec(t, f)
		}
	}
	for t, f := range avx2MatVec {
		matVecImpl[t] = f
	}
	installKTiles()
}

// rowsMatVec applies a single-row kernel to each row.
func rowsMatVec(t Type, dot dotFunc) matVecFunc {
	return func(n int, w, x []byte, dst []float32) {
		rs := t.RowSize(n)
		for r := range dst {
			dst[r] = dot(n, w[r*rs:(r+1)*rs], x)
		}
	}
}

func dotF32Asm(n int, w, x []byte) float32 {
	if n == 0 {
		return 0
	}
	return dotF32AVX((*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&x[0])), n)
}

func dotF16Asm(n int, w, x []byte) float32 {
	if n == 0 {
		return 0
	}
	return dotF16AVX((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&x[0])), n, &fp16Table[0])
}

func dotF16QAsm(n int, w, x []byte) float32 {
	if n == 0 {
		return 0
	}
	_, _ = w[2*n-1], x[2*n-1]
	return dotF16QAVX((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&x[0])), n, &fp16Table[0])
}

func dotBF16Asm(n int, w, x []byte) float32 {
	if n == 0 {
		return 0
	}
	return dotBF16AVX((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&x[0])), n)
}

// prepQ8 is a Q8_0 activation row unpacked for the kernels: the int8
// values contiguous, each block scale repeated 8 times (one per lane) and,
// for weight formats with an implicit offset, the per-lane correction
// offset·Σ(4 consecutive values).
type prepQ8 struct {
	qs   []byte
	dx8  []float32
	corr []int32 // offset·Σ per lane; for Q8_1, the block sum s in lane 0
}

var prepPool = sync.Pool{New: func() any { return new(prepQ8) }}

// getPrepQ8 unpacks the Q8_0 row x (nb blocks); offset 0 skips corr.
func getPrepQ8(x []byte, nb int, offset int32) *prepQ8 {
	p := allocPrep(nb)
	for b := 0; b < nb; b++ {
		blk := x[34*b : 34*b+34]
		copy(p.qs[32*b:], blk[2:])
		d := f16(blk)
		for l := 0; l < 8; l++ {
			p.dx8[8*b+l] = d
		}
		if offset != 0 {
			prepCorr(blk[2:34], p.corr[8*b:8*b+8], offset)
		}
	}
	return p
}

// getPrepQ8_1 unpacks the Q8_1 row x: corr lane 0 holds fp32(s) bits.
func getPrepQ8_1(x []byte, nb int) *prepQ8 {
	p := allocPrep(nb)
	for b := 0; b < nb; b++ {
		blk := x[36*b : 36*b+36]
		copy(p.qs[32*b:], blk[4:])
		d := f16(blk)
		for l := 0; l < 8; l++ {
			p.dx8[8*b+l] = d
		}
		// Lanes 1-7 are multiplied by zero in the kernels, so they must
		// hold a finite value: pooled buffers may carry stale bits that read
		// as NaN.
		clear(p.corr[8*b : 8*b+8])
		p.corr[8*b] = int32(math.Float32bits(f16(blk[2:])))
	}
	return p
}

func allocPrep(nb int) *prepQ8 {
	p := prepPool.Get().(*prepQ8)
	if cap(p.qs) < 32*nb {
		p.qs, p.dx8, p.corr = make([]byte, 32*nb), make([]float32, 8*nb), make([]int32, 8*nb)
	}
	p.qs, p.dx8, p.corr = p.qs[:32*nb], p.dx8[:8*nb], p.corr[:8*nb]
	return p
}

// superDot adapts a K-quant kernel over nb super-blocks against Q8_K.
func superDot(k func(w, x *byte, nb int, tab *float32) float32) dotFunc {
	return func(n int, w, x []byte) float32 {
		if n < QK_K {
			return 0
		}
		return k(&w[0], &x[0], n/QK_K, &fp16Table[0])
	}
}

// matVec32 returns the MatVec of a 32-block type with prepared activations
// (see run32); offset is the implicit weight offset moved to the activation
// side (Q5_0: 16); Q4_1 and Q5_1 take Q8_1 activations.
func matVec32(t Type, offset int32) matVecFunc {
	return func(n int, w, x []byte, dst []float32) {
		nb := n / 32
		if nb == 0 {
			clear(dst)
			return
		}
		var p *prepQ8
		if t.VecDotType() == Q8_1 {
			p = getPrepQ8_1(x, nb)
		} else {
			p = getPrepQ8(x, nb, offset)
		}
		rs := t.RowSize(n)
		r := 0
		for ; r+4 <= len(dst); r += 4 {
			run32(t, true, &w[r*rs], rs, p, nb, &dst[r])
		}
		for ; r < len(dst); r++ {
			run32(t, false, &w[r*rs], rs, p, nb, &dst[r])
		}
		prepPool.Put(p)
	}
}

// run32 calls the x4 (four rows) or x1 kernel of t; direct calls keep out
// on the caller's stack.
func run32(t Type, four bool, w *byte, rs int, p *prepQ8, nb int, out *float32) {
	qs, dx, aux, tab := &p.qs[0], &p.dx8[0], &p.corr[0], &fp16Table[0]
	switch {
	case t == IQ4_NL && four:
		matIQ4_NLx4(w, rs, qs, dx, aux, nb, tab, out)
	case t == IQ4_NL:
		matIQ4_NLx1(w, rs, qs, dx, aux, nb, tab, out)
	case t == Q5_0 && four:
		matQ5_0x4(w, rs, qs, dx, aux, nb, tab, out)
	case t == Q5_0:
		matQ5_0x1(w, rs, qs, dx, aux, nb, tab, out)
	case t == Q4_1 && four:
		matQ4_1x4(w, rs, qs, dx, aux, nb, tab, out)
	case t == Q4_1:
		matQ4_1x1(w, rs, qs, dx, aux, nb, tab, out)
	case t == Q5_1 && four:
		matQ5_1x4(w, rs, qs, dx, aux, nb, tab, out)
	default:
		matQ5_1x1(w, rs, qs, dx, aux, nb, tab, out)
	}
}

// dot32 is the single-row dot product of a 32-block type.
func dot32(t Type, offset int32) dotFunc {
	return func(n int, w, x []byte) float32 {
		nb := n / 32
		if nb == 0 {
			return 0
		}
		var p *prepQ8
		if t.VecDotType() == Q8_1 {
			p = getPrepQ8_1(x, nb)
		} else {
			p = getPrepQ8(x, nb, offset)
		}
		var out float32
		run32(t, false, &w[0], t.RowSize(n), p, nb, &out)
		prepPool.Put(p)
		return out
	}
}
