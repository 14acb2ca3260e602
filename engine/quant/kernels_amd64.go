//go:build amd64 && !noasm

package quant

import (
	"encoding/binary"
	"sync"

	"golang.org/x/sys/cpu"

	"flowchat/engine/ggml"
)

// hasAVX2 reports whether the AVX2+FMA+F16C kernels run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// Accel names the kernels in use: "avx2" or "go".
func Accel() string {
	if hasAVX2 {
		return "avx2"
	}
	return "go"
}

func init() {
	if hasAVX2 {
		dotImpl, matVecImpl = dotAVX2, matVecAVX2
	}
}

// The assembly kernels: the dot product of nb weight blocks at w with a
// prepared activation (see prepQ8), Σ over 32-weight sub-blocks j of
// dx[j]·d·Σ q·x + lo·sx[j]. One per format family (the block size is an
// argument where two formats share the code layout).
//
//go:noescape
func dotQ8AVX(w *byte, qs *byte, dx, sx *float32, nb, sub, size int) float32

//go:noescape
func dotQ6AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

//go:noescape
func dotQ5AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

//go:noescape
func dotQ4B32AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

//go:noescape
func dotQ4B64AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

//go:noescape
func dotQ3HAVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

//go:noescape
func dotQ3AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

//go:noescape
func dotQ2AVX(w *byte, qs *byte, dx, sx *float32, nb int) float32

// prepQ8 is a Q8_0 activation row unpacked once per matrix-vector product
// and shared by every row: the int8 values contiguous ([32·nb]), each
// block's scale dx ([nb]) and dx·Σx ([nb], the min term's factor).
type prepQ8 struct {
	qs     []byte
	dx, sx []float32
}

var prepPool = sync.Pool{New: func() any { return new(prepQ8) }}

func getPrep(x []byte, nb int) *prepQ8 {
	p := prepPool.Get().(*prepQ8)
	if cap(p.qs) < 32*nb {
		p.qs, p.dx, p.sx = make([]byte, 32*nb), make([]float32, nb), make([]float32, nb)
	}
	p.qs, p.dx, p.sx = p.qs[:32*nb], p.dx[:nb], p.sx[:nb]
	for b := 0; b < nb; b++ {
		blk := x[q8Size*b : q8Size*(b+1)]
		qs := blk[2:q8Size]
		copy(p.qs[32*b:], qs)
		s := 0
		for _, v := range qs {
			s += int(int8(v))
		}
		p.dx[b] = ggml.FP16ToFP32(binary.LittleEndian.Uint16(blk))
		p.sx[b] = float32(p.dx[b] * float32(s))
	}
	return p
}

func dotAVX2(f *Format, n int, w, x []byte) float32 {
	var d [1]float32
	matVecAVX2(f, n, w, x, d[:])
	return d[0]
}

func matVecAVX2(f *Format, n int, w, x []byte, dst []float32) {
	p := getPrep(x, n/32)
	rs, nb := f.RowSize(n), n/f.Block
	for r := range dst {
		dst[r] = runKernel(f, &w[r*rs], p, nb)
	}
	prepPool.Put(p)
}

// runKernel calls f's kernel on one row of nb blocks.
func runKernel(f *Format, w *byte, p *prepQ8, nb int) float32 {
	qs, dx, sx := &p.qs[0], &p.dx[0], &p.sx[0]
	switch f.Type {
	case Q8_B32, Q8_B64:
		return dotQ8AVX(w, qs, dx, sx, nb, f.Block/32, f.Size)
	case Q6_B64:
		return dotQ6AVX(w, qs, dx, sx, nb)
	case Q5_B64:
		return dotQ5AVX(w, qs, dx, sx, nb)
	case Q4_B32:
		return dotQ4B32AVX(w, qs, dx, sx, nb)
	case Q4_B64:
		return dotQ4B64AVX(w, qs, dx, sx, nb)
	case Q3H_B64:
		return dotQ3HAVX(w, qs, dx, sx, nb)
	case Q3_B32:
		return dotQ3AVX(w, qs, dx, sx, nb)
	}
	return dotQ2AVX(w, qs, dx, sx, nb)
}
