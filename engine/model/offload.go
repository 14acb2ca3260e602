package model

import (
	"errors"
	"fmt"
	"unsafe"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// Placement says where the network runs: Layer[l] is the index in Devices
// of the device that runs block l, or -1 for the host (the CPU engine);
// Output likewise for the output norm and head. The token embedding is a
// row lookup and always stays on the host (as in llama.cpp): only its rows
// for the batch cross, as the first boundary's activations.
type Placement struct {
	Devices []device.Device
	Layer   []int
	Output  int
}

// LastLayers places the last n blocks (n > NLayer: also the output head) on
// dev, as llama.cpp's -ngl counts: the blocks nearest the output go first.
func LastLayers(nLayer, n int, dev device.Device) Placement {
	p := Placement{Devices: []device.Device{dev}, Layer: make([]int, nLayer), Output: -1}
	for l := range p.Layer {
		p.Layer[l] = -1
		if l >= nLayer-n {
			p.Layer[l] = 0
		}
	}
	if n > nLayer {
		p.Output = 0
	}
	return p
}

// ByRanges places layers [Starts[i], Starts[i+1]) on device i (a layer
// partition); the output head goes with the last layer.
func ByRanges(devs []device.Device, counts []int) Placement {
	p := Placement{Devices: devs, Output: -1}
	for i, n := range counts {
		for range n {
			p.Layer = append(p.Layer, i)
		}
	}
	if len(p.Layer) > 0 {
		p.Output = p.Layer[len(p.Layer)-1]
	}
	return p
}

// offload is a model's placement with its weights on the devices.
type offload struct {
	Placement
	w      []devLayer // per block; zero for host blocks
	outW   devLinear
	outN   device.Mem
	allocs [][]device.Mem // per device, freed by Unplace
	bytes  []int64        // per device, weights
	err    error          // sticky device error of a KV copy (paged.go's copyRows)
}

// devLinear is a matrix on a device: rows of n elements of type t.
type devLinear struct {
	t       device.WeightType
	w       device.Mem
	n, rows int
}

type devLayer struct {
	attnNorm, ffnNorm        device.Mem
	q, k, v, o, gate, up, dn devLinear
}

// errDeviceUnsupported wraps the reasons a block cannot run on a device.
var errDeviceUnsupported = errors.New("not supported by the device kernels yet")

// Place uploads the weights of the blocks (and head) that p puts on
// devices. Blocks the device kernels cannot run are an error that names
// the block and the reason; nothing falls back to the host silently.
func (m *Model) Place(p Placement) error {
	if len(p.Layer) != m.NLayer {
		return fmt.Errorf("model: placement of %d blocks for a model of %d", len(p.Layer), m.NLayer)
	}
	m.Unplace()
	o := &offload{Placement: p, w: make([]devLayer, m.NLayer), allocs: make([][]device.Mem, len(p.Devices)), bytes: make([]int64, len(p.Devices))}
	if err := m.upload(o); err != nil {
		o.free()
		return err
	}
	m.off = o
	return nil
}

// Unplace frees the device weights and returns every block to the host.
// States made before stay valid only for host-only forward passes.
func (m *Model) Unplace() {
	if m.off != nil {
		m.off.free()
		m.off = nil
	}
}

// Offloaded reports how many blocks run on devices, and whether the head does.
func (m *Model) Offloaded() (layers int, output bool) {
	if m.off == nil {
		return 0, false
	}
	for _, d := range m.off.Layer {
		if d >= 0 {
			layers++
		}
	}
	return layers, m.off.Output >= 0
}

// DeviceWeightBytes is what the weights placed on device i occupy there.
func (m *Model) DeviceWeightBytes(i int) int64 {
	if m.off == nil || i >= len(m.off.bytes) {
		return 0
	}
	return m.off.bytes[i]
}

func (o *offload) free() {
	for i, ms := range o.allocs {
		for _, mem := range ms {
			o.Devices[i].Free(mem)
		}
	}
	o.allocs = nil
}

func (m *Model) upload(o *offload) error {
	for l, di := range o.Layer {
		if di < 0 {
			continue
		}
		if di >= len(o.Devices) {
			return fmt.Errorf("model: block %d placed on device %d of %d", l, di, len(o.Devices))
		}
		if err := m.deviceSupport(l); err != nil {
			return fmt.Errorf("block %d on %s: %w", l, o.Devices[di].Name(), err)
		}
		if err := m.uploadLayer(o, l, di); err != nil {
			return err
		}
	}
	if o.Output < 0 {
		return nil
	}
	if err := m.outputSupport(); err != nil {
		return fmt.Errorf("output head on %s: %w", o.Devices[o.Output].Name(), err)
	}
	var err error
	up := uploader{o: o, di: o.Output}
	o.outN, err = up.vector(m.OutNorm.W)
	if err == nil {
		o.outW, err = up.linear(m.Output.W)
	}
	return err
}

func (m *Model) uploadLayer(o *offload, l, di int) error {
	L, up := &m.Layers[l], uploader{o: o, di: di}
	w := &o.w[l]
	var err error
	for _, v := range []struct {
		dst *device.Mem
		src []float32
	}{{&w.attnNorm, L.AttnNorm.W}, {&w.ffnNorm, L.FFNNorm.W}} {
		if *v.dst, err = up.vector(v.src); err != nil {
			return err
		}
	}
	for _, v := range []struct {
		dst *devLinear
		src *Weight
	}{{&w.q, L.Attn.Q.W}, {&w.k, L.Attn.K.W}, {&w.v, L.Attn.V.W}, {&w.o, L.Attn.O.W}, {&w.gate, L.FFN.Gate.W}, {&w.up, L.FFN.Up.W}, {&w.dn, L.FFN.Down.W}} {
		if *v.dst, err = up.linear(v.src); err != nil {
			return err
		}
	}
	return nil
}

// deviceSupport says why block l cannot run on a device (nil: it can).
// The device layer is the pre-norm decoder block with RMSNorm, RoPE (or no
// positions in the block), separate Q/K/V projections without biases, F32
// attention without softcap, ALiBi or sliding windows, and a SiLU-gated FFN
// with a separate gate: Llama, Mistral, Qwen 3 without QK norms, and the
// like. Anything else is reported rather than approximated.
func (m *Model) deviceSupport(l int) error {
	L, c := &m.Layers[l], m.Config
	why := ""
	switch {
	case m.seq != nil || !m.causal:
		why = "not a decoder-only network"
	case !devNorm(L.AttnNorm) || !devNorm(L.FFNNorm):
		why = "norms other than RMSNorm with a gain"
	case L.PostAttnNorm != nil || L.PostFFNNorm != nil || L.AttnOutNorm != nil || L.OutNorm != nil:
		why = "post-norms"
	case L.Attn.QNorm != nil || L.Attn.KNorm != nil:
		why = "per-head Q/K norms"
	case L.Attn.QKV.W != nil:
		why = "a fused QKV projection"
	case L.Attn.Q.B != nil || L.Attn.K.B != nil || L.Attn.V.B != nil || L.Attn.O.B != nil:
		why = "attention biases"
	case L.FFN.Gate.W == nil || L.FFN.FusedGate || !m.silu || !m.glu:
		why = "an FFN other than SiLU-gated with a separate gate"
	case L.FFN.Gate.B != nil || L.FFN.Up.B != nil || L.FFN.Down.B != nil:
		why = "FFN biases"
	case m.parallel:
		why = "parallel attention and FFN"
	case m.alibi != nil || c.AttnSoftcap != 0 || m.slidingLayer(l):
		why = "ALiBi, attention softcap or a sliding window"
	case c.HeadDim != c.HeadDimV || c.NRot > c.HeadDim || c.NRot%2 != 0:
		why = "K and V head widths differ or odd rotary width"
	}
	if why != "" {
		return fmt.Errorf("%s: %w", why, errDeviceUnsupported)
	}
	return nil
}

func (m *Model) outputSupport() error {
	if !devNorm(m.OutNorm) || m.Output.B != nil {
		return fmt.Errorf("an output norm other than RMSNorm with a gain, or a head bias: %w", errDeviceUnsupported)
	}
	return nil
}

func devNorm(n *Norm) bool { return n != nil && n.RMS && !n.BaseOne && n.B == nil && n.W != nil }

// uploader allocates and fills weights on device di of o.
type uploader struct {
	o  *offload
	di int
}

func (u uploader) put(b []byte) (device.Mem, error) {
	d := u.o.Devices[u.di]
	mem, err := d.Alloc(len(b))
	if err != nil {
		return device.Mem{}, err
	}
	u.o.allocs[u.di] = append(u.o.allocs[u.di], mem)
	u.o.bytes[u.di] += int64(len(b))
	return mem, d.Write(mem, b)
}

func (u uploader) vector(v []float32) (device.Mem, error) { return u.put(ggml.F32Bytes(v)) }

// linear uploads a matrix in its own type when a kernel reads it, else
// converted to F16 (K-quants and the other types: dequantized once, so
// the device holds 2 bytes per weight for them; DeviceMatrixBytes says so).
func (u uploader) linear(w *Weight) (devLinear, error) {
	t, ok := device.KernelType(w.Type)
	data := w.Data[:w.Rows*w.Type.RowSize(w.Cols)]
	if !ok {
		t, data = device.F16, toF16(w)
	}
	mem, err := u.put(data)
	return devLinear{t: t, w: mem, n: w.Cols, rows: w.Rows}, err
}

// DeviceMatrixBytes is the device memory a matrix of type t takes.
func DeviceMatrixBytes(t ggml.Type, cols, rows int) int64 {
	if _, ok := device.KernelType(t); ok {
		return int64(rows) * int64(t.RowSize(cols))
	}
	return 2 * int64(rows) * int64(cols)
}

func toF16(w *Weight) []byte {
	out := make([]uint16, w.Rows*w.Cols)
	row := make([]float32, w.Cols)
	for r := range w.Rows {
		ggml.DequantizeRow(w.Type, w.Row(r), row)
		for i, v := range row {
			out[r*w.Cols+i] = ggml.FP32ToFP16(v)
		}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), 2*len(out))
}
