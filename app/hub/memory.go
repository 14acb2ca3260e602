package hub

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// EstimateOptions choose how a model would be run.
type EstimateOptions struct {
	Context   int       // tokens of KV cache; default min(training context, 4096)
	GPULayers int       // layers offloaded, as llama.cpp's -ngl: the last GPULayers blocks; more than the block count also offloads the output head
	KVType    ggml.Type // the KV cache's element type (F32, the zero value; F16; Q8_0), counted by device.KVCacheBytes
	Batch     int       // tokens per forward step during prefill (ubatch); default 512
}

// Estimate is the memory a model needs, in bytes, split between host RAM
// and GPU memory.
type Estimate struct {
	Context     int
	KVType      ggml.Type // the KV cache's element type counted
	GPULayers   int       // clamped to blocks + 1
	WeightsRAM  uint64
	WeightsVRAM uint64
	KVRAM       uint64 // K and V of the layers on the CPU
	KVVRAM      uint64
	ComputeRAM  uint64 // activations, attention scores and logits buffers
	ComputeVRAM uint64
	RAM, VRAM   uint64 // totals, with runtime overheads
}

// Runtime overheads not visible in the file: the app and Go runtime in RAM,
// and a CUDA/HIP context with its kernels and cuBLAS workspace in VRAM.
const (
	overheadRAM  = 150 << 20
	overheadVRAM = 400 << 20
)

// EstimateMemory estimates the RAM and VRAM a model needs from its header:
// weights by layer placement, the KV cache (n_layer × n_ctx × n_kv_heads ×
// (key_length + value_length) elements of KVType, as device.KVCacheBytes
// counts them: 4, 2 or 34/32 bytes; per-layer head counts honoured) and
// compute buffers.
// The compute-buffer figure is an approximation of llama.cpp's graph
// allocator: attention scores (n_head × n_ctx × batch × 4) plus
// activations (batch × (4·n_embd + 2·n_ff) × 4), with the logits
// (batch × n_vocab × 4) in host memory.
func EstimateMemory(h *Header, o EstimateOptions) Estimate {
	info := h.Info()
	o = o.withDefaults(info)
	e := Estimate{Context: o.Context, KVType: o.KVType, GPULayers: min(max(o.GPULayers, 0), int(info.BlockCount)+1)}
	firstGPU := int(info.BlockCount) - e.GPULayers // blocks ≥ firstGPU are on the GPU
	e.placeWeights(h, firstGPU, e.GPULayers > int(info.BlockCount))
	e.placeKV(h, info, o, firstGPU)
	e.placeCompute(info, o)
	e.RAM = e.WeightsRAM + e.KVRAM + e.ComputeRAM + overheadRAM
	e.VRAM = e.WeightsVRAM + e.KVVRAM + e.ComputeVRAM
	if e.GPULayers > 0 {
		e.VRAM += overheadVRAM
	}
	return e
}

func (o EstimateOptions) withDefaults(info ModelInfo) EstimateOptions {
	if o.Context <= 0 {
		o.Context = 4096
		if info.ContextLength > 0 {
			o.Context = int(min(info.ContextLength, 4096))
		}
	}
	if o.Batch <= 0 {
		o.Batch = 512
	}
	o.Batch = min(o.Batch, o.Context)
	return o
}

// placeWeights puts each tensor where llama.cpp would: blocks by index,
// the token embedding always on the CPU, the output head and final norm on
// the GPU only when every block is.
func (e *Estimate) placeWeights(h *Header, firstGPU int, outputOnGPU bool) {
	tied := true
	for i := range h.Tensors {
		if h.Tensors[i].Name == "output.weight" {
			tied = false
		}
	}
	for i := range h.Tensors {
		t := &h.Tensors[i]
		l := LayerOf(t.Name)
		onGPU := l >= 0 && l >= firstGPU || l < 0 && outputOnGPU && !strings.HasPrefix(t.Name, "token_embd")
		if onGPU {
			e.WeightsVRAM += t.Size
		} else {
			e.WeightsRAM += t.Size
		}
		// A tied head is the embedding matrix, copied to the GPU.
		if tied && outputOnGPU && t.Name == "token_embd.weight" {
			e.WeightsVRAM += t.Size
		}
	}
}

