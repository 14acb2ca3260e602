package multigpu

import (
	"errors"
	"fmt"
	"sync"
)

// ErrOutOfMemory is wrapped when a stand-in device's cap is exceeded.
var ErrOutOfMemory = errors.New("multigpu: stand-in device out of memory")

// StandIn is a CPU "device" with a memory cap: it owns the weight slices
// of its shards and refuses allocations beyond Cap bytes.
type StandIn struct {
	Name string
	Cap  int64
	used int64
}

// Used is the bytes allocated so far.
func (d *StandIn) Used() int64 { return d.used }

func (d *StandIn) alloc(n int) ([]float32, error) {
	if d.used+int64(4*n) > d.Cap {
		return nil, fmt.Errorf("%w: %s needs %d bytes more, %d of %d used", ErrOutOfMemory, d.Name, 4*n, d.used, d.Cap)
	}
	d.used += int64(4 * n)
	return make([]float32, n), nil
}

// Reduce is how a tensor group sums its devices' partial outputs.
type Reduce int

const (
	// Ordered gathers every chunk's partial sums (one head, or Granule FFN
	// columns) from every device and adds them in chunk order on each
	// device: the reference's order, so results are bit-identical. It moves
	// one D-vector per chunk instead of one per device.
	Ordered Reduce = iota
	// Fast adds one partial per device (its chunks summed in order from
	// zero), in device order: a standard all-reduce's traffic. Each
	// sub-layer's sum then differs from the reference's by at most
	// 2·γ(n)·Σ|w·h| for the n = NHead·HeadDim or F terms of its sum,
	// γ(n) = n·u/(1−n·u), u = 2⁻²⁴ (both orders are within γ(n)·Σ|terms|
	// of the exact sum), plus one rounding of the residual add, u·|x|.
	// Over layers the differences propagate through the next products.
	Fast
)

// shard is one device's weights of one layer: Wq rows and Wo columns of
// its heads, W1 rows and W2 columns of its FFN columns (column blocks
// stored as D × width, row-major), and its working vectors.
type shard struct {
	dev            *StandIn
	q0, q1, f0, f1 int // query-row range and FFN column range
	wq, wo, w1, w2 []float32
	x, h           []float32   // its replica of the activations, its slice of h
	partQ, partF   [][]float32 // chunk partials (D each)
}

// Loaded is a chain whose weights are spread over stand-ins as a placement
// says.
type Loaded struct {
	c      *Chain
	groups [][][]*shard // [group][layer within group][shard]
	ranges [][2]int     // layer range per group
}

// Load copies each device's share of c's weights into its stand-in. Devices
// are indexed as in the placement.
func Load(c *Chain, p *Placement, devs []*StandIn) (*Loaded, error) {
	ld := &Loaded{c: c}
	for _, g := range p.Groups {
		var layers [][]*shard
		for l := g.First; l < g.End; l++ {
			var ss []*shard
			for _, s := range g.Shards {
				sh, err := loadShard(c, l, s, devs[s.Device])
				if err != nil {
					return nil, err
				}
				ss = append(ss, sh)
			}
			layers = append(layers, ss)
		}
		ld.groups = append(ld.groups, layers)
		ld.ranges = append(ld.ranges, [2]int{g.First, g.End})
	}
	return ld, nil
}

func loadShard(c *Chain, l int, s Shard, dev *StandIn) (*shard, error) {
	g := c.NHead / c.NKVHead
	sh := &shard{dev: dev, q0: s.KVHeads[0] * g * c.HeadDim, q1: s.KVHeads[1] * g * c.HeadDim, f0: s.FFNCols[0], f1: s.FFNCols[1]}
	q, nq, nf := c.NHead*c.HeadDim, sh.q1-sh.q0, sh.f1-sh.f0
	var err error
	alloc := func(n int) []float32 {
		var b []float32
		if err == nil {
			b, err = dev.alloc(n)
		}
		return b
	}
	sh.wq, sh.wo, sh.w1, sh.w2 = alloc(nq*c.D), alloc(c.D*nq), alloc(nf*c.D), alloc(c.D*nf)
	// Working vectors are scratch outside the cap, as Plan counts weights
	// and KV cache only (a backend reserves its scratch up front).
	scratch := func(n int) []float32 { return make([]float32, n) }
	sh.x, sh.h = scratch(c.D), scratch(max(nq, nf))
	sh.partQ, sh.partF = chunks(scratch, nq, c.HeadDim, c.D), chunks(scratch, nf, c.Granule, c.D)
	if err != nil {
		return nil, fmt.Errorf("multigpu: layer %d: %w", l, err)
	}
	w := c.Layers[l]
	copy(sh.wq, w.Wq[sh.q0*c.D:sh.q1*c.D])
	copy(sh.w1, w.W1[sh.f0*c.D:sh.f1*c.D])
	for r := range c.D {
		copy(sh.wo[r*nq:(r+1)*nq], w.Wo[r*q+sh.q0:r*q+sh.q1])
		copy(sh.w2[r*nf:(r+1)*nf], w.W2[r*c.F+sh.f0:r*c.F+sh.f1])
	}
	return sh, nil
}

func chunks(alloc func(int) []float32, n, chunk, d int) [][]float32 {
	out := make([][]float32, (n+chunk-1)/chunk)
	for k := range out {
		out[k] = alloc(d)
	}
	return out
}

// Forward runs x (length D) through the groups in order, in place: each
// group's devices get a copy of x (the pipeline hand-off), compute their
// shards concurrently, and all-reduce after each sub-layer.
func (ld *Loaded) Forward(x []float32, r Reduce) {
	for _, layers := range ld.groups {
		for _, ss := range layers {
			for _, s := range ss {
				copy(s.x, x)
			}
			ld.attn(ss, r)
			ld.ffn(ss, r)
			copy(x, ss[0].x)
		}
	}
}

func (ld *Loaded) attn(ss []*shard, r Reduce) {
	c := ld.c
	parallel(ss, func(s *shard) {
		nq := s.q1 - s.q0
		rowsProduct(s.wq, s.x, 0, nq, s.h[:nq])
		chunkPartials(s.wo, c.D, nq, 0, nq, c.HeadDim, s.h[:nq], s.partQ)
	})
	allReduce(ss, func(s *shard) [][]float32 { return s.partQ }, r)
}

func (ld *Loaded) ffn(ss []*shard, r Reduce) {
	c := ld.c
	parallel(ss, func(s *shard) {
		nf := s.f1 - s.f0
		rowsProduct(s.w1, s.x, 0, nf, s.h[:nf])
		chunkPartials(s.w2, c.D, nf, 0, nf, c.Granule, s.h[:nf], s.partF)
	})
	allReduce(ss, func(s *shard) [][]float32 { return s.partF }, r)
}

// parallel runs fn for every shard at once, one goroutine per device.
func parallel(ss []*shard, fn func(*shard)) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() { fn(s) })
	}
	wg.Wait()
}

// allReduce adds the group's partials into every device's x; see Reduce.
// Every device computes the same sum from the same gathered partials.
func allReduce(ss []*shard, parts func(*shard) [][]float32, r Reduce) {
	parallel(ss, func(dst *shard) {
		for i := range dst.x {
			var sum float32
			for _, src := range ss {
				if r == Ordered {
					for _, p := range parts(src) {
						sum += p[i]
					}
					continue
				}
				var own float32
				for _, p := range parts(src) {
					own += p[i]
				}
				sum += own
			}
			dst.x[i] += sum
		}
	})
}
