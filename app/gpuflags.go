package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"flowchat/app/hub"
	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/engine/multigpu"
	"flowchat/ui"
)

// gpuFlags place blocks on GPUs: --gpu-layers N|auto|all, --devices
// cuda:0,cuda:1|hip:0|cpu,… (cpu: a stand-in device on the CPU, for
// tests), --split 3,1 (shares per device), --split-mode layer|row|tensor|
// hybrid and --tensor-group N (hybrid's devices per group): layer ranges,
// every block split by heads and FFN rows (row is llama.cpp's name for
// tensor), or Inferflow's groups, planned by engine/multigpu.
type gpuFlags struct {
	layers, devices, split, mode string
	group                        int
	kvType                       string // --kv-type as the load will use it (auto counts its KV cache)
}

func (g *gpuFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.layers, "gpu-layers", "0", "blocks to run on the GPU: a number (the last blocks; more than the model has also moves the output head), all, or auto (as many as fit the free GPU memory with a margin)")
	fs.StringVar(&g.layers, "ngl", "0", "shorthand for --gpu-layers")
	fs.StringVar(&g.devices, "devices", "", "GPUs to use, e.g. cuda:0,cuda:1 or hip:0 (default: the first CUDA device, else the first ROCm device)")
	fs.StringVar(&g.split, "split", "", "shares per device, e.g. 3,1 (default: equal): of the blocks (layer), or of each block's heads and FFN rows (row, tensor, hybrid)")
	fs.StringVar(&g.mode, "split-mode", "layer", "how blocks are split over several devices: layer (contiguous ranges), row or tensor (every block's attention heads and FFN rows shared by all devices), hybrid (layer ranges over groups of --tensor-group devices, split by tensor within a group), or auto (the planner measures each device's speed and link and picks the partition and group size with the lowest time per token; it prints why)")
	fs.StringVar(&g.mode, "partition", "layer", "the same as --split-mode (the Inferflow paper's name)")
	fs.IntVar(&g.group, "tensor-group", 2, "devices per group for --split-mode hybrid")
}

// partition reads --split-mode (and --tensor-group for hybrid).
func (g *gpuFlags) partition() (multigpu.Mode, error) {
	switch g.mode {
	case "layer", "":
		return multigpu.Layers, nil
	case "row", "tensor":
		return multigpu.Tensor, nil
	case "auto":
		return multigpu.Auto, nil
	case "hybrid":
		if g.group < 1 {
			return 0, fmt.Errorf("%w: --tensor-group %d: want a positive number of devices per group", errUsage, g.group)
		}
		return multigpu.Hybrid, nil
	}
	return 0, fmt.Errorf("%w: --split-mode %q: want layer, row (or tensor), hybrid or auto", errUsage, g.mode)
}

// errNoGPUAsked is a request for GPU layers where no GPU can be used.
var errNoGPUAsked = errors.New("GPU layers were asked for, but no GPU can be used")

// options opens the devices and resolves --gpu-layers for the model at
// path; nil when everything stays on the CPU.
func (g *gpuFlags) options(path string, ctx int) (*engine.GPUOptions, error) {
	if g.layers == "" || g.layers == "0" {
		if g.devices != "" {
			return nil, fmt.Errorf("%w: --devices without --gpu-layers", errUsage)
		}
		return nil, nil
	}
	mode, err := g.partition()
	if err != nil {
		return nil, err
	}
	shares, err := parseShares(g.split)
	if err != nil {
		return nil, err
	}
	devs, err := g.open()
	if err != nil {
		return nil, err
	}
	if err := g.checkDevices(mode, len(devs), len(shares)); err != nil {
		device.CloseAll(devs)
		return nil, err
	}
	o := &engine.GPUOptions{Devices: devs, Split: shares, Mode: mode, TensorGroup: g.group, Ctx: ctx}
	if o.Layers, err = g.count(path, ctx, devs, shares); err != nil {
		device.CloseAll(devs)
		return nil, err
	}
	return o, nil
}

// checkDevices holds the device count against --split and hybrid's
// --tensor-group.
func (g *gpuFlags) checkDevices(mode multigpu.Mode, devs, shares int) error {
	if shares > 0 && shares != devs {
		return fmt.Errorf("%w: --split %q: %d shares for %d devices", errUsage, g.split, shares, devs)
	}
	if mode == multigpu.Hybrid && devs%g.group != 0 {
		return fmt.Errorf("%w: --split-mode hybrid: --tensor-group %d does not divide the %d devices", errUsage, g.group, devs)
	}
	return nil
}

func (g *gpuFlags) open() ([]device.Device, error) {
	var devs []device.Device
	var err error
	if g.devices == "" {
		var d device.Device
		if d, err = device.Default(); err == nil {
			devs = []device.Device{d}
		}
	} else {
		devs, err = device.OpenAll(g.devices)
	}
	if errors.Is(err, device.ErrNoDevice) {
		return nil, fmt.Errorf("--gpu-layers %s: %w: %w. Leave out --gpu-layers (or pass 0) to run on the CPU", g.layers, errNoGPUAsked, err)
	}
	return devs, err
}

// count resolves --gpu-layers to a block count (-1: all and the head).
func (g *gpuFlags) count(path string, ctx int, devs []device.Device, shares []float64) (int, error) {
	switch g.layers {
	case "all":
		return -1, nil
	case "auto":
		return g.autoLayers(path, ctx, devs, shares)
	}
	n, err := strconv.Atoi(g.layers)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: --gpu-layers %q: want a number, all or auto", errUsage, g.layers)
	}
	return n, nil
}

func parseShares(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%w: --split %q: want shares such as 3,1", errUsage, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// autoMargin is the free device memory auto leaves unused, besides the
// estimate's own runtime overhead: other processes' allocations and the
// allocator's rounding.
const autoMargin = 0.10

// autoLayers is the most blocks (blocks+1: with the head) whose VRAM
// estimate, the one the Discover screen shows (hub.EstimateMemory), split
// over the devices by the partition and shares asked, fits each device's
// free memory less autoMargin: the load dialog's auto (guiLibrary.autoFit).
func (g *gpuFlags) autoLayers(path string, ctx int, devs []device.Device, shares []float64) (int, error) {
	mode := g.mode
	if mode == "auto" {
		mode = "layer" // every partition holds the same bytes in all; auto's per-device shares are the planner's
	}
	o := ui.LoadOptions{Context: ctx, Split: shares, SplitMode: mode, TensorGroup: g.group, KVType: g.kvType}
	n, err := (&guiLibrary{ctx: ctx}).autoFit(path, o, devs)
	if err != nil {
		return 0, fmt.Errorf("--gpu-layers auto: %w", err)
	}
	return n, nil
}

// readHeader parses a local GGUF file's header (metadata and tensor
// table), reading more of the file while it is cut short.
func readHeader(path string) (*hub.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for size := int64(1 << 20); ; size *= 4 {
		buf := make([]byte, size)
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, err
		}
		h, herr := hub.ParseHeader(buf[:n])
		if herr == nil || !errors.Is(herr, hub.ErrShortHeader) || int64(n) < size {
			return h, herr
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
}
