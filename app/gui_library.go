package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"flowchat/app/hub"
	"flowchat/app/library"
	"flowchat/app/presets"
	"flowchat/engine"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/quant"
	"flowchat/engine/sample"
	"flowchat/ui"
)

// guiLibrary adapts model files and the engine to ui.Library.
type guiLibrary struct {
	spec    string // --spec, used for every load
	demo    string // the bundled demo model's installed path ("" if it failed)
	threads int    // --threads, the load dialog's default
	ctx     int    // --ctx, the load dialog's default
	// models is the model library listed; nil = modelLibrary().
	models *library.Library
	// devices is --devices (cuda:0,cuda:1, hip:0, cpu for a stand-in):
	// where offloaded layers go; "" = the first CUDA, else ROCm, device.
	devices string

	mu      sync.Mutex
	gpu     ui.GPUStatus             // GPU's last answer: the devices' free memory for Estimate
	headers map[string]estimateInput // by path: Estimate runs on every change of the load dialog
}

var _ ui.Library = (*guiLibrary)(nil)

// Models lists the GGUF models of the model library (downloads, the
// Hugging Face cache, added folders; see app/library) and the bundled demo
// model, each described from its header as Describe does (the engine's
// naming rule, the dominant weight type). A model that cannot be read is
// reported in the error while the rest are listed.
func (l *guiLibrary) Models() ([]ui.ModelInfo, error) {
	lib := l.models
	if lib == nil {
		lib = modelLibrary()
	}
	found, err := lib.Scan()
	errs := []error{err}
	paths := []string{}
	for _, m := range found {
		if m.Kind == hub.KindGGUF && !slices.Contains(paths, m.Path) {
			paths = append(paths, m.Path)
		}
	}
	if l.demo != "" && !slices.Contains(paths, l.demo) {
		paths = append(paths, l.demo)
	}
	var out []ui.ModelInfo
	for _, p := range paths {
		info, err := l.Describe(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, info)
	}
	return out, errors.Join(errs...)
}

// Describe reads a GGUF header (the file is mapped, not read).
func (l *guiLibrary) Describe(path string) (ui.ModelInfo, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return ui.ModelInfo{}, err
	}
	defer f.Close()
	h := describeHeader(f)
	h.info.Bundled = path == l.demo
	return h.info, nil
}

// header is what the GUI needs from a GGUF file: its description and the
// shapes the memory estimate uses.
type header struct {
	info       ui.ModelInfo
	layerBytes []uint64 // weight bytes of each block
	otherBytes uint64   // embedding, output head, norms
	// Elements and bytes of the weight matrices, what re-quantization
	// rewrites: per block, and for the rest.
	layerMats, layerMatBytes []uint64
	otherMats, otherMatBytes uint64
	kvPerToken               uint64 // K+V elements per token over all layers
	embd, vocab              uint64
}

func describeHeader(f *gguf.File) header {
	arch, _ := f.String("general.architecture")
	name := engine.ModelName(f)
	archInt := func(key string) uint64 { v, _ := f.Uint(arch + "." + key); return v }
	h := header{info: ui.ModelInfo{Path: f.Path, Name: name, Arch: arch, FileSize: f.Size(),
		ContextTrain: int(archInt("context_length")), Layers: int(archInt("block_count"))}}
	n := h.info.Layers
	h.layerBytes, h.layerMats, h.layerMatBytes = make([]uint64, n), make([]uint64, n), make([]uint64, n)
	typeBytes := map[string]uint64{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		h.info.Params += int64(t.Elements())
		var mat, matBytes uint64
		if len(t.Shape) >= 2 {
			typeBytes[t.Type.String()] += t.Size
			mat, matBytes = t.Elements(), t.Size
		}
		if l := layerOf(t.Name); l >= 0 && l < n {
			h.layerBytes[l] += t.Size
			h.layerMats[l] += mat
			h.layerMatBytes[l] += matBytes
		} else {
			h.otherBytes += t.Size
			h.otherMats += mat
			h.otherMatBytes += matBytes
		}
	}
	h.info.Quant = dominant(typeBytes)
	h.embd = archInt("embedding_length")
	heads, kvHeads := archInt("attention.head_count"), archInt("attention.head_count_kv")
	if kvHeads == 0 {
		kvHeads = heads
	}
	if heads > 0 {
		h.kvPerToken = 2 * uint64(h.info.Layers) * h.embd / heads * kvHeads
	}
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); ok {
		h.vocab = uint64(len(toks))
	}
	return h
}

// layerOf returns N for "blk.N.…" tensors, else -1.
func layerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '.'), 0)])
	if err != nil {
		return -1
	}
	return n
}

// dominant names the type holding the most matrix bytes.
func dominant(bytes map[string]uint64) string {
	best, bestN := "?", uint64(0)
	for t, n := range bytes {
		if n > bestN || n == bestN && t < best {
			best, bestN = t, n
		}
	}
	return best
}

// Load loads a model and opens a session with the chosen context.
func (l *guiLibrary) Load(ctx context.Context, path string, o ui.LoadOptions) (ui.Engine, error) {
	threads := o.Threads
	if threads <= 0 {
		threads = l.MaxThreads()
	}
	opt := engine.LoadOptions{Threads: threads, SpecPath: l.spec, HugePages: !o.Mmap}
	var err error
	if opt.KVType, err = parseKVType(o.KVType); err != nil {
		return nil, err
	}
	if o.Quant != "" {
		if opt.Quant.Type, err = quant.ParseType(o.Quant); err != nil {
			return nil, err
		}
		opt.Quant.Threads = threads
	}
	opt.Sched.Ctx = o.Context // the scheduler's longest sequence (0: the model's default)
	var gpuLabel string
	if opt.GPU, gpuLabel, err = l.gpuOptions(path, o); err != nil {
		return nil, err
	}
	m, err := engine.Load(path, opt)
	if err != nil {
		if opt.GPU != nil {
			err = gpuFailed(err)
		}
		return nil, err
	}
	if err := guiSpeculation(m, o, threads); err != nil {
		m.Close()
		return nil, err
	}
	nCtx := o.Context
	if nCtx <= 0 {
		nCtx = l.ctx
	}
	if nCtx > 0 && m.Info.ContextTrain > 0 {
		nCtx = min(nCtx, m.Info.ContextTrain)
	}
	e := newGUIEngine(m, path, nCtx, threads)
	e.gpu = gpuLabel
	return e, nil
}

