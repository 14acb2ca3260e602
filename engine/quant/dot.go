package quant

import (
	"fmt"

	"flowchat/engine/ggml"
)

// ActType is the activation format the dot kernels take: ggml's Q8_0
// (blocks of 32 int8 with an fp16 scale), so that the engine quantizes
// activations for these formats exactly as for GGML's Q4_0 or Q8_0.
const ActType = ggml.Q8_0

// q8Size is the bytes of one Q8_0 activation block.
const q8Size = 34

// dotFunc returns the dot product of n weights (row w) with a Q8_0 row x.
type dotFunc func(f *Format, n int, w, x []byte) float32

// matVecFunc computes dst[r] = dot(row r of w, x) for len(dst) rows.
type matVecFunc func(f *Format, n int, w, x []byte, dst []float32)

// dotImpl and matVecImpl are the kernels in use: the plain-Go twins unless
// an architecture file installs faster ones at init.
var (
	dotImpl    dotFunc    = dotGo
	matVecImpl matVecFunc = matVecRows
)

// Dot returns Σ w'ᵢ·x'ᵢ over n weights: w holds a row of f, x a Q8_0 row
// of n values. It panics if the lengths do not match n.
func (f *Format) Dot(n int, w, x []byte) float32 {
	f.checkDot(n, len(w), len(x))
	if n == 0 {
		return 0
	}
	return dotImpl(f, n, w, x)
}

// MatVec computes dst[r] = f.Dot(n, row r of w, x) for the len(dst)
// consecutive rows at the start of w.
func (f *Format) MatVec(n int, w, x []byte, dst []float32) {
	rs := f.RowSize(n)
	f.checkDot(n, rs, len(x))
	if len(w) < rs*len(dst) {
		panic(fmt.Sprintf("quant: MatVec over %d rows of %s needs %d bytes of weights, got %d", len(dst), f.Name, rs*len(dst), len(w)))
	}
	if n == 0 {
		clear(dst)
		return
	}
	matVecImpl(f, n, w[:rs*len(dst)], x, dst)
}

func (f *Format) checkDot(n, wlen, xlen int) {
	f.checkRow(n, wlen)
	if want := n / 32 * q8Size; xlen != want {
		panic(fmt.Sprintf("quant: Q8_0 activation row of %d values needs %d bytes, got %d", n, want, xlen))
	}
}

// matVecRows applies the single-row kernel in use to each row.
func matVecRows(f *Format, n int, w, x []byte, dst []float32) {
	rs := f.RowSize(n)
	for r := range dst {
		dst[r] = dotImpl(f, n, w[r*rs:(r+1)*rs], x)
	}
}

// dotGo is the plain-Go kernel, the reference for the others. Per 32-weight
// sub-block j with activation scale dxⱼ and values xⱼ:
//
//	Σ w'·x' = Σⱼ dxⱼ·(d·Σ q·x + lo·Σ x)
//
// with both integer sums exact; the float terms are rounded in this order.
func dotGo(f *Format, n int, w, x []byte) float32 {
	var q [64]uint8
	var sum float32
	sub := f.Block / 32
	for b := 0; b < n/f.Block; b++ {
		blk := w[b*f.Size : (b+1)*f.Size]
		f.unpack(blk[headerSize:], q[:f.Block])
		lo, d := blockScales(blk)
		for s := 0; s < sub; s++ {
			xb := x[q8Size*(b*sub+s) : q8Size*(b*sub+s+1)]
			isum, xsum := dotLevels(q[32*s:32*s+32], xb[2:])
			dx := ggml.FP16ToFP32(uint16(xb[0]) | uint16(xb[1])<<8)
			t := float32(float32(dx*d)*float32(isum)) + float32(float32(dx*lo)*float32(xsum))
			sum += t
		}
	}
	return sum
}

// dotLevels returns Σ q·x and Σ x over 32 levels and int8 values.
func dotLevels(q []uint8, x []byte) (isum, xsum int) {
	x = x[:32]
	for j, v := range q[:32] {
		xv := int(int8(x[j]))
		isum += int(v) * xv
		xsum += xv
	}
	return isum, xsum
}
