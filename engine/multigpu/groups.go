package multigpu

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// candidate is one way to split a group's layers among its devices: unit
// counts per device, hence bytes per device per layer (prefix sums).
type candidate struct {
	name   string // "speed" or "free memory"
	heads  []int  // KV heads per device
	units  []int  // FFN units per device
	prefix [][]int64
}

// groupPlan is what the range search needs of one group.
type groupPlan struct {
	all     []Device
	devs    []int // indices into all
	cands   []candidate
	extra   []int64 // embedding/output bytes per device of the group
	outTime float64 // reading the output head, seconds per token
	comm    float64 // all-reduce seconds per layer
}

func planGroups(m Model, devs []Device, o Options, t int) (*Placement, error) {
	if t > 1 && !uniform(m.Layers) {
		return nil, errors.New("multigpu: a tensor split needs every layer to have the same head and FFN counts")
	}
	n := len(devs) / t
	gps := make([]*groupPlan, n)
	for k := range gps {
		gps[k] = newGroupPlan(m, devs, o, k*t, t, k == 0, k == n-1)
	}
	if _, ok := fill3(gps, len(m.Layers), math.Inf(1)); !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoFit, memoryReport(m, devs))
	}
	T := bisect(gps, len(m.Layers))
	ends, chosen, _ := fill(gps, len(m.Layers), T)
	return placement(m, gps, devs, ends, chosen, t, len(devs)), nil
}

func uniform(ls []Layer) bool {
	for _, l := range ls[1:] {
		if l.NKVHead != ls[0].NKVHead || l.NHead != ls[0].NHead || l.DFF != ls[0].DFF || l.granule() != ls[0].granule() {
			return false
		}
	}
	return true
}

func newGroupPlan(m Model, devs []Device, o Options, first, t int, isFirst, isLast bool) *groupPlan {
	g := &groupPlan{all: devs, extra: make([]int64, t)}
	speed, free := make([]float64, t), make([]float64, t)
	for i := range t {
		g.devs = append(g.devs, first+i)
		speed[i], free[i] = devs[first+i].Speed, float64(devs[first+i].Free)
		if o.Split != nil {
			speed[i] = o.Split[first+i]
		}
	}
	if isFirst {
		g.extra[0] += m.Embed
	}
	if isLast {
		g.extra[0] += m.Output
		g.outTime = float64(m.Output) / devs[first].Speed
	}
	free[0] = max(free[0]-float64(g.extra[0]), 0)
	name := "speed"
	if o.Split != nil {
		name = "--split"
	}
	g.cands = append(g.cands, newCandidate(name, m.Layers, speed))
	if t > 1 {
		if o.Split == nil { // given shares are kept even when they fit nowhere
			g.cands = append(g.cands, newCandidate("free memory", m.Layers, free))
		}
		g.comm = allReduceTime(m.Layers[0].DModel, t, o) * 2
	}
	return g
}

// allReduceTime is a ring all-reduce of one token's activations (DModel
// float32 values): 2(t−1)/t of the vector crosses each link, in 2(t−1) steps.
func allReduceTime(dModel, t int, o Options) float64 {
	steps := float64(2 * (t - 1))
	s := steps * o.LinkLatency
	if o.LinkBandwidth > 0 {
		s += steps / float64(t) * float64(4*dModel) / o.LinkBandwidth
	}
	return s
}

func newCandidate(name string, ls []Layer, w []float64) candidate {
	c := candidate{name: name}
	c.heads, _ = apportion(ls[0].headUnits(), w, nil)
	c.units, _ = apportion(ls[0].ffnUnits(), w, nil)
	c.prefix = make([][]int64, len(w))
	for d := range w {
		c.prefix[d] = make([]int64, len(ls)+1)
		u0 := sumTo(c.units, d)
		for i, l := range ls {
			c0, c1 := l.cols(u0, u0+c.units[d])
			b := l.fixedBytes() + int64(c.heads[d])*l.headBytes() + l.colsBytes(c0, c1)
			c.prefix[d][i+1] = c.prefix[d][i] + b
		}
	}
	return c
}

func sumTo(s []int, i int) int {
	t := 0
	for _, v := range s[:i] {
		t += v
	}
	return t
}

// cost returns the group's time for layers [a, b) with candidate c, and
// whether every device's bytes fit its free memory.
func (g *groupPlan) cost(c *candidate, a, b int) (float64, bool) {
	var t float64
	devs := g.all
	for i, d := range g.devs {
		bytes := c.prefix[i][b] - c.prefix[i][a] + g.extra[i]
		if bytes > devs[d].Free {
			return 0, false
		}
		t = math.Max(t, float64(c.prefix[i][b]-c.prefix[i][a])/devs[d].Speed)
	}
	return t + g.outTime + g.comm*float64(b-a), true
}