// Choices offers the re-quantization targets (Inferflow's levels, then a
// few GGML types) and the KV cache types the engine implements.
func (l *guiLibrary) Choices() ui.LoadChoices {
	c := ui.LoadChoices{Quants: []ui.Choice{{Value: "", Label: "As stored in the file"}}}
	for _, f := range quant.Formats {
		if f.Alias != "" {
			c.Quants = append(c.Quants, ui.Choice{Value: f.Alias, Label: fmt.Sprintf("%s · Inferflow, %.2g bits/weight", f.Alias, f.BitsPerWeight())})
		}
	}
	for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q6_K, ggml.Q4_K, ggml.Q4_0} {
		c.Quants = append(c.Quants, ui.Choice{Value: t.String(), Label: fmt.Sprintf("%s · GGML, %.2g bits/weight", t, typeBits(t))})
	}
	c.KVTypes = []ui.Choice{
		{Value: "F32", Label: "F32 (exact)"}, {Value: "F16", Label: "F16 (half the memory)"}, {Value: "Q8_0", Label: "Q8_0 (a quarter, nearly exact)"},
	}
	return c
}

// typeBits is a weight type's storage cost per weight, Inferflow formats
// included.
func typeBits(t ggml.Type) float64 {
	if f := quant.ForType(t); f != nil {
		return f.BitsPerWeight()
	}
	return 8 * float64(t.TypeSize()) / float64(t.BlockSize())
}

// Estimate: weights of the blocks on each side (the embedding and head stay
// in RAM; re-quantized matrices at their new size), a KV cache of ctx
// tokens split the same way, and the logits and activations of a 256-token
// prefill batch (engine.NewSession). The GPU side is the Discover screen's
// estimate (hub.EstimateMemory, the one auto fits), split over the chosen
// devices as the engine will place them (deviceEstimates).
func (l *guiLibrary) Estimate(m ui.ModelInfo, o ui.LoadOptions) ui.MemoryEstimate {
	in, err := l.estimateInputs(m.Path)
	if err != nil {
		return ui.MemoryEstimate{RAM: uint64(m.FileSize)}
	}
	h := in.gui.clone()
	if t, err := quant.ParseType(o.Quant); o.Quant != "" && err == nil {
		h.requantize(typeBits(t))
	}
	ctx := uint64(max(o.Context, 1))
	gpu := min(max(o.GPULayers, 0), len(h.layerBytes))
	var e ui.MemoryEstimate
	e.RAM = h.otherBytes
	for i, b := range h.layerBytes {
		if i < len(h.layerBytes)-gpu {
			e.RAM += b
		}
	}
	kv := ctx * h.kvPerToken * kvBytes(o.KVType) / 32
	layers := uint64(max(len(h.layerBytes), 1))
	e.RAM += kv*(layers-uint64(gpu))/layers + 256*(h.vocab+8*h.embd)*4
	if gpu > 0 {
		l.estimateGPU(&e, in, o)
	}
	return e
}

// requantize gives every matrix its size at bits per weight (the engine
// keeps some small ones as stored; the estimate ignores that).
func (h *header) requantize(bits float64) {
	for i, n := range h.layerMats {
		h.layerBytes[i] += uint64(float64(n)*bits/8) - h.layerMatBytes[i]
	}
	h.otherBytes += uint64(float64(h.otherMats)*bits/8) - h.otherMatBytes
}

// kvBytes is the size of 32 cached K or V values of the given type.
func kvBytes(kvType string) uint64 {
	switch kvType {
	case "F16":
		return 64
	case "Q8_0":
		return 34
	}
	return 128
}

// ValidateSampling checks p against the engine's ranges.
func (l *guiLibrary) ValidateSampling(p presets.Params) error {
	sp, err := toSampleParams(p)
	if err != nil {
		return err
	}
	return sp.Validate()
}

// toSampleParams converts through JSON: presets.Params mirrors
// sample.Params field for field (a test in app/presets checks it). Logit
// biases are copied directly, since a ban (-Inf) has no JSON number.
func toSampleParams(p presets.Params) (sample.Params, error) {
	bias := p.LogitBias
	p.LogitBias = nil
	b, err := json.Marshal(p)
	if err != nil {
		return sample.Params{}, err
	}
	sp := sample.DefaultParams()
	if err := json.Unmarshal(b, &sp); err != nil {
		return sp, err
	}
	if bias != nil {
		sp.LogitBias = make(map[int32]float32, len(bias))
		for k, v := range bias {
			sp.LogitBias[k] = v
		}
	}
	return sp, nil
}

// MemoryInUse is the resident set size from /proc (Linux); elsewhere the
// Go heap's size.
func (l *guiLibrary) MemoryInUse() uint64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := bytes.Fields(b)
		if len(f) >= 2 {
			if pages, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
				return pages * uint64(os.Getpagesize())
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys
}

func (l *guiLibrary) MaxThreads() int {
	if l.threads > 0 {
		return l.threads
	}
	return runtime.NumCPU()
}
