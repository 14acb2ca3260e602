package ggml

import (
	"math"
	"math/rand"
	"os"
	"testing"
)

// siluRef is the model's scalar SiLU·up (engine/model: silu(x)·up).
func siluRef(x, up float32) float32 {
	return x / (1 + float32(math.Exp(float64(-x)))) * up
}

func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// siluEdges are inputs at the ends of the exponential's range and its
// special values.
var siluEdges = []float32{
	0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-38, -1e-38, 1e-7, -1e-7,
	1, -1, 0.34657359, -0.34657359, 0.6931472, -0.6931472,
	30, -30, 87, -87, 88.72, -88.72, 88.73, -88.73, 89.9, -89.9, 90, -90, 90.1, -90.1,
	103.9, -103.9, 103.97, -103.97, 104, -104, 109.9, -109.9, 110, -110, 110.1, -110.1,
	1000, -1000, math.MaxFloat32, -math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.Float32frombits(0x7fc12345), math.Float32frombits(0xffc00001),
}

func siluInputs(rng *rand.Rand, n int) (gate, up []float32) {
	gate, up = make([]float32, n), make([]float32, n)
	for i := range gate {
		switch rng.Intn(4) {
		case 0:
			gate[i] = siluEdges[rng.Intn(len(siluEdges))]
		case 1:
			gate[i] = math.Float32frombits(rng.Uint32()) // any bit pattern
		case 2:
			gate[i] = float32(rng.NormFloat64() * 4)
		default:
			gate[i] = float32(rng.Float64()*240 - 120)
		}
		up[i] = float32(rng.NormFloat64())
		if rng.Intn(16) == 0 {
			up[i] = siluEdges[rng.Intn(len(siluEdges))]
		}
	}
	return gate, up
}

// TestSiLUMulMatchesTwin checks the dispatched kernel (asm where there is
// one) against the Go twin bit for bit, at every length up to 70 and
// offset, with guard bands past the end of h left untouched, and in place.
func TestSiLUMulMatchesTwin(t *testing.T) { checkSiLUTwin(t) }

func checkSiLUTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const guard = 8
	for n := 0; n <= 70; n++ {
		for off := 0; off < 3; off++ {
			gate, up := siluInputs(rng, off+n+guard)
			want := make([]float32, n)
			siluMulGo(want, gate[off:off+n], up[off:off+n])
			got := make([]float32, off+n+guard)
			for i := range got {
				got[i] = -7.5
			}
			SiLUMul(got[off:off+n], gate[off:off+n+guard], up[off:off+n+guard])
			for i := range got {
				if i >= off && i < off+n {
					if !sameF32(got[i], want[i-off]) {
						t.Fatalf("n=%d off=%d i=%d gate=%g up=%g: got %g (%#x), twin %g (%#x)", n, off, i-off,
							gate[i], up[i], got[i], math.Float32bits(got[i]), want[i-off], math.Float32bits(want[i-off]))
					}
				} else if got[i] != -7.5 {
					t.Fatalf("n=%d off=%d: wrote outside h at %d", n, off, i)
				}
			}
			// In place, over the gate and over up.
			g2 := append([]float32(nil), gate[off:off+n]...)
			SiLUMul(g2, g2, up[off:off+n])
			u2 := append([]float32(nil), up[off:off+n]...)
			SiLUMul(u2, gate[off:off+n], u2)
			for i := range want {
				if !sameF32(g2[i], want[i]) || !sameF32(u2[i], want[i]) {
					t.Fatalf("n=%d in place i=%d: %g %g, twin %g", n, i, g2[i], u2[i], want[i])
				}
			}
		}
	}
	// Every edge value in every lane.
	gate := make([]float32, 8*len(siluEdges))
	up := make([]float32, len(gate))
	for i := range gate {
		gate[i] = siluEdges[(i/8+i%8)%len(siluEdges)]
		up[i] = 1.25
	}
	got, want := make([]float32, len(gate)), make([]float32, len(gate))
	SiLUMul(got, gate, up)
	siluMulGo(want, gate, up)
	for i := range got {
		if !sameF32(got[i], want[i]) {
			t.Fatalf("edge %g: got %g, twin %g", gate[i], got[i], want[i])
		}
	}
}

