package cuda

import (
	"fmt"
	"math"
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
		img, err := cache.Compile(n, src, c.Arch())
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
	for _, m := range k.mods {
		k.c.UnloadModule(m)
	}
	k.mods = nil
}

// Function returns a loaded kernel by name, for occupancy queries.
func (k *Kernels) Function(name string) *Function { return k.fn[name] }

func (k *Kernels) launch(name string, grid, block Dim3, s *Stream) error {
	f := k.fn[name]
	if f == nil {
		return fmt.Errorf("cuda: kernel %s not loaded", name)
	}
	return k.c.Launch(f, grid, block, 0, s, &k.args)
}

// cudaWarp is FC_WARP_SIZE for NVIDIA devices.
const cudaWarp = 32

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// MatMul: y[c·rows + r] = Σ_i W[r][i]·x[c·n + i] for rows weight rows of
// type t (n elements each, GGML layout) and cols float32 columns.
func (k *Kernels) MatMul(s *Stream, t WeightType, w, x, y DevicePtr, n, rows, cols int) error {
	if n%t.BlockSize() != 0 {
		return fmt.Errorf("cuda: %v row of %d elements is not whole blocks", t, n)
	}
	k.args.Reset().Ptr(w).Ptr(x).Ptr(y).I32(n).I32(rows).I32(cols)
	return k.launch(t.Kernel(), Dim3{X: ceilDiv(rows, mmWarps), Y: ceilDiv(cols, mmMaxCols)}, Dim3{X: k.warp, Y: mmWarps}, s)
}

// RMSNorm normalizes rows of n floats from x into y (which may be x), with
// the gain g unless g is 0.
func (k *Kernels) RMSNorm(s *Stream, x, g, y DevicePtr, n, rows int, eps float32) error {
	k.args.Reset().Ptr(x).Ptr(g).Ptr(y).I32(n).F32(eps)
	return k.launch("rms_norm_f32", Dim3{X: rows}, Dim3{X: normThreads}, s)
}

// RoPE rotates, in place, nHeads heads of headDim floats in each of tokens
// rows of rowStride floats at x, for the int32 positions at pos.
func (k *Kernels) RoPE(s *Stream, x, pos DevicePtr, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	neoxArg := 0
	if neox {
		neoxArg = 1
	}
	k.args.Reset().Ptr(x).Ptr(pos).I32(rowStride).I32(headDim).I32(nRot).
		F32(ropeThetaScale(base, nRot)).F32(freqScale).I32(neoxArg)
	return k.launch("rope_f32", Dim3{X: nHeads, Y: tokens}, Dim3{X: ropeThreads}, s)
}

// ropeThetaScale is the factor between consecutive rotation frequencies,
// base^(−2/nRot), as rope_f32 takes it.
func ropeThetaScale(base float64, nRot int) float32 { return float32(math.Pow(base, -2/float64(nRot))) }

// SiLUMul sets h = silu(g)·u over n floats.
func (k *Kernels) SiLUMul(s *Stream, h, g, u DevicePtr, n int) error {
	k.args.Reset().Ptr(h).Ptr(g).Ptr(u).I32(n)
	return k.launch("silu_mul_f32", Dim3{X: min(ceilDiv(n, actThreads), 65535)}, Dim3{X: actThreads}, s)
}

// Add sets y += x over n floats (the residual connection).
func (k *Kernels) Add(s *Stream, y, x DevicePtr, n int) error {
	k.args.Reset().Ptr(y).Ptr(x).I32(n)
	return k.launch("add_f32", Dim3{X: min(ceilDiv(n, actThreads), 65535)}, Dim3{X: actThreads}, s)
}

// Softmax normalizes rows of n floats in place.
func (k *Kernels) Softmax(s *Stream, x DevicePtr, n, rows int) error {
	k.args.Reset().Ptr(x).I32(n)
	return k.launch("softmax_f32", Dim3{X: rows}, Dim3{X: actThreads}, s)
}

// AttnDecode is one query token's attention over nKV cached positions
// of a cache of type t, F32, F16 or Q8_0 (see attn.cu); scratch holds
// nHead·nKV floats.
func (k *Kernels) AttnDecode(s *Stream, t WeightType, q, kc, vc, scratch, out DevicePtr, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	if nKVHead <= 0 || nHead%nKVHead != 0 {
		return fmt.Errorf("cuda: %d query heads over %d KV heads", nHead, nKVHead)
	}
	name, _, ok := KVKernels(t)
	if !ok {
		return fmt.Errorf("cuda: no attention kernel for a %v KV cache", t)
	}
	if !KVWhole(t, headDim, kvStride) {
		return fmt.Errorf("cuda: %v KV rows of %d with heads of %d are not whole blocks", t, kvStride, headDim)
	}
	k.args.Reset().Ptr(q).Ptr(kc).Ptr(vc).Ptr(scratch).Ptr(out).
		I32(nKV).I32(headDim).I32(nHead).I32(nKVHead).I32(kvStride).F32(scale)
	return k.launch(name, Dim3{X: nHead}, Dim3{X: attnThreads}, s)
}

// StoreKV writes n floats from x into a KV cache of type t at y: a device
// copy for F32, kv_store_f16's rounding for F16, kv_store_q8_0's blocks
// for Q8_0.
func (k *Kernels) StoreKV(s *Stream, t WeightType, x, y DevicePtr, n int) error {
	_, name, ok := KVKernels(t)
	switch {
	case !ok:
		return fmt.Errorf("cuda: no KV cache of %v", t)
	case !KVWhole(t, n):
		return fmt.Errorf("cuda: %d floats are not whole %v blocks", n, t)
	case name == "":
		return k.c.CopyDevice(s, y, x, 4*n)
	}
	k.args.Reset().Ptr(x).Ptr(y).I32(n)
	return k.launch(name, Dim3{X: min(ceilDiv(n, attnThreads), 65535)}, Dim3{X: attnThreads}, s)
}
