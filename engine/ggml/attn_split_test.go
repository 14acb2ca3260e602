package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpShiftIsSoftMax: SoftMax is ExpShift from the maximum followed by
// one multiply by float32(1/sum), bit for bit (tails and slow lanes of
// ExpGGML included).
func TestExpShiftIsSoftMax(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 7, 8, 9, 31, 256, 513} {
		for _, sc := range []float64{1, 30, 80} {
			x := randFloats(r, n, sc)
			want := append([]float32(nil), x...)
			SoftMax(want)
			got := append([]float32(nil), x...)
			sum := ExpShift(got, maxF32(got))
			Scale(got, float32(1/sum))
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("n=%d scale %v: element %d is %v, SoftMax gives %v", n, sc, i, got[i], want[i])
			}
		}
	}
}

func TestExpBoundedWindow(t *testing.T) {
	x := []float32{1, 5, -3, 2}
	for _, c := range []struct {
		phi, bound float32
		ok         bool
	}{{5, 0, true}, {0, 5, true}, {0, 4.9, false}, {-100, 32, false}, {30, 32, true}, {float32(math.NaN()), 32, false}} {
		y := append([]float32(nil), x...)
		sum, m, ok := ExpBounded(y, c.phi, c.bound)
		if m != 5 || ok != c.ok {
			t.Errorf("phi %v bound %v: max %v ok %v, want 5 %v", c.phi, c.bound, m, ok, c.ok)
			continue
		}
		if !ok {
			continue // x and sum are garbage
		}
		var want float64
		for i := range x {
			e := math.Exp(float64(x[i] - c.phi))
			want += e
			if d := math.Abs(float64(y[i])-e) / e; d > 1e-6 {
				t.Errorf("phi %v: e[%d] = %v, want %v", c.phi, i, y[i], e)
			}
		}
		if math.Abs(sum-want)/want > 1e-6 {
			t.Errorf("phi %v: sum %v, want %v", c.phi, sum, want)
		}
	}
	if sum, m, ok := ExpBounded(nil, 0, 1); sum != 0 || !math.IsInf(float64(m), -1) || !ok {
		t.Errorf("empty chunk: %v %v %v", sum, m, ok)
	}
}

