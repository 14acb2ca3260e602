package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/adrg/xdg"

	"flowchat/assets"
	"flowchat/engine"
	"flowchat/engine/fileio"
	"flowchat/engine/ggml"
	"flowchat/engine/quant"
)

// modelFlags are the flags every model-using command shares.
type modelFlags struct {
	model   string
	spec    string
	threads int
	ctx     int
	mmap    bool
	quant   string // --quant: re-quantize at load
	// requant, when set, is the load-time re-quantization in full (the
	// --type/--output-type/--min-elems of perplexity; it replaces quant).
	requant *quant.Options
	kvType  string // --kv-type
	// kvBudget is --kv-budget: the scheduler's KV cache size ("2G",
	// "512M", bytes); empty: derived from MaxSeqs, the context and free RAM.
	kvBudget string
	parallel int // sequences the scheduler runs at once (serve's --parallel); 0: 8
	// sd is speculative decoding (registerSpec: the commands that
	// generate); load sets it up as the model's default.
	sd  specFlags
	gpu gpuFlags
	log io.Writer // where load's notes go: the command's stderr
}

// registerSpec adds the speculative decoding flags.
func (m *modelFlags) registerSpec(fs *flag.FlagSet) { m.sd.register(fs) }

func (m *modelFlags) register(fs *flag.FlagSet) {
	m.log = fs.Output() // the command's stderr (newFlags sets it)
	fs.StringVar(&m.model, "model", "", "model file (GGUF); default: the bundled demo model")
	fs.StringVar(&m.model, "m", "", "shorthand for --model")
	fs.StringVar(&m.spec, "spec", "", "model spec file to use instead of the builtin one for the file's architecture")
	fs.IntVar(&m.threads, "threads", 0, "threads for the forward pass (default: all cores)")
	fs.IntVar(&m.threads, "t", 0, "shorthand for --threads")
	fs.IntVar(&m.ctx, "ctx", 0, "context length in tokens (default: the model's, at most 4096)")
	fs.IntVar(&m.ctx, "c", 0, "shorthand for --ctx")
	fs.StringVar(&m.quant, "quant", "", "re-quantize the weight matrices at load: an Inferflow level (Q8, Q6, Q5, Q4, Q3H, Q3, Q2, or e.g. Q4_B32) or a GGML type (Q8_0, Q4_0, Q4_K, …)")
	fs.StringVar(&m.kvType, "kv-type", "", "KV cache type: F32, F16 or Q8_0 (default: F32 on the CPU, F16 when layers are offloaded to a GPU)")
	fs.StringVar(&m.kvBudget, "kv-budget", "", "KV cache memory shared by all sequences, e.g. 2G or 512M (default: enough for 8 full contexts, at most half the free RAM)")
	m.gpu.register(fs)
	fs.BoolVar(&m.mmap, "mmap", false, "read weights from the file mapping instead of copying them into huge pages (faster load, slower decode)")
}

func (m *modelFlags) load() (*engine.Model, error) {
	path := m.model
	if path == "" {
		var err error
		if path, err = demoModelPath(); err != nil {
			return nil, err
		}
	}
	threads := m.threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	if err := m.sd.check(); err != nil {
		return nil, err
	}
	opt := engine.LoadOptions{Threads: threads, SpecPath: m.spec, HugePages: !m.mmap}
	var err error
	if opt.KVType, err = parseKVType(m.kvType); err != nil {
		return nil, err
	}
	if opt.Sched.KVBudget, err = parseBytes(m.kvBudget); err != nil {
		return nil, fmt.Errorf("%w: --kv-budget %q: %v", errUsage, m.kvBudget, err)
	}
	opt.Sched.MaxSeqs, opt.Sched.Ctx = m.parallel, m.ctx
	if m.quant != "" {
		if opt.Quant.Type, err = quant.ParseType(m.quant); err != nil {
			return nil, err
		}
		opt.Quant.Threads = threads
	}
	if m.requant != nil {
		opt.Quant = *m.requant
	}
	m.gpu.kvType = m.kvType
	if m.kvType == "" {
		m.gpu.kvType = "F16" // the device cache's default, set below
	}
	if opt.GPU, err = m.gpu.options(path, m.ctx); err != nil {
		return nil, err
	}
	if m.kvType == "" && opt.GPU != nil {
		opt.KVType = ggml.F16 // the device cache's type (issue 15), as llama.cpp's default
	}
	mod, err := engine.Load(path, opt)
	if err == nil && mod.GPUPlan != "" && m.gpu.mode == "auto" {
		w := m.log
		if w == nil {
			w = os.Stderr
		}
		fmt.Fprintf(w, "partition (--split-mode auto): %s\n", mod.GPUPlan)
	}
	if err != nil || !m.sd.on() {
		return mod, err
	}
	if err := m.sd.setup(mod, m, os.Stderr); err != nil {
		mod.Close()
		return nil, err
	}
	return mod, nil
}

// parseBytes reads a size: a number of bytes with an optional K, M, G or
// T suffix (powers of 1024); "" is 0.
func parseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	switch s[len(s)-1] | 0x20 {
	case 'k':
		mult = 1 << 10
	case 'm':
		mult = 1 << 20
	case 'g':
		mult = 1 << 30
	case 't':
		mult = 1 << 40
	}
	num := s
	if mult > 1 {
		num = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<50 {
		return 0, errors.New("want a positive size such as 2G or 512M")
	}
	return int64(v * float64(mult)), nil
}

// parseKVType accepts the KV cache types the engine implements.
func parseKVType(s string) (ggml.Type, error) {
	if s == "" {
		return ggml.F32, nil
	}
	t, ok := ggml.ParseType(s)
	if !ok || (t != ggml.F32 && t != ggml.F16 && t != ggml.Q8_0) {
		return 0, fmt.Errorf("%w: --kv-type %q: want F32, F16 or Q8_0", errUsage, s)
	}
	return t, nil
}

// dataDir is where flowchat keeps models and conversations.
func dataDir() string { return filepath.Join(xdg.DataHome, "flowchat") }

// demoModelPath installs the bundled demo model into the data directory on
// first use (atomically) and returns its path.
func demoModelPath() (string, error) {
	dir := filepath.Join(dataDir(), "models")
	path := filepath.Join(dir, assets.DemoModelName)
	if st, err := os.Stat(path); err == nil && st.Size() == int64(len(assets.DemoModel)) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("installing the demo model: %w", err)
	}
	if err := writeFileAtomic(path, assets.DemoModel); err != nil {
		return "", fmt.Errorf("installing the demo model: %w", err)
	}
	return path, nil
}

// writeFileAtomic writes data so that a crash never leaves a partial file
// at path.
func writeFileAtomic(path string, data []byte) error { return fileio.WriteFile(path, data, 0o644) }

var errNoPrompt = errors.New("--prompt is required")
