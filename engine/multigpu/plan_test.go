package multigpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const mib = 1 << 20

// llama8B is Llama-3-8B's layer shape in Q4_0 with a 4096-token F16 KV cache.
var llama8B = Layer{DModel: 4096, NHead: 32, NKVHead: 8, HeadDim: 128, DFF: 14336,
	BytesPerWeight: 18.0 / 32, KVBytesPerHead: 2 * 4096 * 128 * 2}

// model has n layers of l; the embedding and output head are added by the
// tests that need them (the head, read every token, shifts layer splits).
func model(l Layer, n int) Model {
	m := Model{}
	for range n {
		m.Layers = append(m.Layers, l)
	}
	return m
}

func devices(free []int64, speed []float64) []Device {
	var ds []Device
	for i := range free {
		ds = append(ds, Device{Name: "cpu" + string(rune('0'+i)), Free: free[i], Speed: speed[i]})
	}
	return ds
}

func layerCounts(p *Placement) []int {
	var out []int
	for _, g := range p.Groups {
		out = append(out, g.End-g.First)
	}
	return out
}

func TestPlanByLayerFollowsSpeed(t *testing.T) {
	m := model(llama8B, 32)
	for _, tt := range []struct {
		speed []float64
		want  []int
	}{
		{[]float64{1, 1, 1, 1}, []int{8, 8, 8, 8}},
		{[]float64{3, 1}, []int{24, 8}},
		{[]float64{1, 3}, []int{8, 24}},
	} {
		free := make([]int64, len(tt.speed))
		for i := range free {
			free[i] = 1 << 40
		}
		p, err := Plan(m, devices(free, tt.speed), Options{Mode: Layers})
		if err != nil {
			t.Fatal(err)
		}
		// The output head (read every token) tips a boundary layer at most.
		got := layerCounts(p)
		for i := range got {
			if d := got[i] - tt.want[i]; d < -1 || d > 1 {
				t.Errorf("speeds %v: layers %v, want about %v", tt.speed, got, tt.want)
				break
			}
		}
		if p.Mode != Layers || len(p.AllReduces()) != 0 {
			t.Errorf("mode %v, %d all-reduces", p.Mode, len(p.AllReduces()))
		}
	}
}

// TestPlanByLayerMemoryCap: the fast device cannot hold its speed share, so
// it holds what fits and the slow one takes the rest.
func TestPlanByLayerMemoryCap(t *testing.T) {
	m := model(llama8B, 32)
	m.Embed, m.Output = 300*mib, 300*mib
	per := llama8B.Bytes()
	devs := devices([]int64{10*per + m.Embed, 1 << 40}, []float64{4, 1})
	p, err := Plan(m, devs, Options{Mode: Layers})
	if err != nil {
		t.Fatal(err)
	}
	if got := layerCounts(p); !slices.Equal(got, []int{10, 22}) || !strings.Contains(p.Reason, "layers 0-9") {
		t.Errorf("layers %v, want [10 22]\n%s", got, p.Reason)
	}
	checkPlacement(t, m, devs, p)
}

