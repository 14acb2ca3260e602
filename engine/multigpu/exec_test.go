package multigpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

func standIns(devs []Device) []*StandIn {
	out := make([]*StandIn, len(devs))
	for i, d := range devs {
		out[i] = &StandIn{Name: d.Name, Cap: d.Free}
	}
	return out
}

// runPlaced plans c on devs, loads it on stand-ins capped at each device's
// free memory, and runs x through it.
func runPlaced(t *testing.T, c *Chain, devs []Device, o Options, x []float32, r Reduce) (*Placement, []float32) {
	t.Helper()
	p, err := Plan(c.Model(), devs, o)
	if err != nil {
		t.Fatal(err)
	}
	sis := standIns(devs)
	ld, err := Load(c, p, sis)
	if err != nil {
		t.Fatalf("a placement within the caps did not load: %v\n%s", err, p.Reason)
	}
	checkUse(t, p, sis)
	y := slices.Clone(x)
	ld.Forward(y, r)
	return p, y
}

// checkUse: every stand-in holds no more than the planner counted for it
// (the chain has no K, V or norms, so it needs less).
func checkUse(t *testing.T, p *Placement, sis []*StandIn) {
	t.Helper()
	planned := make([]int64, len(sis))
	for _, g := range p.Groups {
		for _, s := range g.Shards {
			planned[s.Device] += s.Bytes
		}
	}
	for i, si := range sis {
		if si.Used() > planned[i] {
			t.Errorf("%s uses %d bytes, planned %d", si.Name, si.Used(), planned[i])
		}
	}
}

// TestPartitionsMatchUnsplit: layer, tensor and hybrid placements over four
// stand-ins give the unsplit chain's result bit for bit with the ordered
// all-reduce.
func TestPartitionsMatchUnsplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewChain(rng, 6, 48, 8, 4, 8, 200, 16)
	x := randVec(rng, c.D)
	want := slices.Clone(x)
	c.Forward(want)
	devs := devices([]int64{1 << 30, 1 << 30, 1 << 30, 1 << 30}, []float64{1, 2, 1, 3})
	for _, o := range []Options{{Mode: Layers}, {Mode: Tensor}, {Mode: Hybrid, TensorGroup: 2}} {
		p, got := runPlaced(t, c, devs, o, x, Ordered)
		if !slices.Equal(bits(got), bits(want)) {
			t.Errorf("%v: differs from the unsplit chain\n%s", p.Mode, p.Reason)
		}
	}
}

func bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, f := range v {
		out[i] = math.Float32bits(f)
	}
	return out
}

// TestFastReduceBound checks the fast all-reduce on one sub-layer at a time
// (from the same input, so errors do not compound) against the stated
// bound: |split − reference| ≤ 2·γ(n)·Σ|w·h| per output.
func TestFastReduceBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := NewChain(rng, 1, 64, 6, 3, 16, 1000, 8)
	devs := devices([]int64{1 << 30, 1 << 30, 1 << 30}, []float64{1, 1, 1})
	p, err := Plan(c.Model(), devs, Options{Mode: Tensor})
	if err != nil {
		t.Fatal(err)
	}
	ld, err := Load(c, p, standIns(devs))
	if err != nil {
		t.Fatal(err)
	}
	ss := ld.groups[0][0]
	x := randVec(rng, c.D)
	for _, sub := range []struct {
		name      string
		win, wout []float32
		n, chunk  int
		run       func([]*shard, Reduce)
	}{
		{"attention", c.Layers[0].Wq, c.Layers[0].Wo, c.NHead * c.HeadDim, c.HeadDim, ld.attn},
		{"ffn", c.Layers[0].W1, c.Layers[0].W2, c.F, c.Granule, ld.ffn},
	} {
		want := slices.Clone(x)
		c.subLayer(sub.win, sub.wout, sub.n, sub.chunk, want, make([]float32, sub.n))
		for _, s := range ss {
			copy(s.x, x)
		}
		sub.run(ss, Fast)
		h := make([]float32, sub.n)
		rowsProduct(sub.win, x, 0, sub.n, h)
		gamma := float64(sub.n) * 0x1p-24 / (1 - float64(sub.n)*0x1p-24)
		differ := 0
		for r := range c.D {
			var mag float64
			for j := range sub.n {
				mag += math.Abs(float64(sub.wout[r*sub.n+j]) * float64(h[j]))
			}
			// + one rounding of x + sum, which both sides do on different sums
			bound := 2*gamma*mag + 0x1p-24*math.Abs(float64(want[r]))
			if d := math.Abs(float64(ss[0].x[r] - want[r])); d > bound {
				t.Errorf("%s output %d: off by %g, bound %g", sub.name, r, d, bound)
			}
			if ss[0].x[r] != want[r] {
				differ++
			}
		}
		t.Logf("%s: %d of %d outputs differ from the ordered sum (within the bound)", sub.name, differ, c.D)
	}
}

// TestLoadRespectsCaps: a stand-in smaller than its shard refuses it.
func TestLoadRespectsCaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := NewChain(rng, 2, 32, 4, 4, 8, 64, 16)
	devs := devices([]int64{1 << 30, 1 << 30}, []float64{1, 1})
	p, err := Plan(c.Model(), devs, Options{Mode: Tensor})
	if err != nil {
		t.Fatal(err)
	}
	sis := standIns(devs)
	sis[1].Cap = 1000
	if _, err := Load(c, p, sis); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("Load onto a 1000-byte stand-in: %v, want ErrOutOfMemory", err)
	}
}

// FuzzPartitionsMatchUnsplit: random chain shapes (odd sizes, granules that
// do not divide F, GQA), device counts, speeds and caps; every partition the
// planner accepts loads within the caps and equals the unsplit chain bit
// for bit (ordered all-reduce), and stays close with the fast one.
func FuzzPartitionsMatchUnsplit(f *testing.F) {
	for s := range uint64(12) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 9))
		kv := 1 + rng.IntN(4)
		c := NewChain(rng, 1+rng.IntN(5), 1+rng.IntN(40), kv*(1+rng.IntN(2)), kv, 1+rng.IntN(9), 1+rng.IntN(90), 1+rng.IntN(20))
		x := randVec(rng, c.D)
		want := slices.Clone(x)
		c.Forward(want)
		var need int64
		for _, l := range c.Model().Layers {
			need += l.Bytes()
		}
		devs := make([]Device, 1+rng.IntN(4))
		for i := range devs {
			devs[i] = Device{Name: "cpu", Free: int64(float64(need) * (0.3 + rng.Float64())), Speed: 0.5 + rng.Float64()}
		}
		for _, mode := range []Mode{Layers, Tensor, Hybrid} {
			o := Options{Mode: mode, TensorGroup: 1 + rng.IntN(len(devs))}
			for len(devs)%o.TensorGroup != 0 {
				o.TensorGroup--
			}
			if _, err := Plan(c.Model(), devs, o); errors.Is(err, ErrNoFit) {
				continue
			}
			p, got := runPlaced(t, c, devs, o, x, Ordered)
			if !slices.Equal(bits(got), bits(want)) {
				t.Fatalf("%v: ordered all-reduce differs from the unsplit chain\n%s", mode, p.Reason)
			}
			_, fast := runPlaced(t, c, devs, o, x, Fast)
			for i := range fast {
				if d := math.Abs(float64(fast[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%v: fast all-reduce off by %g at %d", mode, d, i)
				}
			}
		}
	})
}