// refAttention is one head's softmax attention in float64.
func refAttention(q, k, v []float32, n, hd, hdv int, scale float64) []float64 {
	s := make([]float64, n)
	mx := math.Inf(-1)
	for j := range s {
		for i := 0; i < hd; i++ {
			s[j] += float64(q[i]) * float64(k[j*hd+i])
		}
		s[j] *= scale
		mx = max(mx, s[j])
	}
	var sum float64
	out := make([]float64, hdv)
	for j := range s {
		e := math.Exp(s[j] - mx)
		sum += e
		for i := range out {
			out[i] += e * float64(v[j*hdv+i])
		}
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// splitAttention runs AttnChunkF32 over chunks of L keys with one phi and
// combines them; ok is false when a chunk refused.
func splitAttention(q, k, v []float32, n, hd, hdv, L int, scale, phi, bound float32) (out []float32, maxv float32, ok bool) {
	acc := make([]float32, hdv)
	part := make([]float32, hdv+3) // guard band after the chunk's output
	scores := make([]float32, L)
	var sum float64
	maxv = float32(math.Inf(-1))
	ok = true
	for lo := 0; lo < n; lo += L {
		m := min(L, n-lo)
		for i := hdv; i < len(part); i++ {
			part[i] = 7
		}
		s, mc, okc := AttnChunkF32(q, k[lo*hd:], hd, v[lo*hdv:], hdv, scale, phi, bound, scores[:m], part[:hdv])
		if part[hdv] != 7 || part[hdv+2] != 7 {
			panic("AttnChunkF32 wrote past out")
		}
		maxv = max(maxv, mc)
		if !okc {
			ok = false
			continue
		}
		sum += s
		for i := range acc {
			acc[i] += part[i]
		}
	}
	for i := range acc {
		acc[i] *= float32(1 / sum)
	}
	return acc, maxv, ok
}

// TestAttnChunkF32Unified: chunks computed against one phi anywhere within
// the window of the true maximum combine, without rescaling, into the
// softmax attention (float64 reference); a phi too far below the maximum
// is refused, and recomputing with phi = the reported maximum is exact.
func TestAttnChunkF32Unified(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const bound = 32
	for _, c := range []struct{ n, hd, hdv, L int }{{1, 8, 8, 4}, {37, 7, 5, 8}, {300, 64, 64, 64}, {1000, 48, 48, 256}, {513, 128, 96, 100}} {
		q, k, v := randFloats(r, c.hd, 1), randFloats(r, c.n*c.hd, 1), randFloats(r, c.n*c.hdv, 1)
		scale := float32(1 / math.Sqrt(float64(c.hd)))
		want := refAttention(q, k, v, c.n, c.hd, c.hdv, float64(scale))
		_, exact, _ := splitAttention(q, k, v, c.n, c.hd, c.hdv, c.L, scale, float32(math.NaN()), bound)
		for _, off := range []float32{0, -30, 30, 5.5} {
			got, _, ok := splitAttention(q, k, v, c.n, c.hd, c.hdv, c.L, scale, exact+off, bound)
			if !ok {
				t.Fatalf("%+v: phi = max%+v refused", c, off)
			}
			if e := relErr64(got, want); e > 2e-6 {
				t.Errorf("%+v phi = max%+v: relative error %.2e", c, off, e)
			}
		}
		if _, m, ok := splitAttention(q, k, v, c.n, c.hd, c.hdv, c.L, scale, exact-40, bound); ok || m != exact {
			t.Errorf("%+v: phi 40 below the max accepted (ok %v, max %v ≠ %v)", c, ok, m, exact)
		}
	}
}

func relErr64(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// TestAttnChunkF32LargeScores: scores in the hundreds, where exp without a
// shift overflows float32, still combine exactly under a phi near them.
func TestAttnChunkF32LargeScores(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const n, hd = 200, 16
	q, k, v := randFloats(r, hd, 10), randFloats(r, n*hd, 10), randFloats(r, n*hd, 1)
	want := refAttention(q, k, v, n, hd, hd, 1)
	_, m, _ := splitAttention(q, k, v, n, hd, hd, 64, 1, float32(math.NaN()), 32)
	if m < 100 {
		t.Fatalf("max score %v: the test wants large scores", m)
	}
	got, _, ok := splitAttention(q, k, v, n, hd, hd, 64, 1, m-20, 32)
	if e := relErr64(got, want); !ok || e > 2e-6 {
		t.Errorf("ok %v, relative error %.2e", ok, e)
	}
}

// TestExpMaxGroupsKernel: the kernel in use equals the Go twin (the same
// exponentials and sum bit for bit, the same maximum), over slow lanes of
// ExpGGML, −Inf and NaN inputs.
func TestExpMaxGroupsKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, n := range []int{8, 16, 24, 64, 256, 1000} {
		for _, sc := range []float64{1, 30, 80} {
			x := randFloats(r, n, sc)
			x[r.IntN(n)] = float32(math.Inf(-1))
			if n > 8 {
				x[r.IntN(n)] = float32(math.NaN())
			}
			phi := float32(r.NormFloat64() * sc)
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			sa, ma := expMaxGroups(a, phi)
			sb, mb := expMaxGroupsGo(b, phi)
			if ma != mb || math.Float64bits(sa) != math.Float64bits(sb) && !(math.IsNaN(sa) && math.IsNaN(sb)) {
				t.Fatalf("n=%d scale %v: kernel sum %v max %v, twin %v %v", n, sc, sa, ma, sb, mb)
			}
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
					t.Fatalf("n=%d scale %v: element %d kernel %v, twin %v", n, sc, i, a[i], b[i])
				}
			}
			if want := maxF32(x); ma != want {
				t.Fatalf("n=%d: max %v, want %v", n, ma, want)
			}
		}
	}
}
