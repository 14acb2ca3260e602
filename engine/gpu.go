package engine

import (
	"fmt"

	"flowchat/engine/device"
	"flowchat/engine/model"
	"flowchat/engine/multigpu"
)

// GPUOptions place blocks on devices at load (LoadOptions.GPU).
type GPUOptions struct {
	// Devices are opened by the caller (device.Open, device.Default) and
	// closed with the model (also when Load fails after opening the file).
	Devices []device.Device
	// Layers is how many blocks run on the devices, the last ones (as
	// llama.cpp's -ngl counts); more than the model has, or < 0, means every
	// block and the output norm and head. The token embedding stays on the
	// CPU: its rows for a batch cross as the first boundary's activations.
	Layers int
	// Split shares the offloaded blocks between the devices in contiguous
	// ranges (a layer partition), in proportion (nil: equal shares); under
	// a tensor or hybrid Mode, the heads and FFN rows of a tensor group.
	Split []float64
	// Mode multigpu.Tensor splits every offloaded block by tensor over all
	// the devices, multigpu.Hybrid chains groups of TensorGroup devices by
	// layer and splits by tensor within each (engine/multigpu plans both:
	// model.PlanSplit). Anything else is the layer partition by Split.
	// multigpu.Auto over two or more devices lets the planner choose the
	// partition and group size with the lowest time per token from the
	// devices' measured weight-read speed and host link (device.Measure,
	// or Probes), and the shares from those speeds unless Split is set;
	// its comparison is in Model.GPUPlan. Over one device Auto is Layers.
	Mode        multigpu.Mode
	TensorGroup int
	// Probes replace the measurements Auto makes (one per device; tests).
	Probes []device.Probe
	// Ctx is the context the planner counts each device's KV cache for
	// (0: 4096).
	Ctx int
}

// placeGPU uploads the blocks o puts on devices.
func (m *Model) placeGPU(o *GPUOptions) error {
	n := m.Net.NLayer
	k := o.Layers
	if k < 0 || k > n {
		k = n + 1
	}
	if o.Mode == multigpu.Tensor || o.Mode == multigpu.Hybrid || (o.Mode == multigpu.Auto && len(o.Devices) > 1) {
		return m.placeSplit(o, k)
	}
	counts, err := SplitCounts(min(k, n), len(o.Devices), o.Split)
	if err != nil {
		return err
	}
	p := model.ByRanges(o.Devices, append([]int{n - min(k, n)}, counts...))
	// ByRanges put the first range on "device 0": shift so that the host
	// range is -1 and the devices start at 0.
	for l := range p.Layer {
		p.Layer[l]--
	}
	p.Output = -1
	if k > n {
		p.Output = len(o.Devices) - 1
	}
	m.devices = o.Devices // closed by Close, also when placing fails
	if err := m.Net.Place(p); err != nil {
		return fmt.Errorf("placing %d blocks on %s: %w", min(k, n), deviceNames(o.Devices), err)
	}
	return nil
}

// placeSplit places the last min(k, n) blocks (k > n: with the head) by
// tensor or hybrid partition; the planner's reason is kept in GPUPlan.
func (m *Model) placeSplit(o *GPUOptions, k int) error {
	n := m.Net.NLayer
	m.devices = o.Devices // closed by Close, also when placing fails
	ctx := o.Ctx
	if ctx <= 0 {
		ctx = 4096
	}
	probes := o.Probes
	if o.Mode == multigpu.Auto && probes == nil {
		// Auto chooses by speed and link: measure them.
		for _, d := range o.Devices {
			p, err := device.Measure(d, 3)
			if err != nil {
				return fmt.Errorf("choosing a partition over %s: %w", deviceNames(o.Devices), err)
			}
			probes = append(probes, p)
		}
	}
	p, plan, err := m.Net.PlanSplit(o.Devices, model.SplitOptions{Mode: o.Mode, TensorGroup: o.TensorGroup,
		Shares: o.Split, First: n - min(k, n), Output: k > n, Ctx: ctx, Probes: probes, KVType: m.kvType})
	if err == nil {
		err = m.Net.Place(p)
	}
	if err != nil {
		return fmt.Errorf("splitting %d blocks by %s over %s: %w", min(k, n), o.Mode, deviceNames(o.Devices), err)
	}
	m.GPUPlan = plan.Reason
	return nil
}

// SplitCounts apportions n blocks to d devices by shares (largest
// remainder; nil shares: equal).
func SplitCounts(n, d int, shares []float64) ([]int, error) {
	if d == 0 {
		return nil, fmt.Errorf("engine: GPU layers without a device")
	}
	if shares == nil {
		shares = make([]float64, d)
		for i := range shares {
			shares[i] = 1
		}
	}
	if len(shares) != d {
		return nil, fmt.Errorf("engine: %d split shares for %d devices", len(shares), d)
	}
	total := 0.0
	for _, s := range shares {
		if s < 0 {
			return nil, fmt.Errorf("engine: negative split share %g", s)
		}
		total += s
	}
	if total == 0 {
		return nil, fmt.Errorf("engine: split shares sum to zero")
	}
	counts, rem, given := make([]int, d), make([]float64, d), 0
	for i, s := range shares {
		q := float64(n) * s / total
		counts[i], rem[i] = int(q), q-float64(int(q))
		given += counts[i]
	}
	for ; given < n; given++ {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		counts[best]++
		rem[best] = -1
	}
	return counts, nil
}

func deviceNames(devs []device.Device) string {
	s := ""
	for i, d := range devs {
		if i > 0 {
			s += ", "
		}
		s += d.Name()
	}
	return s
}

// Placement says what runs where, for people: "GPU 22/22 layers + head ·
// cuda:0 (NVIDIA H100)", or "CPU" when nothing is offloaded.
func (m *Model) Placement() string {
	layers, head := m.Net.Offloaded()
	if layers == 0 && !head {
		return "CPU"
	}
	s := fmt.Sprintf("GPU %d/%d layers", layers, m.Net.NLayer)
	if head {
		s += " + head"
	}
	return s + " · " + deviceNames(m.devices)
}