// TestSiLUMulMatchesScalar compares the kernel with the scalar SiLU (expf
// correctly rounded from float64 math.Exp): edges exactly, and random
// inputs allowing only rare 1-ulp double-rounding differences.
func TestSiLUMulMatchesScalar(t *testing.T) {
	for _, x := range siluEdges {
		h := []float32{0}
		SiLUMul(h, []float32{x}, []float32{1.5})
		if want := siluRef(x, 1.5); !sameF32(h[0], want) {
			t.Errorf("silu(%g)·1.5 = %g, scalar %g", x, h[0], want)
		}
	}
	n := 1 << 20
	if !testing.Short() {
		n = 1 << 22
	}
	rng := rand.New(rand.NewSource(2))
	gate := make([]float32, n)
	up := make([]float32, n)
	h := make([]float32, n)
	for _, r := range []struct {
		name  string
		width float64
	}{{"|x|<30", 30}, {"|x|<120", 120}} {
		for i := range gate {
			gate[i] = float32((rng.Float64()*2 - 1) * r.width)
			up[i] = 1
		}
		SiLUMul(h, gate, up)
		bad, worst := 0, 0
		for i := range h {
			want := siluRef(gate[i], 1)
			if sameF32(h[i], want) {
				continue
			}
			bad++
			d := int(math.Float32bits(h[i])) - int(math.Float32bits(want))
			worst = max(worst, d, -d)
		}
		t.Logf("%s: %d of %d differ from the scalar SiLU (at most %d ulp)", r.name, bad, n, worst)
		if worst > 1 || bad > n/1000000+2 {
			t.Errorf("%s: %d of %d differ, up to %d ulp", r.name, bad, n, worst)
		}
	}
}

func BenchmarkSiLUMul(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewSource(3))
	gate, up := make([]float32, n), make([]float32, n)
	for i := range gate {
		gate[i], up[i] = float32(rng.NormFloat64()*3), float32(rng.NormFloat64())
	}
	h := make([]float32, n)
	run := func(b *testing.B, f func()) {
		b.SetBytes(4 * n)
		for b.Loop() {
			f()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
	}
	b.Run("kernel", func(b *testing.B) { run(b, func() { SiLUMul(h, gate, up) }) })
	b.Run("twin", func(b *testing.B) { run(b, func() { siluMulGo(h, gate, up) }) })
	b.Run("scalar", func(b *testing.B) {
		run(b, func() {
			for i, x := range gate {
				h[i] = x / (1 + float32(math.Exp(float64(-x))))
			}
			for i := range h {
				h[i] *= up[i]
			}
		})
	})
}

// TestSiLUMulExhaustive compares the kernel with the scalar SiLU over
// every float32 bit pattern (about a minute; set FLOWCHAT_SILU_EXHAUSTIVE=1).
func TestSiLUMulExhaustive(t *testing.T) {
	if os.Getenv("FLOWCHAT_SILU_EXHAUSTIVE") == "" {
		t.Skip("set FLOWCHAT_SILU_EXHAUSTIVE=1 to check all 2^32 inputs")
	}
	const chunk = 1 << 20
	gate, up, h := make([]float32, chunk), make([]float32, chunk), make([]float32, chunk)
	for i := range up {
		up[i] = 1
	}
	bad := 0
	for base := uint64(0); base < 1<<32; base += chunk {
		for i := range gate {
			gate[i] = math.Float32frombits(uint32(base) + uint32(i))
		}
		SiLUMul(h, gate, up)
		for i, x := range gate {
			if want := siluRef(x, 1); !sameF32(h[i], want) {
				d := int(math.Float32bits(h[i])) - int(math.Float32bits(want))
				if bad++; bad <= 20 || d > 1 || d < -1 {
					t.Logf("x=%g (%#08x): kernel %g, scalar %g (%+d ulp)", x, math.Float32bits(x), h[i], want, d)
				}
				if d > 1 || d < -1 {
					t.Fail()
				}
			}
		}
	}
	t.Logf("%d of 2^32 inputs differ from the scalar SiLU", bad)
}
