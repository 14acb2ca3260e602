package multigpu

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Mode is a partition strategy.
type Mode int

const (
	Auto   Mode = iota // try every strategy and group size, keep the best for Objective
	Layers             // pipeline: groups of one device
	Tensor             // one group of every device
	Hybrid             // groups of Options.TensorGroup devices
)

func (m Mode) String() string { return [...]string{"auto", "layer", "tensor", "hybrid"}[m] }

// ParseMode reads --partition's value.
func ParseMode(s string) (Mode, error) {
	for m := Auto; m <= Hybrid; m++ {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("multigpu: unknown partition %q (want layer, tensor, hybrid or auto)", s)
}

// Device is one device as the planner sees it.
type Device struct {
	Name string // "cuda:0", "hip:1", "cpu"
	// Free is the bytes it may hold (weights and KV cache).
	Free int64
	// Speed is how fast it reads weights, in bytes per second (a decode
	// step is bound by weight reads); only ratios matter unless
	// Options.LinkBandwidth is set.
	Speed float64
}

// Objective is what Auto optimises.
type Objective int

const (
	Latency    Objective = iota // seconds per token of one sequence
	Throughput                  // tokens per second with the pipeline full
)

// Options steer Plan.
type Options struct {
	Mode        Mode
	TensorGroup int // devices per group for Hybrid; Auto tries every divisor
	// Split overrides the speeds as the shares (--split 3,1), one per device.
	Split []float64
	// LinkBandwidth (bytes/s) and LinkLatency (s per message) price the
	// all-reduces of tensor groups; 0 bandwidth means free.
	LinkBandwidth, LinkLatency float64
	Objective                  Objective
}

// ErrNoFit is wrapped when the model cannot be placed in the devices' memory.
var ErrNoFit = errors.New("multigpu: the model does not fit the devices")

// Shard is one device's part of a group's layers: the same head and
// column ranges in every layer of the group.
type Shard struct {
	Device int // index into the devices given to Plan
	// KVHeads is the range [first, end) of KV heads; the device computes
	// query heads [first·g, end·g) and holds their KV cache.
	KVHeads [2]int
	// FFNCols is the range [first, end) of FFN columns (gate/up output rows,
	// down input columns).
	FFNCols [2]int
	Bytes   int64 // everything the device holds
}

// Group is a set of devices that splits every layer of a range by tensor.
type Group struct {
	First, End int // layer range
	Shards     []Shard
	Time       float64 // estimated seconds per token through the group
}

// Placement is Plan's answer.
type Placement struct {
	Mode        Mode
	TensorGroup int
	Groups      []Group
	// DecodeTime is the seconds per token of one sequence (the groups run
	// one after the other); Throughput the tokens per second when
	// micro-batches keep every group busy (1 / the slowest group).
	DecodeTime, Throughput float64
	Reason                 string
}

// AllReduce is a point where a group's devices sum their partial outputs.
type AllReduce struct {
	Layer   int
	After   string // "attn_output" or "ffn_down"
	Devices []int
}

// AllReduces lists the placement's all-reduce points in execution order:
// two per layer of every group with more than one device, none otherwise.
func (p *Placement) AllReduces() []AllReduce {
	var out []AllReduce
	for _, g := range p.Groups {
		if len(g.Shards) < 2 {
			continue
		}
		devs := make([]int, len(g.Shards))
		for i, s := range g.Shards {
			devs[i] = s.Device
		}
		for l := g.First; l < g.End; l++ {
			out = append(out, AllReduce{l, "attn_output", devs}, AllReduce{l, "ffn_down", devs})
		}
	}
	return out
}

// Plan places m on devs. See the package comment for the algorithm.
func Plan(m Model, devs []Device, o Options) (*Placement, error) {
	if err := validate(m, devs, o); err != nil {
		return nil, err
	}
	switch o.Mode {
	case Layers:
		return planGroups(m, devs, o, 1)
	case Tensor:
		return planGroups(m, devs, o, len(devs))
	case Hybrid:
		if o.TensorGroup < 1 || len(devs)%o.TensorGroup != 0 {
			return nil, fmt.Errorf("multigpu: --tensor-group %d does not divide %d devices", o.TensorGroup, len(devs))
		}
		return planGroups(m, devs, o, o.TensorGroup)
	}
	return planAuto(m, devs, o)
}

func validate(m Model, devs []Device, o Options) error {
	if len(devs) == 0 || len(m.Layers) == 0 {
		return errors.New("multigpu: no devices or no layers")
	}
	if o.Split != nil && len(o.Split) != len(devs) {
		return fmt.Errorf("multigpu: %d shares for %d devices", len(o.Split), len(devs))
	}
	for i, d := range devs {
		if !(d.Speed > 0) || d.Free < 0 || (o.Split != nil && !(o.Split[i] >= 0)) {
			return fmt.Errorf("multigpu: device %s: speed %g, free %d, share must be positive", d.Name, d.Speed, d.Free)
		}
	}
	for i, l := range m.Layers {
		if l.DModel <= 0 || l.NKVHead <= 0 || l.NHead%l.NKVHead != 0 || l.HeadDim <= 0 || l.DFF <= 0 || !(l.BytesPerWeight > 0) {
			return fmt.Errorf("multigpu: layer %d: bad shape %+v", i, l)
		}
	}
	return nil
}

// planAuto plans every group size that divides the device count and keeps
// the best for the objective; Reason compares them.
func planAuto(m Model, devs []Device, o Options) (*Placement, error) {
	var best *Placement
	var lines []string
	for t := 1; t <= len(devs); t++ {
		if len(devs)%t != 0 {
			continue
		}
		p, err := planGroups(m, devs, o, t)
		if err != nil {
			lines = append(lines, fmt.Sprintf("  %d group(s) of %d: %v", len(devs)/t, t, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s, %d group(s) of %d: %.3g ms/token, %.3g tokens/s pipelined",
			p.Mode, len(devs)/t, t, 1e3*p.DecodeTime, p.Throughput))
		if best == nil || better(p, best, o.Objective) {
			best = p
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w:\n%s", ErrNoFit, strings.Join(lines, "\n"))
	}
	obj := "lowest time per token"
	if o.Objective == Throughput {
		obj = "highest pipelined throughput"
	}
	best.Reason = fmt.Sprintf("chose %s with groups of %d (%s) among:\n%s\n%s", best.Mode, best.TensorGroup, obj,
		strings.Join(lines, "\n"), best.Reason)
	return best, nil
}

// better compares by the objective, then the other measure, then prefers
// fewer all-reduces (larger groups come later, so ties keep the earlier).
func better(a, b *Placement, obj Objective) bool {
	const eps = 1e-9
	ka, kb := a.DecodeTime, b.DecodeTime
	sa, sb := 1/a.Throughput, 1/b.Throughput
	if obj == Throughput {
		ka, kb, sa, sb = sa, sb, ka, kb
	}
	if math.Abs(ka-kb) > eps*math.Max(ka, kb) {
		return ka < kb
	}
	return sa < sb*(1-eps)
}
