package model

import (
	"errors"
	"fmt"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
	"flowchat/engine/multigpu"
)

// SplitOptions ask PlanSplit for a partition of the blocks [First, NLayer)
// over devices.
type SplitOptions struct {
	Mode        multigpu.Mode // Layers, Tensor (every device splits every block) or Hybrid
	TensorGroup int           // devices per tensor group, for Hybrid
	Shares      []float64     // --split, one per device (nil: equal)
	First       int           // blocks before First stay on the host
	Output      bool          // the output norm and head on the last group's lead
	Ctx         int           // the context the planner counts KV cache for
	// Probes are the devices' measured speeds and links (device.Measure),
	// one per device; nil: equal speeds and free links (the planner then
	// splits by free memory and shares alone).
	Probes []device.Probe
	KVType ggml.Type // the KV cache's type (F32, F16, Q8_0), counted by device.KVCacheBytes
}

// ErrSplitShape is wrapped when the blocks cannot be split as asked.
var ErrSplitShape = errors.New("the model's blocks cannot be split so")

// PlanSplit places the blocks [o.First, NLayer) on devs with
// engine/multigpu's planner (Inferflow's partitions: layer ranges of
// groups of devices, each group splitting its blocks by KV heads and FFN
// rows) and returns the placement with the planner's answer (its Reason
// says why). A tensor group needs at least as many KV heads as devices: a
// KV head with its query heads is never split.
func (m *Model) PlanSplit(devs []device.Device, o SplitOptions) (Placement, *multigpu.Placement, error) {
	n := m.NLayer - o.First
	t := groupSize(o, len(devs))
	if n <= 0 || len(devs) == 0 {
		return Placement{}, nil, fmt.Errorf("model: split of %d blocks over %d devices", n, len(devs))
	}
	if t > 1 && m.NHeadKV < t {
		return Placement{}, nil, fmt.Errorf("%w: %d KV heads cannot be shared by %d devices (a KV head stays whole with its query heads); use fewer devices per group or --split-mode layer",
			ErrSplitShape, m.NHeadKV, t)
	}
	mm, err := m.splitModel(o)
	if err != nil {
		return Placement{}, nil, err
	}
	mdevs := make([]multigpu.Device, len(devs))
	for i, d := range devs {
		free, _, err := d.MemInfo()
		if err != nil {
			return Placement{}, nil, fmt.Errorf("%s: %w", d.Name(), err)
		}
		mdevs[i] = multigpu.Device{Name: d.Name(), Free: int64(min(free, 1<<62)), Speed: 1}
	}
	po := multigpu.Options{Mode: o.Mode, TensorGroup: o.TensorGroup, Split: o.Shares}
	if len(o.Probes) == len(devs) {
		po.LinkBandwidth, po.LinkLatency = applyProbes(mdevs, o.Probes)
	}
	mp, err := multigpu.Plan(mm, mdevs, po)
	if err != nil {
		return Placement{}, nil, err
	}
	if mp.TensorGroup > m.NHeadKV {
		return Placement{}, nil, fmt.Errorf("%w: the planner chose groups of %d devices for %d KV heads", ErrSplitShape, mp.TensorGroup, m.NHeadKV)
	}
	return fromPlan(m.NLayer, o, devs, mp), mp, nil
}

func groupSize(o SplitOptions, devs int) int {
	switch o.Mode {
	case multigpu.Tensor:
		return devs
	case multigpu.Hybrid:
		return o.TensorGroup
	}
	return 1
}

// splitModel describes blocks [o.First, NLayer) as the planner sees them:
// shapes, the device bytes per weight, the KV cache of type o.KVType over
// o.Ctx (device.KVCacheBytes of one KV head).
func (m *Model) splitModel(o SplitOptions) (multigpu.Model, error) {
	c := m.Config
	var mm multigpu.Model
	for l := o.First; l < m.NLayer; l++ {
		if err := m.deviceSupport(l); err != nil {
			return mm, fmt.Errorf("block %d: %w", l, err)
		}
		L := &m.Layers[l]
		var bytes, elems int64
		for _, w := range []*Weight{L.Attn.Q.W, L.Attn.K.W, L.Attn.V.W, L.Attn.O.W, L.FFN.Gate.W, L.FFN.Up.W, L.FFN.Down.W} {
			bytes += DeviceMatrixBytes(w.Type, w.Cols, w.Rows)
			elems += int64(w.Rows) * int64(w.Cols)
		}
		mm.Layers = append(mm.Layers, multigpu.Layer{
			DModel: c.NEmbd, NHead: c.NHead, NKVHead: c.NHeadKV, HeadDim: c.HeadDim, DFF: L.FFN.width(),
			BytesPerWeight: float64(bytes) / float64(elems),
			KVBytesPerHead: device.KVCacheBytes(o.KVType, max(o.Ctx, 1), 1, c.HeadDim, c.HeadDimV),
		})
	}
	if o.Output {
		if err := m.outputSupport(); err != nil {
			return mm, fmt.Errorf("output head: %w", err)
		}
		w := m.Output.W
		mm.Output = DeviceMatrixBytes(w.Type, w.Cols, w.Rows) + int64(4*c.NEmbd)
	}
	return mm, nil
}

// fromPlan turns the planner's groups into a Placement: each group's
// blocks on its first device (the lead), split over its shards when the
// group has several devices.
func fromPlan(nLayer int, o SplitOptions, devs []device.Device, mp *multigpu.Placement) Placement {
	p := Placement{Devices: devs, Layer: make([]int, nLayer), Output: -1, Tensor: make([][]Shard, nLayer)}
	for l := range o.First {
		p.Layer[l] = -1
	}
	for _, g := range mp.Groups {
		var shards []Shard
		for _, s := range g.Shards {
			shards = append(shards, Shard{Device: s.Device, KVHeads: s.KVHeads, FFN: s.FFNCols})
		}
		for l := o.First + g.First; l < o.First+g.End; l++ {
			p.Layer[l] = shards[0].Device
			if len(shards) > 1 {
				p.Tensor[l] = shards
			}
		}
	}
	if o.Output {
		p.Output = mp.Groups[len(mp.Groups)-1].Shards[0].Device
	}
	return p
}

// applyProbes sets the planner's device speeds from measured weight-read
// rates and returns the link it prices all-reduces with. Devices within
// 15% of each other count as equally fast (measurement noise must not
// split heads unevenly between twins). Activations cross between two
// devices through the host (a read from one, a write to the other), so
// the link is the slowest device's round trip, and its latency twice a
// one-way message's.
func applyProbes(devs []multigpu.Device, probes []device.Probe) (bw, lat float64) {
	lo, hi, sum := probes[0].ReadBytesPerSec, probes[0].ReadBytesPerSec, 0.0
	for i, p := range probes {
		lo, hi, sum = min(lo, p.ReadBytesPerSec), max(hi, p.ReadBytesPerSec), sum+p.ReadBytesPerSec
		devs[i].Speed = p.ReadBytesPerSec
		if i == 0 || p.LinkBytesPerSec/2 < bw {
			bw = p.LinkBytesPerSec / 2
		}
		lat = max(lat, 2*p.LinkLatency)
	}
	if hi <= 1.15*lo {
		for i := range devs {
			devs[i].Speed = sum / float64(len(devs))
		}
	}
	return bw, lat
}
