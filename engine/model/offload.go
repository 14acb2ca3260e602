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
//
// Tensor[l], when not empty, splits block l by tensor (Megatron-style)
// over its shards, one per device; Layer[l] must then be the first
// shard's device, the lead, which runs the two RMSNorms and the residual
// and sums the shards' partial outputs (tensor.go).
type Placement struct {
	Devices []device.Device
	Layer   []int
	Output  int
	Tensor  [][]Shard
}

// Shard is one device's part of a tensor-split block: KV heads
// [KVHeads[0], KVHeads[1]) with their query heads (Q/K/V rows, the
// matching O columns and their KV cache), and FFN rows [FFN[0], FFN[1])
// of gate and up with the matching columns of down. A range may be empty.
type Shard struct {
	Device  int
	KVHeads [2]int
	FFN     [2]int
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

// devLayer is a block's weights on its devices: the norms on the lead
// (shards[0]'s device), the matrices per shard (one shard holding
// everything when the block is not split).
type devLayer struct {
	attnNorm, ffnNorm device.Mem
	shards            []devShard
}

// devShard is a Shard's matrices on its device: q [nHead'·hd × d_model],
// k and v [nKV'·hd × d_model], o [d_model × nHead'·hd], gate and up
// [nff' × d_model], dn [d_model × nff'] (primes: the shard's counts).
type devShard struct {
	Shard
	nKV, nHead, nff          int
	q, k, v, o, gate, up, dn devLinear
}

func (sh *devShard) qDim(hd int) int  { return sh.nHead * hd }
func (sh *devShard) kvDim(hd int) int { return sh.nKV * hd }

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
		shards, err := m.blockShards(o.Placement, l)
		if err != nil {
			return err
		}
		if err := m.uploadLayer(o, l, shards); err != nil {
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

func (m *Model) uploadLayer(o *offload, l int, shards []Shard) error {
	L, up := &m.Layers[l], uploader{o: o, di: shards[0].Device}
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
	for _, sh := range shards {
		ds, err := m.uploadShard(o, L, sh)
		if err != nil {
			return err
		}
		w.shards = append(w.shards, ds)
	}
	return nil
}

// uploadShard uploads sh's rows of Q/K/V/gate/up and columns of O/down.
func (m *Model) uploadShard(o *offload, L *Layer, sh Shard) (devShard, error) {
	c, up := m.Config, uploader{o: o, di: sh.Device}
	g := c.NHead / c.NHeadKV
	ds := devShard{Shard: sh, nKV: sh.KVHeads[1] - sh.KVHeads[0], nff: sh.FFN[1] - sh.FFN[0]}
	ds.nHead = g * ds.nKV
	q0, q1 := sh.KVHeads[0]*g*c.HeadDim, sh.KVHeads[1]*g*c.HeadDim
	k0, k1 := sh.KVHeads[0]*c.HeadDim, sh.KVHeads[1]*c.HeadDim
	f0, f1 := sh.FFN[0], sh.FFN[1]
	for _, v := range []struct {
		dst            *devLinear
		src            *Weight
		r0, r1, c0, c1 int // -1: the whole dimension
	}{
		{&ds.q, L.Attn.Q.W, q0, q1, -1, -1}, {&ds.k, L.Attn.K.W, k0, k1, -1, -1}, {&ds.v, L.Attn.V.W, k0, k1, -1, -1},
		{&ds.o, L.Attn.O.W, -1, -1, q0, q1},
		{&ds.gate, L.FFN.Gate.W, f0, f1, -1, -1}, {&ds.up, L.FFN.Up.W, f0, f1, -1, -1}, {&ds.dn, L.FFN.Down.W, -1, -1, f0, f1},
	} {
		r0, r1, c0, c1 := v.r0, v.r1, v.c0, v.c1
		if r0 < 0 {
			r0, r1 = 0, v.src.Rows
		}
		if c0 < 0 {
			c0, c1 = 0, v.src.Cols
		}
		var err error
		if *v.dst, err = up.part(v.src, r0, r1, c0, c1); err != nil {
			return ds, err
		}
	}
	return ds, nil
}

// blockShards is block l's shards under p: Tensor[l], checked, or one
// shard of everything on Layer[l].
func (m *Model) blockShards(p Placement, l int) ([]Shard, error) {
	di := p.Layer[l]
	if l >= len(p.Tensor) || len(p.Tensor[l]) == 0 {
		return []Shard{{Device: di, KVHeads: [2]int{0, m.NHeadKV}, FFN: [2]int{0, m.Layers[l].FFN.width()}}}, nil
	}
	shards := p.Tensor[l]
	seen := map[int]bool{}
	h, f := 0, 0
	for _, sh := range shards {
		if sh.Device < 0 || sh.Device >= len(p.Devices) || seen[sh.Device] || sh.KVHeads[0] != h || sh.FFN[0] != f ||
			sh.KVHeads[1] < h || sh.FFN[1] < f {
			return nil, fmt.Errorf("model: block %d: shards %v are not contiguous ranges on distinct devices", l, shards)
		}
		seen[sh.Device] = true
		h, f = sh.KVHeads[1], sh.FFN[1]
	}
	if h != m.NHeadKV || f != m.Layers[l].FFN.width() || shards[0].Device != di {
		return nil, fmt.Errorf("model: block %d: shards %v do not cover %d KV heads and %d FFN rows, or do not lead on device %d",
			l, shards, m.NHeadKV, m.Layers[l].FFN.width(), di)
	}
	return shards, nil
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

// linear uploads a matrix in its own type when a kernel reads it (every
// GGML type but Q8_1 and Q8_K), else converted to F16 (Inferflow's
// formats: dequantized once, so the device holds 2 bytes per weight for
// them; DeviceMatrixBytes says so).
func (u uploader) linear(w *Weight) (devLinear, error) { return u.part(w, 0, w.Rows, 0, w.Cols) }

// part uploads rows [r0, r1) and columns [c0, c1) of w: in w's own type
// when a kernel reads it and the columns fall on its block boundaries,
// else converted to F16.
func (u uploader) part(w *Weight, r0, r1, c0, c1 int) (devLinear, error) {
	if r0 == r1 || c0 == c1 { // an empty share: nothing to hold or compute
		return devLinear{n: c1 - c0, rows: r1 - r0}, nil
	}
	t, ok := device.KernelType(w.Type)
	bs := w.Type.BlockSize()
	var data []byte
	switch {
	case ok && c0 == 0 && c1 == w.Cols:
		data = w.Plain(r0, r1)
	case ok && c0%bs == 0 && c1%bs == 0:
		a, b := w.Type.RowSize(c0), w.Type.RowSize(c1)
		data = make([]byte, 0, (r1-r0)*(b-a))
		for r := r0; r < r1; r++ {
			data = append(data, w.Row(r)[a:b]...)
		}
	default:
		t, data = device.F16, toF16(w, r0, r1, c0, c1)
	}
	mem, err := u.put(data)
	return devLinear{t: t, w: mem, n: c1 - c0, rows: r1 - r0}, err
}

// DeviceMatrixBytes is the device memory a matrix of type t takes.
func DeviceMatrixBytes(t ggml.Type, cols, rows int) int64 {
	if _, ok := device.KernelType(t); ok {
		return int64(rows) * int64(t.RowSize(cols))
	}
	return 2 * int64(rows) * int64(cols)
}

// toF16 is rows [r0, r1) and columns [c0, c1) of w in F16.
func toF16(w *Weight, r0, r1, c0, c1 int) []byte {
	n := c1 - c0
	out := make([]uint16, (r1-r0)*n)
	row := make([]float32, w.Cols)
	for r := r0; r < r1; r++ {
		ggml.DequantizeRow(w.Type, w.Row(r), row)
		for i, v := range row[c0:c1] {
			out[(r-r0)*n+i] = ggml.FP32ToFP16(v)
		}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), 2*len(out))
}
