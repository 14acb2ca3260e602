package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"flowchat/app/hub"
	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/multigpu"
	"flowchat/engine/quant"
	"flowchat/ui"
)

// estimateInput is what Estimate reads of a model file, kept while the
// file is unchanged: the GUI's summary (the RAM side) and the hub header
// (hub.EstimateMemory and the planner's shapes).
type estimateInput struct {
	size  int64
	mtime time.Time
	gui   header
	hub   *hub.Header
}

func (l *guiLibrary) estimateInputs(path string) (estimateInput, error) {
	st, err := os.Stat(path)
	if err != nil {
		return estimateInput{}, err
	}
	l.mu.Lock()
	in, ok := l.headers[path]
	l.mu.Unlock()
	if ok && in.size == st.Size() && in.mtime.Equal(st.ModTime()) {
		return in, nil
	}
	f, err := gguf.Open(path)
	if err != nil {
		return estimateInput{}, err
	}
	in = estimateInput{size: st.Size(), mtime: st.ModTime(), gui: describeHeader(f)}
	f.Close()
	if in.hub, err = readHeader(path); err != nil {
		return estimateInput{}, err
	}
	l.mu.Lock()
	if l.headers == nil {
		l.headers = map[string]estimateInput{}
	}
	l.headers[path] = in
	l.mu.Unlock()
	return in, nil
}

// clone copies the slices requantize rewrites.
func (h header) clone() header {
	h.layerBytes, h.layerMats, h.layerMatBytes = slices.Clone(h.layerBytes), slices.Clone(h.layerMats), slices.Clone(h.layerMatBytes)
	return h
}

// hubHeader is the hub header with every matrix at its size after
// re-quantizing to q ("" = as stored), as header.requantize counts them.
func (in estimateInput) hubHeader(q string) *hub.Header {
	t, err := quant.ParseType(q)
	if q == "" || err != nil {
		return in.hub
	}
	bits := typeBits(t)
	h := *in.hub
	h.Tensors = slices.Clone(h.Tensors)
	for i := range h.Tensors {
		if t := &h.Tensors[i]; len(t.Shape) >= 2 {
			t.Size = uint64(float64(t.Elements()) * bits / 8)
		}
	}
	return &h
}

// estimateGPU fills e's GPU side for the devices o chooses (their free
// memory from GPU's last answer); a split that cannot be placed as asked
// is e.Problem, with the one-device figure as the VRAM.
func (l *guiLibrary) estimateGPU(e *ui.MemoryEstimate, in estimateInput, o ui.LoadOptions) {
	l.mu.Lock()
	status := l.gpu
	l.mu.Unlock()
	ids := l.chosenDevices(o)
	if len(ids) == 0 {
		ids = cmpOrSlice(status.Default, []string{"GPU"})
	}
	mems := make([]devMem, len(ids))
	for i, id := range ids {
		d, _ := status.Device(id)
		mems[i] = devMem{id: id, free: d.Free}
	}
	h := in.hubHeader(o.Quant)
	ctx := l.loadContext(o)
	per, err := deviceEstimates(h, ctx, o, mems)
	if err != nil {
		e.Problem = err.Error()
		e.VRAM = hub.EstimateMemory(h, hub.EstimateOptions{Context: ctx, GPULayers: o.GPULayers, KVType: estimateKVType(o)}).VRAM
		return
	}
	e.Devices = per
	for _, d := range per {
		e.VRAM += d.VRAM
	}
}

func cmpOrSlice(s, def []string) []string {
	if len(s) == 0 {
		return def
	}
	return s
}

// devMem is a device as the estimate sees it: its ID and free bytes (0:
// unknown).
type devMem struct {
	id   string
	free uint64
}

// devicePart is what one device holds of the offloaded blocks: a block
// range, and of each of those blocks KV heads [heads) and FFN columns
// [cols) when the block is split by tensor (split), the rest of the block
// (norms) when it is the group's lead, and the output head.
type devicePart struct {
	first, end  int
	split, lead bool
	heads, cols [2]int
	head        bool
}

// deviceEstimates splits hub.EstimateMemory's GPU side for o.GPULayers
// blocks (more than the model has: with the head) over devs as the engine
// places them: the layer partition by engine.SplitCounts (contiguous
// ranges by share, the head on the last device), the tensor and hybrid
// partitions by engine/multigpu's planner over the devices' free memory,
// as model.PlanSplit asks it (when it finds no fit, the shares alone are
// shown, and the devices' free memory says which does not fit). Each
// device's weights and KV cache are its part of the estimate's, so they
// add up to one device's; each device that holds anything has the
// estimate's compute buffers and runtime overhead too.
func deviceEstimates(h *hub.Header, ctx int, o ui.LoadOptions, devs []devMem) ([]ui.DeviceEstimate, error) {
	mode, err := splitChoice(o, len(devs))
	if err != nil {
		return nil, err
	}
	blocks := int(h.Info().BlockCount)
	n := o.GPULayers
	if n < 0 || n > blocks {
		n = blocks + 1
	}
	var parts []devicePart
	if mode == multigpu.Layers {
		parts, err = layerParts(blocks, n, o.Split, len(devs))
	} else {
		parts, err = plannedParts(h, ctx, n, mode, o, devs)
	}
	if err != nil {
		return nil, err
	}
	e := hub.EstimateMemory(h, hub.EstimateOptions{Context: ctx, GPULayers: n, KVType: estimateKVType(o)})
	return partBytes(h, e, parts, devs), nil
}