func (e *Estimate) placeKV(h *Header, info ModelInfo, o EstimateOptions, firstGPU int) {
	for l := range int(info.BlockCount) {
		kvHeads := h.LayerInt("attention.head_count_kv", l)
		if kvHeads == 0 {
			kvHeads = info.HeadCountKV
		}
		b := uint64(device.KVCacheBytes(o.KVType, o.Context, int(kvHeads), int(info.KeyLength), int(info.ValueLength)))
		if l >= firstGPU {
			e.KVVRAM += b
		} else {
			e.KVRAM += b
		}
	}
}

func (e *Estimate) placeCompute(info ModelInfo, o EstimateOptions) {
	ub := uint64(o.Batch)
	attn := uint64(info.HeadCount) * uint64(o.Context) * ub * 4
	act := ub * uint64(4*info.EmbeddingLength+2*info.FeedForwardLength) * 4
	logits := ub * uint64(info.VocabSize) * 4
	if e.GPULayers > 0 {
		e.ComputeVRAM = attn + act
		e.ComputeRAM = act + logits
		return
	}
	e.ComputeRAM = attn + act + logits
}

// Fit is a verdict on whether something fits in memory.
type Fit int

const (
	FitUnknown Fit = iota // free memory unknown
	Fits                  // needs at most 80% of what is free
	Tight                 // needs 80-100% of what is free: other programs may push it out
	DoesNotFit
)

func (f Fit) String() string {
	return [...]string{"unknown", "fits", "tight", "does not fit"}[f]
}

// Free is the memory available, in bytes; 0 means unknown.
type Free struct{ RAM, VRAM uint64 }

// Verdict compares an estimate with free memory.
type Verdict struct {
	Fit      Fit // the worse of RAM and VRAM
	RAM      Fit
	VRAM     Fit // FitUnknown when no layer is offloaded
	Estimate Estimate
	Free     Free
}

// Judge compares e with free memory.
func Judge(e Estimate, free Free) Verdict {
	v := Verdict{Estimate: e, Free: free, RAM: fitOf(e.RAM, free.RAM)}
	if e.GPULayers > 0 {
		v.VRAM = fitOf(e.VRAM, free.VRAM)
	}
	v.Fit = max(v.RAM, v.VRAM)
	return v
}

func fitOf(need, free uint64) Fit {
	switch {
	case free == 0:
		return FitUnknown
	case need*5 <= free*4:
		return Fits
	case need <= free:
		return Tight
	}
	return DoesNotFit
}

// String says the verdict with its numbers, e.g. "fits: needs 1.2 GiB RAM
// of 7.9 GiB free".
func (v Verdict) String() string {
	s := fmt.Sprintf("%v: needs %s RAM", v.Fit, HumanBytes(v.Estimate.RAM))
	if v.Free.RAM > 0 {
		s += " of " + HumanBytes(v.Free.RAM) + " free"
	}
	if v.Estimate.GPULayers > 0 {
		s += fmt.Sprintf(", %s VRAM", HumanBytes(v.Estimate.VRAM))
		if v.Free.VRAM > 0 {
			s += " of " + HumanBytes(v.Free.VRAM) + " free"
		}
	}
	return s + fmt.Sprintf(" (context %d, %d GPU layers)", v.Estimate.Context, v.Estimate.GPULayers)
}

// HumanBytes formats a byte count with binary units ("1.5 GiB").
func HumanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// FreeRAM is the memory available to a new program: MemAvailable from
// /proc/meminfo on Linux; 0 (unknown) elsewhere.
func FreeRAM() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	n, _ := parseMemAvailable(f)
	return n
}

// parseMemAvailable finds "MemAvailable: N kB" in a meminfo listing.
func parseMemAvailable(r io.Reader) (uint64, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}
