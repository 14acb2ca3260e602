package cuda

import (
	"fmt"
	"os"
	"strconv"
)

// Kernels is every kernel of kernels/*.cu loaded into one context, with a
// launcher per operation that fixes the grid and block shapes the kernel
// sources document. Launchers queue work on a stream and return at once;
// they must run inside the context's Do and are not safe for concurrent
// use (they share one Args).
type Kernels struct {
	c    *Context
	mods []*Module
	fn   map[string]*Function
	args Args
	warp int
	blas *blas // nil: no cuBLAS (cublas.go)
}

// kernelDefines are the preprocessor options matmul.cu is compiled with,
// for measuring: FLOWCHAT_MM_UNROLL (1–16) sets MM_UNROLL, the chunks a
// lane of the matvec loads at once, and FLOWCHAT_MM_UNITS_UNROLL the unit
// kernels' unroll; unset, the source's defaults. Any value gives the same
// results (matmul.cu).
var kernelDefines = func() []string {
	var d []string
	for _, v := range [][2]string{{"FLOWCHAT_MM_UNROLL", "MM_UNROLL"}, {"FLOWCHAT_MM_UNITS_UNROLL", "MM_UNITS_UNROLL"}} {
		if u, err := strconv.Atoi(os.Getenv(v[0])); err == nil && u >= 1 && u <= 16 {
			d = append(d, "-D"+v[1]+"="+strconv.Itoa(u))
		}
	}
	return d
}()

// sourceDefines is kernelDefines for matmul.cu, the one source that reads
// them, and nothing for the others (whose cached images then stay valid
// whatever the variables say).
func sourceDefines(src Source) []string {
	if src.Name == "matmul.cu" {
		return kernelDefines
	}
	return nil
}

// LoadKernels compiles (or takes from cache) every kernel source for the
// context's device and loads them. Call inside c.Do.
func (c *Context) LoadKernels(n *NVRTC, cache *Cache) (*Kernels, error) {
	warp, err := c.Attribute(attrWarpSize)
	if err != nil {
		return nil, err
	}
	if warp != cudaWarp { // the sources are compiled with FC_WARP_SIZE 32
		return nil, fmt.Errorf("cuda: device warp size %d, kernels built for %d", warp, cudaWarp)
	}
	k := &Kernels{c: c, fn: map[string]*Function{}, warp: warp}
	for _, src := range KernelSources() {
		img, err := cache.Compile(n, src, c.Arch(), sourceDefines(src)...)
		if err != nil {
			k.Unload()
			return nil, err
		}
		m, err := c.LoadModule(img)
		if err != nil {
			k.Unload()
			return nil, fmt.Errorf("cuda: load %s (%v for sm_%d): %w", src.Name, img.Kind, img.Arch, err)
		}
		k.mods = append(k.mods, m)
		for _, name := range kernelNames(src) {
			f, err := c.Function(m, name)
			if err != nil {
				k.Unload()
				return nil, err
			}
			k.fn[name] = f
		}
	}
	return k, nil
}

// Unload releases the modules.
func (k *Kernels) Unload() {
	if k.blas != nil {
		k.blas.free(k.c)
		k.blas = nil
	}
	for _, m := range k.mods {
		k.c.UnloadModule(m)
	}
	k.mods = nil
}

// Function returns a loaded kernel by name, for occupancy queries.
func (k *Kernels) Function(name string) *Function { return k.fn[name] }

// run queues l on s; errors name the backend.
func (k *Kernels) run(s *Stream, l Launch, err error) error {
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	if l.Kernel == "" {
		return k.c.CopyDevice(s, DevicePtr(l.Params[1]), DevicePtr(l.Params[0]), l.Copy)
	}
	f := k.fn[l.Kernel]
	if f == nil {
		return fmt.Errorf("cuda: kernel %s not loaded", l.Kernel)
	}
	k.args.Reset()
	for _, v := range l.Params[:l.N] {
		k.args.add(v)
	}
	return k.c.Launch(f, l.Grid, l.Block, 0, s, &k.args)
}

// cudaWarp is FC_WARP_SIZE for NVIDIA devices.
const cudaWarp = 32

// The launchers queue one operation each on a stream and return at once
// (launches.go has their shapes).

// MatMul: y[c·rows + r] = Σ_i W[r][i]·x[c·n + i] for rows weight rows of
// type t (n elements each, GGML layout) and cols float32 columns: the
// matvec or the tiled kernels (MatMulTiled), or cuBLAS for the tiled
// shapes after UseCUBLAS.
func (k *Kernels) MatMul(s *Stream, t WeightType, w, x, y DevicePtr, n, rows, cols int) error {
	if k.blas != nil && MatMulTiled(cols) {
		return k.matMulBLAS(s, t, w, x, y, n, rows, cols)
	}
	l, err := MatMulLaunch(k.warp, t, uint64(w), uint64(x), uint64(y), n, rows, cols)
	return k.run(s, l, err)
}

// RMSNorm normalizes rows of n floats from x into y (which may be x), with
// the gain g unless g is 0.
func (k *Kernels) RMSNorm(s *Stream, x, g, y DevicePtr, n, rows int, eps float32) error {
	return k.run(s, RMSNormLaunch(uint64(x), uint64(g), uint64(y), n, rows, eps), nil)
}

// RoPE rotates, in place, nHeads heads of headDim floats in each of tokens
// rows of rowStride floats at x, for the int32 positions at pos.
func (k *Kernels) RoPE(s *Stream, x, pos DevicePtr, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	return k.run(s, RoPELaunch(uint64(x), uint64(pos), tokens, rowStride, nHeads, headDim, nRot, base, freqScale, neox), nil)
}

// SiLUMul sets h = silu(g)·u over n floats.
func (k *Kernels) SiLUMul(s *Stream, h, g, u DevicePtr, n int) error {
	return k.run(s, SiLUMulLaunch(uint64(h), uint64(g), uint64(u), n), nil)
}

// Add sets y += x over n floats (the residual connection).
func (k *Kernels) Add(s *Stream, y, x DevicePtr, n int) error {
	return k.run(s, AddLaunch(uint64(y), uint64(x), n), nil)
}

// Softmax normalizes rows of n floats in place.
func (k *Kernels) Softmax(s *Stream, x DevicePtr, n, rows int) error {
	return k.run(s, SoftmaxLaunch(uint64(x), n, rows), nil)
}

// AttnDecode is one query token's attention over nKV cached positions
// of a cache of type t, F32, F16 or Q8_0 (see attn.cu); scratch holds
// nHead·nKV floats.
func (k *Kernels) AttnDecode(s *Stream, t WeightType, q, kc, vc, scratch, out DevicePtr, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	l, err := AttnDecodeLaunch(t, uint64(q), uint64(kc), uint64(vc), uint64(scratch), uint64(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	return k.run(s, l, err)
}

// StoreKV writes n floats from x into a KV cache of type t at y: a device
// copy for F32, kv_store_f16's rounding for F16, kv_store_q8_0's blocks
// for Q8_0.
func (k *Kernels) StoreKV(s *Stream, t WeightType, x, y DevicePtr, n int) error {
	l, err := StoreKVLaunch(t, uint64(x), uint64(y), n)
	return k.run(s, l, err)
}
