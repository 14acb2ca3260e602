//go:build arm64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// neonTwins maps the types with NEON kernels to their bit-exact plain-Go
// twins (see neon_arm64.go).
var neonTwins = map[Type]dotFunc{F32: dotF32Go, F16: dotF16Go, Q8_0: dotQ8_0Lanes, Q4_0: dotQ4_0Lanes}

// neonPaths runs f once per lane-sum path this CPU can take: the baseline
// (smull/saddlp) always, sdot where the CPU has dotprod.
func neonPaths(t *testing.T, f func(t *testing.T)) {
	saved := useSDOT
	defer func() { useSDOT = saved }()
	paths := []bool{false}
	if cpu.ARM64.HasASIMDDP {
		paths = append(paths, true)
	} else {
		t.Log("no dotprod on this CPU: sdot path not run")
	}
	for _, sdot := range paths {
		useSDOT = sdot
		t.Run(fmt.Sprintf("sdot=%v", sdot), f)
	}
}

// misalign copies a row of t to offset k (in elements for the float
// types, which must stay element-aligned; in bytes for the others) of a
// fresh buffer with poison after it, so that the kernels see rows off
// their natural 16-byte alignment.
func misalign(t Type, b []byte, k int) []byte {
	off := k
	if t.BlockSize() == 1 {
		off = k * t.TypeSize()
	}
	g := withGuard(append(make([]byte, off), b...))
	return g[off:]
}

// neonSizes are element counts with every tail: below, at and past the
// 8- and 32-element steps of the float kernels, odd block counts.
func neonSizes(t Type) []int {
	if t.BlockSize() == 1 {
		return []int{1, 2, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 39, 40, 63, 64, 65, 71, 96, 100, 257, 1000, 4099}
	}
	return []int{32, 64, 96, 160, 224, 288, 1024, 2080, 4096 + 32}
}

// TestNEONMatchesTwins: VecDot and MatVec (4-row strips and single rows)
// equal the plain-Go twins bit for bit on random rows, for every row count
// around the strip width, on unaligned inputs with poison after them and
// guard cells after the output; and they are close to the reference
// plain-Go kernels.
func TestNEONMatchesTwins(t *testing.T) {
	if Accel() == "go" {
		t.Skip("no NEON kernels")
	}
	neonPaths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(31, 32))
		for tp, twin := range neonTwins {
			for _, n := range neonSizes(tp) {
				for _, rows := range []int{1, 3, 4, 5, 8, 9} {
					rs := tp.RowSize(n)
					w := misalign(tp, randomRow(r, tp, n*rows), rows%4)
					x := misalign(tp.VecDotType(), randomActivation(r, tp.VecDotType(), n), 1+rows%3)
					dst := nanSlice(rows + 2)
					MatVec(tp, n, w, x, dst[:rows])
					for i := rows; i < len(dst); i++ {
						if !math.IsNaN(float64(dst[i])) {
							t.Fatalf("%v n=%d rows=%d: MatVec wrote past dst", tp, n, rows)
						}
					}
					for row := 0; row < rows; row++ {
						wr := w[row*rs : (row+1)*rs]
						want := twin(n, wr, x)
						got := VecDot(tp, n, wr, x)
						if math.Float32bits(got) != math.Float32bits(want) || math.Float32bits(dst[row]) != math.Float32bits(want) {
							t.Fatalf("%v n=%d rows=%d row %d: VecDot %v, MatVec %v, twin %v", tp, n, rows, row, got, dst[row], want)
						}
						ref := goDot[tp](n, wr, x)
						if tol := 2e-6*absDot(tp, n, wr, x) + 1e-30; math.Abs(float64(got-ref)) > tol {
							t.Fatalf("%v n=%d row %d: NEON %v, plain Go %v (tol %g)", tp, n, row, got, ref, tol)
						}
					}
				}
			}
		}
	})
}

// TestNEONRawHalves: fp16 values and scales drawn from every finite bit
// pattern (subnormals included) widen exactly as fp16Table does.
func TestNEONRawHalves(t *testing.T) {
	if Accel() == "go" {
		t.Skip("no NEON kernels")
	}
	finiteHalf := func(r *rand.Rand) uint16 {
		for {
			h := uint16(r.Uint32())
			if h&0x7c00 != 0x7c00 {
				return h
			}
		}
	}
	neonPaths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(33, 34))
		for _, n := range []int{7, 40, 100, 1001} {
			w, x := make([]byte, 2*n), make([]byte, 2*n)
			for i := 0; i < n; i++ {
				h := finiteHalf(r)
				if i%3 == 0 {
					h &= 0x83ff // subnormal or zero
				}
				put16(w[2*i:], h)
				put16(x[2*i:], finiteHalf(r))
			}
			if got, want := VecDot(F16, n, w, x), dotF16Go(n, w, x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("F16 n=%d: NEON %v, twin %v", n, got, want)
			}
		}
		for tp, twin := range map[Type]dotFunc{Q8_0: dotQ8_0Lanes, Q4_0: dotQ4_0Lanes} {
			n := 32 * 37
			w, x := randomRow(r, tp, n), randomRow(r, Q8_0, n)
			for b := 0; b < n/32; b++ {
				put16(w[b*tp.TypeSize():], finiteHalf(r)&0x87ff) // small scales, many subnormal
				put16(x[34*b:], finiteHalf(r)&0xbfff)
			}
			got, want := VecDot(tp, n, w, x), twin(n, w, x)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v: NEON %v, twin %v", tp, got, want)
			}
		}
	})
}

// TestNEONExtremes: the largest products (-128·-128 in every lane of
// Q8_0, -8·-128 in Q4_0) are summed exactly.
func TestNEONExtremes(t *testing.T) {
	if Accel() == "go" {
		t.Skip("no NEON kernels")
	}
	neonPaths(t, func(t *testing.T) {
		n := 32 * 5
		x := make([]byte, Q8_0.RowSize(n))
		w8 := make([]byte, Q8_0.RowSize(n))
		w4 := make([]byte, Q4_0.RowSize(n))
		for b := 0; b < n/32; b++ {
			put16(x[34*b:], FP32ToFP16(1))
			put16(w8[34*b:], FP32ToFP16(1))
			put16(w4[18*b:], FP32ToFP16(1))
			for j := 0; j < 32; j++ {
				x[34*b+2+j], w8[34*b+2+j] = 0x80, 0x80
			}
		}
		if got, want := VecDot(Q8_0, n, w8, x), float32(n*128*128); got != want {
			t.Errorf("Q8_0: %v, want %v", got, want)
		}
		if got, want := VecDot(Q4_0, n, w4, x), float32(n*8*128); got != want { // nibbles 0: level -8
			t.Errorf("Q4_0: %v, want %v", got, want)
		}
	})
}
