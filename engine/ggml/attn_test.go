package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randFloats(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestDotsF32: every score equals VecDot(F32) of its key row, and the
// kernel in use equals the Go twin bit for bit (odd lengths, strides).
func TestDotsF32(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 7, 8, 31, 32, 33, 64, 100, 128} {
		for _, m := range []int{1, 2, 5, 17} {
			stride := n + r.IntN(9)
			q, k := randFloats(r, n, 1), randFloats(r, (m-1)*stride+n, 1)
			got, want := make([]float32, m), make([]float32, m)
			DotsF32(q, k, stride, got)
			dotsF32Go(q, k, stride, want)
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("n=%d m=%d: score %d kernel %v, twin %v", n, m, i, got[i], want[i])
			}
			for j := range got {
				if v := VecDot(F32, n, F32Bytes(k[j*stride:j*stride+n]), F32Bytes(q)); v != got[j] {
					t.Fatalf("n=%d: score %d %v, VecDot %v", n, j, got[j], v)
				}
			}
		}
	}
}

// TestAccumulateRows: the kernel in use equals the plain loop bit for bit,
// and leaves the elements after out alone.
func TestAccumulateRows(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, n := range []int{1, 5, 8, 13, 32, 40, 64, 80, 100} {
		for _, m := range []int{1, 3, 64} {
			stride := n + r.IntN(5)
			w, v := randFloats(r, m, 0.3), randFloats(r, (m-1)*stride+n, 1)
			base := randFloats(r, n+4, 1)
			got, want := append([]float32(nil), base...), append([]float32(nil), base...)
			AccumulateRows(got[:n], w, v, stride)
			accumulateRowsGo(want[:n], w, v, stride)
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("n=%d m=%d: element %d kernel %v, twin %v", n, m, i, got[i], want[i])
			}
		}
	}
}

// TestSoftMaxKernels: the exp groups and scaling in use equal the Go twins
// bit for bit over inputs that reach ExpGGML's slow lanes (|n| > 126, 192).
func TestSoftMaxKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, n := range []int{1, 7, 8, 9, 24, 100, 513} {
		for _, sc := range []float64{1, 30, 80} {
			x := randFloats(r, n, sc)
			if n > 3 {
				x[2] = float32(math.Inf(-1))
			}
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			m := maxF32(x)
			sa, sb := expGroups(a[:n&^7], m), expGroupsGo(b[:n&^7], m)
			if i := sameBits(a, b); i >= 0 || sa != sb {
				t.Fatalf("n=%d scale %v: exp %d kernel %v twin %v; sums %v %v", n, sc, i, a[max(i, 0)], b[max(i, 0)], sa, sb)
			}
			scale(a, 0.37)
			scaleGo(b, 0.37)
			if i := sameBits(a, b); i >= 0 {
				t.Fatalf("n=%d: scale %d differs", n, i)
			}
			SoftMax(x)
			var s float64
			for _, v := range x {
				s += float64(v)
			}
			if math.Abs(s-1) > 1e-5 {
				t.Fatalf("n=%d: softmax sums to %v", n, s)
			}
		}
	}
}

// TestExpGGMLAccuracy: ggml's expf approximation stays within its
// documented error of math.Exp over the range attention feeds it.
func TestExpGGMLAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		x := float32(r.Float64()*180 - 100)
		got, want := float64(ExpGGML(x)), math.Exp(float64(x))
		if want < 1e-37 {
			continue // subnormal results flush in GGML's version
		}
		if ulp := float64(math.Float32frombits(math.Float32bits(float32(want))+1) - float32(want)); math.Abs(got-want) > 2.5*ulp {
			t.Fatalf("ExpGGML(%g) = %g, want %g (> 2.5 ulp)", x, got, want)
		}
	}
	if ExpGGML(float32(math.Inf(-1))) != 0 || ExpGGML(-200) != 0 {
		t.Errorf("large negative inputs must give 0")
	}
}
