//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ2KTilesMatchLanes: the Q2_K tiles equal the lane twin bit for bit
// for every batch width 1-17 (groups of 8, a group of 4, single-row
// leftovers), odd row counts, one to nine super-blocks, random and extreme
// blocks (all scales and mins 15, all values 3, activations ±127/-128 with
// their true block sums), guard cells between output columns and poison
// after the operands.
func TestQ2KTilesMatchLanes(t *testing.T) {
	if !hasQ2Tiles {
		t.Skip("no AVX-512 VL/BW: the Q2_K tiles do not run on this CPU")
	}
	if gemmImpl[Q2_K] == nil {
		t.Fatal("Q2_K tiles not installed")
	}
	r := rand.New(rand.NewPCG(181, 182))
	for _, extreme := range []bool{false, true} {
		for _, nb := range []int{1, 2, 9} {
			for cols := 1; cols <= 17; cols++ {
				n, rows := nb*QK_K, 1+2*(cols%4)+cols/5
				g := newGemmCase(r, Q2_K, n, rows, cols)
				if extreme {
					extremeQ2K(r, g.w[:Q2_K.RowSize(n)*rows], g.x[:Q8_K.RowSize(n)*cols])
				}
				var a Act
				a.Prepare(Q2_K, n, g.x, cols)
				ldd := rows + 2
				got := nanSlice(cols * ldd)
				MatMulAct(Q2_K, n, g.w, rows, &a, got, ldd)
				name := fmt.Sprintf("Q2_K extreme=%v n=%d %dx%d", extreme, n, rows, cols)
				checkGemm(t, name, got, g.want(Q2_K, dotQ2_KLanes, ldd), rows, ldd)
			}
		}
	}
}

// extremeQ2K overwrites Q2_K rows w and Q8_K columns x with the largest
// magnitudes the formats hold: every scale and min 15, every 2-bit value 3
// (or a random mix of 0 and 3), activations ±127 or -128 with consistent
// 16-element sums, and random fp16 / float32 scales.
func extremeQ2K(r *rand.Rand, w, x []byte) {
	for b := 0; b+84 <= len(w); b += 84 {
		for i := 0; i < 16; i++ {
			w[b+i] = 0xff
		}
		for i := 16; i < 80; i++ {
			w[b+i] = 0xff
			if r.IntN(2) == 0 {
				w[b+i] = byte(r.Uint32()) & 0xcc
			}
		}
	}
	for b := 0; b+292 <= len(x); b += 292 {
		v := []int8{127, -128, -127}[r.IntN(3)]
		for i := 0; i < QK_K; i++ {
			q := v
			if r.IntN(4) == 0 {
				q = int8(r.Uint32())
			}
			x[b+4+i] = byte(q)
		}
		for g := 0; g < 16; g++ {
			s := 0
			for i := 0; i < 16; i++ {
				s += int(int8(x[b+4+16*g+i]))
			}
			put16(x[b+4+QK_K+2*g:], uint16(int16(s)))
		}
		le := math.Float32bits(float32(r.Float64()+0.5) * 1e-2)
		x[b], x[b+1], x[b+2], x[b+3] = byte(le), byte(le>>8), byte(le>>16), byte(le>>24)
	}
}

// TestQ35KTilesMatchLanes: the Q3_K and Q5_K tiles equal the lane twins
// bit for bit for every batch width 1-17 (groups of 8 or 4, single-row
// leftovers), odd row counts and one to nine super-blocks, with guard
// cells and poison.
func TestQ35KTilesMatchLanes(t *testing.T) {
	if !hasQ2Tiles {
		t.Skip("no AVX-512 VL/BW: the Q3_K and Q5_K tiles do not run on this CPU")
	}
	r := rand.New(rand.NewPCG(183, 184))
	for tp, twin := range map[Type]dotFunc{Q3_K: dotQ3_KLanes, Q5_K: dotQ5_KLanes} {
		for _, nb := range []int{1, 2, 9} {
			for cols := 1; cols <= 17; cols++ {
				n, rows := nb*QK_K, 1+2*(cols%4)+cols/5
				g := newGemmCase(r, tp, n, rows, cols)
				var a Act
				a.Prepare(tp, n, g.x, cols)
				ldd := rows + 2
				got := nanSlice(cols * ldd)
				MatMulAct(tp, n, g.w, rows, &a, got, ldd)
				name := fmt.Sprintf("%v n=%d %dx%d", tp, n, rows, cols)
				checkGemm(t, name, got, g.want(tp, twin, ldd), rows, ldd)
			}
		}
	}
}

// BenchmarkQ2KTiles: a TinyLlama-shaped Q2_K, Q3_K or Q5_K chunk (64 rows × 2048) in
// cache against 4-64 columns, the tiles (as installed) against the single-row
// kernel column by column (the previous path); GMAC/s per second of the
// thread's CPU time.
func BenchmarkQ2KTiles(b *testing.B) {
	for _, tp := range []Type{Q2_K, Q3_K, Q5_K} {
		for _, cols := range []int{4, 8, 16, 64} {
			for _, tiles := range []bool{true, false} {
				benchKTiles(b, tp, cols, tiles)
			}
		}
	}
}

func benchKTiles(b *testing.B, tp Type, cols int, tiles bool) {
	b.Run(fmt.Sprintf("%v/cols=%d/tiles=%v", tp, cols, tiles), func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 1))
		n, rows := 2048, 64
		g := newGemmCase(r, tp, n, rows, cols)
		saved := gemmImpl[tp]
		if !tiles {
			gemmImpl[tp] = nil
		}
		defer func() { gemmImpl[tp] = saved }()
		var a Act
		a.Prepare(tp, n, g.x, cols)
		dst := make([]float32, rows*cols)
		ns := cpuTimed(b, func() { MatMulAct(tp, n, g.w, rows, &a, dst, rows) })
		b.ReportMetric(float64(n*rows*cols)/ns, "GMAC/s")
	})
}