// layerParts is the engine's layer partition of the last min(n, blocks)
// blocks (engine.placeGPU).
func layerParts(blocks, n int, shares []float64, devs int) ([]devicePart, error) {
	if devs == 1 {
		shares = nil
	}
	counts, err := engine.SplitCounts(min(n, blocks), devs, shares)
	if err != nil {
		return nil, err
	}
	parts := make([]devicePart, devs)
	first := blocks - min(n, blocks)
	for i, c := range counts {
		parts[i] = devicePart{first: first, end: first + c, lead: true}
		first += c
	}
	parts[devs-1].head = n > blocks
	return parts, nil
}

// plannedParts is the tensor or hybrid partition engine/multigpu plans
// for the last min(n, blocks) blocks, with model.PlanSplit's refusal of a
// group larger than the KV head count.
func plannedParts(h *hub.Header, ctx, n int, mode multigpu.Mode, o ui.LoadOptions, devs []devMem) ([]devicePart, error) {
	info := h.Info()
	blocks := int(info.BlockCount)
	t := len(devs)
	if mode == multigpu.Hybrid {
		t = o.TensorGroup
	}
	if t > 1 && int(info.HeadCountKV) < t {
		return nil, fmt.Errorf("%d KV heads cannot be shared by %d devices (a KV head stays whole with its query heads); use fewer devices per group or the layer partition", info.HeadCountKV, t)
	}
	first := blocks - min(n, blocks)
	mm, err := plannerModel(h, ctx, first, n > blocks, estimateKVType(o))
	if err != nil {
		return nil, err
	}
	mdevs := make([]multigpu.Device, len(devs))
	for i, d := range devs {
		mdevs[i] = multigpu.Device{Name: d.id, Free: int64(min(d.free, 1<<62)), Speed: 1}
	}
	opt := multigpu.Options{Mode: mode, TensorGroup: o.TensorGroup, Split: o.Split}
	p, err := multigpu.Plan(mm, mdevs, opt)
	if errors.Is(err, multigpu.ErrNoFit) {
		for i := range mdevs {
			mdevs[i].Free = 1 << 62
		}
		p, err = multigpu.Plan(mm, mdevs, opt)
	}
	if err != nil {
		return nil, err
	}
	parts := make([]devicePart, len(devs))
	for _, g := range p.Groups {
		for i, s := range g.Shards {
			parts[s.Device] = devicePart{first: first + g.First, end: first + g.End, split: len(g.Shards) > 1,
				lead: i == 0, heads: s.KVHeads, cols: s.FFNCols}
		}
	}
	if n > blocks {
		parts[p.Groups[len(p.Groups)-1].Shards[0].Device].head = true
	}
	return parts, nil
}

// plannerModel describes blocks [first, blocks) from the header as
// model.splitModel describes a loaded model: shapes, bytes per weight of
// the seven matrices as stored, a KV cache of type kv over ctx (the
// engine's device.KVCacheBytes), and the output norm and head when head.
func plannerModel(h *hub.Header, ctx, first int, head bool, kv ggml.Type) (multigpu.Model, error) {
	info := h.Info()
	dff := ffnWidths(h)
	var mm multigpu.Model
	for l := first; l < int(info.BlockCount); l++ {
		var bytes, elems uint64
		for _, t := range h.Tensors {
			if hub.LayerOf(t.Name) == l && len(t.Shape) >= 2 && tensorKind(t.Name) != "" {
				bytes, elems = bytes+t.Size, elems+t.Elements()
			}
		}
		if elems == 0 {
			return mm, fmt.Errorf("block %d has no attention and FFN matrices to split", l)
		}
		headDim := int(info.KeyLength)
		mm.Layers = append(mm.Layers, multigpu.Layer{
			DModel: int(info.EmbeddingLength), NHead: int(info.HeadCount), NKVHead: int(info.HeadCountKV), HeadDim: headDim, DFF: dff[l],
			BytesPerWeight: float64(bytes) / float64(elems),
			KVBytesPerHead: device.KVCacheBytes(kv, max(ctx, 1), 1, headDim, int(info.ValueLength)),
		})
	}
	if head {
		out := headTensor(h)
		mm.Output = int64(out) + 4*info.EmbeddingLength
	}
	return mm, nil
}

// estimateKVType is the KV cache type a load with o keeps (the estimate's
// KV element size): the one chosen, F32 when none (or one not valid: the
// load refuses it).
func estimateKVType(o ui.LoadOptions) ggml.Type {
	t, err := parseKVType(o.KVType)
	if err != nil {
		return ggml.F32
	}
	return t
}

// headTensor is the output head's bytes: output.weight, else the tied
// token embedding.
func headTensor(h *hub.Header) uint64 {
	var embd uint64
	for _, t := range h.Tensors {
		switch t.Name {
		case "output.weight":
			return t.Size
		case "token_embd.weight":
			embd = t.Size
		}
	}
	return embd
}