func TestPlanByTensorSplitsHeadsAndColumns(t *testing.T) {
	m := model(llama8B, 4)
	devs := devices([]int64{1 << 40, 1 << 40}, []float64{1, 1})
	p, err := Plan(m, devs, Options{Mode: Tensor})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 1 || len(p.Groups[0].Shards) != 2 {
		t.Fatalf("groups %+v", p.Groups)
	}
	s := p.Groups[0].Shards
	if s[0].KVHeads != [2]int{0, 4} || s[1].KVHeads != [2]int{4, 8} || s[0].FFNCols != [2]int{0, 7168} || s[1].FFNCols != [2]int{7168, 14336} {
		t.Errorf("shards %+v", s)
	}
	ar := p.AllReduces()
	if len(ar) != 8 || ar[0].After != "attn_output" || ar[1].After != "ffn_down" || ar[7].Layer != 3 {
		t.Errorf("all-reduces %+v", ar)
	}
	// 3:1 shares: 6 and 2 KV heads; FFN units of 32 columns by largest remainder.
	p, err = Plan(m, devs, Options{Mode: Tensor, Split: []float64{3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Groups[0].Shards; s[0].KVHeads != [2]int{0, 6} || s[0].FFNCols != [2]int{0, 10752} {
		t.Errorf("3:1 shards %+v", s)
	}
}

// TestPlanTensorFallsBackToMemoryShares: speed shares overflow the fast
// device; shares by free memory fit, and Reason says so.
func TestPlanTensorFallsBackToMemoryShares(t *testing.T) {
	m := model(llama8B, 8)
	m.Embed, m.Output = 300*mib, 300*mib
	total := int64(0)
	for _, l := range m.Layers {
		total += l.Bytes()
	}
	devs := devices([]int64{total/3 + m.Embed + m.Output, total}, []float64{3, 1})
	p, err := Plan(m, devs, Options{Mode: Tensor})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Reason, "shares by free memory") {
		t.Errorf("reason %q", p.Reason)
	}
	checkPlacement(t, m, devs, p)
}

// TestPlanHybridTable4 is the paper's Table 4 layout: 4 devices, 2 layer
// groups × 2 head shards.
func TestPlanHybridTable4(t *testing.T) {
	m := model(llama8B, 32)
	devs := devices([]int64{1 << 40, 1 << 40, 1 << 40, 1 << 40}, []float64{1, 1, 1, 1})
	p, err := Plan(m, devs, Options{Mode: Hybrid, TensorGroup: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 2 || len(p.Groups[0].Shards) != 2 || p.Groups[1].Shards[0].Device != 2 {
		t.Fatalf("groups %+v", p.Groups)
	}
	if c := layerCounts(p); c[0] < 15 || c[0] > 17 {
		t.Errorf("layer split %v", c)
	}
	if len(p.AllReduces()) != 64 {
		t.Errorf("%d all-reduces, want 2 per layer", len(p.AllReduces()))
	}
	if _, err := Plan(m, devs, Options{Mode: Hybrid, TensorGroup: 3}); err == nil {
		t.Error("a group size that does not divide 4 devices was accepted")
	}
}

// TestPlanAutoLink: with a fast link the tensor split has the lowest time
// per token; with a slow link (PCIe-like latency per message, tiny
// bandwidth) its all-reduces cost more than they save and layers win; for
// throughput, layers (no all-reduce) win whenever the link costs anything.
func TestPlanAutoLink(t *testing.T) {
	m := model(llama8B, 32)
	devs := devices([]int64{1 << 40, 1 << 40, 1 << 40, 1 << 40}, []float64{1e12, 1e12, 1e12, 1e12})
	for _, tt := range []struct {
		o    Options
		want Mode
	}{
		{Options{LinkBandwidth: 300e9, LinkLatency: 2e-6}, Tensor},
		{Options{LinkBandwidth: 1e6, LinkLatency: 1e-3}, Layers},
		{Options{LinkBandwidth: 300e9, LinkLatency: 2e-6, Objective: Throughput}, Layers},
	} {
		p, err := Plan(m, devs, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != tt.want || !strings.HasPrefix(p.Reason, "chose "+tt.want.String()) {
			t.Errorf("options %+v: chose %v, want %v\n%s", tt.o, p.Mode, tt.want, p.Reason)
		}
	}
}

func TestPlanNoFit(t *testing.T) {
	m := model(llama8B, 8)
	devs := devices([]int64{llama8B.Bytes() * 3, llama8B.Bytes() * 3}, []float64{1, 1})
	for _, mode := range []Mode{Layers, Tensor, Auto} {
		if _, err := Plan(m, devs, Options{Mode: mode}); !errors.Is(err, ErrNoFit) {
			t.Errorf("%v: error %v, want ErrNoFit", mode, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"layer", "tensor", "hybrid", "auto"} {
		if m, err := ParseMode(s); err != nil || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("row"); err == nil {
		t.Error("ParseMode(row) accepted")
	}
}

// checkPlacement asserts the invariants of any placement: contiguous layer
// ranges covering the model, head and column ranges partitioning each
// group's layers, every device within its memory, and bytes adding up.
func checkPlacement(t *testing.T, m Model, devs []Device, p *Placement) {
	t.Helper()
	next, used := 0, map[int]bool{}
	var total int64
	for _, g := range p.Groups {
		if g.First != next || g.End < g.First {
			t.Fatalf("group layers %d-%d after %d", g.First, g.End, next)
		}
		next = g.End
		h, c := 0, 0
		for _, s := range g.Shards {
			if used[s.Device] || s.KVHeads[0] != h || s.FFNCols[0] != c || s.KVHeads[1] < h || s.FFNCols[1] < c {
				t.Fatalf("shards %+v", g.Shards)
			}
			used[s.Device], h, c = true, s.KVHeads[1], s.FFNCols[1]
			if s.Bytes > devs[s.Device].Free {
				t.Errorf("device %d holds %d bytes, has %d", s.Device, s.Bytes, devs[s.Device].Free)
			}
			total += s.Bytes
		}
		l := m.Layers[0] // a tensor split needs uniform head and FFN counts
		if h != l.NKVHead || c != l.DFF {
			t.Fatalf("shards cover %d heads and %d columns: %+v", h, c, g.Shards)
		}
		for _, l := range m.Layers[g.First:g.End] {
			total -= l.Bytes() + int64(len(g.Shards)-1)*l.fixedBytes()
		}
	}
	if next != len(m.Layers) || total != m.Embed+m.Output {
		t.Errorf("layers end at %d of %d; bytes off by %d", next, len(m.Layers), total-m.Embed-m.Output)
	}
}

// bruteLayers is the best slowest-group time over every contiguous split of
// the layers into len(devs) ranges (empty ones allowed) that fits memory.
func bruteLayers(m Model, devs []Device) float64 {
	n, best := len(m.Layers), math.Inf(1)
	var rec func(k, a int, worst float64)
	rec = func(k, a int, worst float64) {
		if k == len(devs) {
			if a == n {
				best = math.Min(best, worst)
			}
			return
		}
		for b := a; b <= n; b++ {
			var bytes int64
			for _, l := range m.Layers[a:b] {
				bytes += l.Bytes()
			}
			tm := float64(bytes) / devs[k].Speed
			extra := int64(0)
			if k == 0 {
				extra += m.Embed
			}
			if k == len(devs)-1 {
				extra += m.Output
				tm += float64(m.Output) / devs[k].Speed
			}
			if bytes+extra <= devs[k].Free {
				rec(k+1, b, math.Max(worst, tm))
			}
		}
	}
	rec(0, 0, 0)
	return best
}

func randomSetup(rng *rand.Rand) (Model, []Device) {
	kv := 1 + rng.IntN(6)
	l := Layer{DModel: 16 * (1 + rng.IntN(8)), NKVHead: kv, NHead: kv * (1 + rng.IntN(3)), HeadDim: 8 * (1 + rng.IntN(4)),
		DFF: 1 + rng.IntN(300), BytesPerWeight: []float64{4, 2, 34.0 / 32, 18.0 / 32}[rng.IntN(4)],
		KVBytesPerHead: int64(rng.IntN(5000)), FFNGranule: []int{0, 1, 16, 32}[rng.IntN(4)]}
	m := Model{Embed: int64(rng.IntN(100000)), Output: int64(rng.IntN(100000))}
	for range 1 + rng.IntN(12) {
		lay := l
		lay.BytesPerWeight = []float64{4, 2, 34.0 / 32, 18.0 / 32}[rng.IntN(4)] // mixed quantization
		m.Layers = append(m.Layers, lay)
	}
	var need int64 = m.Embed + m.Output
	for _, l := range m.Layers {
		need += l.Bytes()
	}
	devs := make([]Device, 1+rng.IntN(4))
	for i := range devs {
		devs[i] = Device{Name: "cpu", Free: int64(float64(need) * (0.2 + rng.Float64())), Speed: 0.25 + rng.Float64()}
	}
	return m, devs
}

// FuzzPlan checks every placement's invariants on random shapes, devices,
// caps and modes, and the layer split's optimality against brute force.
func FuzzPlan(f *testing.F) {
	for s := range uint64(40) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 7))
		m, devs := randomSetup(rng)
		for _, mode := range []Mode{Layers, Tensor, Hybrid, Auto} {
			o := Options{Mode: mode, TensorGroup: 1 + rng.IntN(len(devs)), LinkLatency: rng.Float64() * 1e-6}
			for len(devs)%o.TensorGroup != 0 {
				o.TensorGroup--
			}
			p, err := Plan(m, devs, o)
			if err != nil {
				if !errors.Is(err, ErrNoFit) {
					t.Fatalf("%v: %v", mode, err)
				}
				continue
			}
			checkPlacement(t, m, devs, p)
		}
		p, err := Plan(m, devs, Options{Mode: Layers})
		want := bruteLayers(m, devs)
		if (err != nil) != math.IsInf(want, 1) {
			t.Fatalf("Plan error %v, brute force best %g", err, want)
		}
		if err == nil {
			got := 1 / p.Throughput
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("slowest group %g, brute force %g", got, want)
			}
		}
	})
}

func FuzzApportion(f *testing.F) {
	f.Add(uint64(1), 10)
	f.Fuzz(func(t *testing.T, seed uint64, n int) {
		rng := rand.New(rand.NewPCG(seed, 3))
		n = max(n, -n) % 10000
		w := make([]float64, 1+rng.IntN(6))
		caps := make([]int, len(w))
		for i := range w {
			w[i], caps[i] = float64(rng.IntN(5)), rng.IntN(n+2)
		}
		got, err := apportion(n, w, caps)
		sumCaps := 0
		for _, c := range caps {
			sumCaps += c
		}
		if err != nil {
			if sumCaps >= n {
				t.Fatalf("apportion(%d, %v, %v): %v", n, w, caps, err)
			}
			return
		}
		sum := 0
		for i, g := range got {
			sum += g
			if g < 0 || g > caps[i] {
				t.Fatalf("apportion(%d, %v, %v) = %v", n, w, caps, got)
			}
		}
		if sum != n {
			t.Fatalf("apportion(%d, %v, %v) = %v sums to %d", n, w, caps, got, sum)
		}
		free, _ := apportion(n, w, nil)
		var ws float64
		for _, x := range w {
			ws += x
		}
		for i, g := range free {
			if q := float64(n) * w[i] / ws; ws > 0 && math.Abs(float64(g)-q) >= 1 {
				t.Fatalf("uncapped apportion(%d, %v) = %v: %d is not within 1 of quota %g", n, w, free, g, q)
			}
		}
	})
}