// best returns the index of the fastest candidate that fits [a, b) within
// limit, or -1.
func (g *groupPlan) best(a, b int, limit float64) (int, float64) {
	bi, bt := -1, math.Inf(1)
	for i := range g.cands {
		if t, ok := g.cost(&g.cands[i], a, b); ok && t <= limit && t < bt {
			bi, bt = i, t
		}
	}
	return bi, bt
}

// fill assigns layers greedily: each group takes as many of the next layers
// as fit under limit (possibly none: a device too slow or too small for
// even one layer is left without layers). It returns the end of each
// group's range, the candidate chosen, and whether all were placed. This
// is optimal: the farthest layer a group can reach only grows with a later
// start (fewer bytes), so by induction greedy's frontier is never behind
// any other assignment's, and fitting is monotone in limit.
func fill(gps []*groupPlan, n int, limit float64) (ends, chosen []int, ok bool) {
	a := 0
	for _, g := range gps {
		c, _ := g.best(a, a, limit)
		if c < 0 {
			return nil, nil, false
		}
		b := a
		for j := a + 1; j <= n; j++ {
			ci, _ := g.best(a, j, limit)
			if ci < 0 {
				break
			}
			b, c = j, ci
		}
		ends, chosen = append(ends, b), append(chosen, c)
		a = b
	}
	return ends, chosen, a == n
}

// bisect finds (to a relative 1e-9) the least per-group time limit under
// which fill places every layer: the slowest group's time, minimised.
func bisect(gps []*groupPlan, n int) float64 {
	hi := 1e-9
	for _, ok := fill3(gps, n, hi); !ok; _, ok = fill3(gps, n, hi) {
		hi *= 2
	}
	lo := 0.0
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if _, ok := fill3(gps, n, mid); ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func fill3(gps []*groupPlan, n int, limit float64) ([]int, bool) {
	ends, _, ok := fill(gps, n, limit)
	return ends, ok
}

func placement(m Model, gps []*groupPlan, devs []Device, ends, chosen []int, t, nd int) *Placement {
	p := &Placement{Mode: Hybrid, TensorGroup: t}
	switch t {
	case 1:
		p.Mode = Layers
	case nd:
		p.Mode = Tensor
	}
	var why []string
	a, slowest := 0, 0.0
	for k, g := range gps {
		c := &g.cands[chosen[k]]
		tm, _ := g.cost(c, a, ends[k])
		grp := Group{First: a, End: ends[k], Time: tm}
		h0, u0 := 0, 0
		l := m.Layers[0]
		for i, d := range g.devs {
			c0, c1 := l.cols(u0, u0+c.units[i])
			grp.Shards = append(grp.Shards, Shard{Device: d, KVHeads: [2]int{h0, h0 + c.heads[i]},
				FFNCols: [2]int{c0, c1}, Bytes: c.prefix[i][ends[k]] - c.prefix[i][a] + g.extra[i]})
			h0, u0 = h0+c.heads[i], u0+c.units[i]
		}
		p.Groups = append(p.Groups, grp)
		p.DecodeTime += tm
		slowest = math.Max(slowest, tm)
		why = append(why, groupReason(grp, c.name, devs))
		a = ends[k]
	}
	p.Throughput = 1 / slowest
	p.Reason = strings.Join(why, "\n")
	return p
}

func groupReason(g Group, shares string, devs []Device) string {
	var parts []string
	for _, s := range g.Shards {
		d := devs[s.Device]
		parts = append(parts, fmt.Sprintf("%s kv heads %d-%d ffn cols %d-%d, %.1f of %.1f MiB",
			d.Name, s.KVHeads[0], s.KVHeads[1], s.FFNCols[0], s.FFNCols[1], float64(s.Bytes)/(1<<20), float64(d.Free)/(1<<20)))
	}
	if g.End == g.First {
		return fmt.Sprintf("  no layers for %s (it holds only the embedding or output head, if any)", devs[g.Shards[0].Device].Name)
	}
	return fmt.Sprintf("  layers %d-%d (%.3g ms/token, shares by %s): %s", g.First, g.End-1, 1e3*g.Time, shares, strings.Join(parts, "; "))
}

func memoryReport(m Model, devs []Device) string {
	var need, have int64 = m.Embed + m.Output, 0
	for _, l := range m.Layers {
		need += l.Bytes()
	}
	for _, d := range devs {
		have += d.Free
	}
	return fmt.Sprintf("the weights need %.1f MiB, the devices have %.1f MiB free (no split of the layers fits every device)",
		float64(need)/(1<<20), float64(have)/(1<<20))
}