// tensorKind says how a block tensor is split by tensor: "attn" by KV
// heads (Q, K, V and O with their biases), "ffn" by FFN columns (gate,
// up, down); "" for what stays whole on the lead (norms).
func tensorKind(name string) string {
	_, rest, _ := strings.Cut(strings.TrimPrefix(name, "blk."), ".")
	kind, _, _ := strings.Cut(rest, ".")
	switch kind {
	case "attn_q", "attn_k", "attn_v", "attn_output":
		return "attn"
	case "ffn_gate", "ffn_up", "ffn_down":
		return "ffn"
	}
	return ""
}

// partBytes sizes each device's part: every tensor hub.EstimateMemory puts
// on the GPU goes, whole or cut by heads or columns, to the devices
// holding it, and so does each block's KV cache; the parts of a tensor
// (floor(x·b/n) − floor(x·a/n)) add up to it exactly.
func partBytes(h *hub.Header, e hub.Estimate, parts []devicePart, devs []devMem) []ui.DeviceEstimate {
	info := h.Info()
	out := make([]ui.DeviceEstimate, len(parts))
	tied := !slices.ContainsFunc(h.Tensors, func(t hub.TensorEntry) bool { return t.Name == "output.weight" })
	dff := ffnWidths(h)
	for _, t := range h.Tensors {
		l := hub.LayerOf(t.Name)
		for i, p := range parts {
			switch {
			case l >= 0 && l >= p.first && l < p.end:
				out[i].Weights += p.share(t, int(info.HeadCountKV), dff[l])
			case l < 0 && p.head && !strings.HasPrefix(t.Name, "token_embd"):
				out[i].Weights += t.Size
			case p.head && tied && t.Name == "token_embd.weight":
				out[i].Weights += t.Size // a tied head is a copy of the embedding
			}
		}
	}
	buffers := e.VRAM - e.WeightsVRAM - e.KVVRAM
	for i, p := range parts {
		for l := p.first; l < p.end; l++ {
			kvHeads := uint64(h.LayerInt("attention.head_count_kv", l))
			if kvHeads == 0 {
				kvHeads = uint64(info.HeadCountKV)
			}
			b := uint64(device.KVCacheBytes(e.KVType, e.Context, int(kvHeads), int(info.KeyLength), int(info.ValueLength)))
			out[i].KV += p.cut(b, p.heads, int(info.HeadCountKV))
		}
		out[i].ID, out[i].Where = devs[i].id, p.where(info, dff[min(p.first, len(dff)-1)])
		if p.end > p.first || p.head {
			out[i].Buffers = buffers
		}
		out[i].VRAM = out[i].Weights + out[i].KV + out[i].Buffers
	}
	return out
}

// share is the bytes of block tensor t the part holds, of a block with
// nKV KV heads and dff FFN columns.
func (p devicePart) share(t hub.TensorEntry, nKV, dff int) uint64 {
	switch {
	case !p.split:
		return t.Size
	case tensorKind(t.Name) == "attn":
		return p.cut(t.Size, p.heads, nKV)
	case tensorKind(t.Name) == "ffn":
		return p.cut(t.Size, p.cols, dff)
	case p.lead:
		return t.Size
	}
	return 0
}

// ffnWidths is each block's FFN width: its gate's rows, else the header's
// feed_forward_length.
func ffnWidths(h *hub.Header) []int {
	info := h.Info()
	out := make([]int, max(info.BlockCount, 1))
	for i := range out {
		out[i] = int(info.FeedForwardLength)
	}
	for _, t := range h.Tensors {
		if l := hub.LayerOf(t.Name); l >= 0 && l < len(out) && strings.HasSuffix(t.Name, ".ffn_gate.weight") && len(t.Shape) >= 2 {
			out[l] = int(t.Shape[1])
		}
	}
	return out
}

// cut is the part [r) of n units of x bytes; whole when not split.
func (p devicePart) cut(x uint64, r [2]int, n int) uint64 {
	if !p.split || n <= 0 {
		return x
	}
	return x*uint64(r[1])/uint64(n) - x*uint64(r[0])/uint64(n)
}

// where says what the part holds: "12 layers (16–27) + head",
// "28 layers (0–27) · 4 of 8 KV heads, 704 of 1408 FFN columns".
func (p devicePart) where(info hub.ModelInfo, dff int) string {
	var s string
	switch n := p.end - p.first; {
	case n == 0 && !p.head:
		return "nothing"
	case n == 0:
		return "the output head"
	case n == 1:
		s = fmt.Sprintf("1 layer (%d)", p.first)
	default:
		s = fmt.Sprintf("%d layers (%d–%d)", n, p.first, p.end-1)
	}
	if p.head {
		s += " + head"
	}
	if p.split {
		s += fmt.Sprintf(" · %d of %d KV heads, %d of %d FFN columns", p.heads[1]-p.heads[0], info.HeadCountKV, p.cols[1]-p.cols[0], dff)
	}
	return s
}
