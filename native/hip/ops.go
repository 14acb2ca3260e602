package hip

import (
	"fmt"
	"math"

	"flowchat/native/cuda"
)

// WeightType is native/cuda's: the GGML weight types the matrix kernels read.
type WeightType = cuda.WeightType

// The launch constants of kernels/*.cu (the #defines named beside them;
// TestLaunchConstants reads the sources to keep them equal). Block sizes
// are multiples of both wavefront sizes, so every kernel runs unchanged
// at 32 and 64.
const (
	mmWarps     = 4   // MM_WARPS: weight rows (one per wavefront) per block
	mmMaxCols   = 8   // MM_MAX_COLS: activation columns per block
	normThreads = 256 // NORM_THREADS
	ropeThreads = 64  // ROPE_THREADS
	actThreads  = 256 // ACT_THREADS
	attnThreads = 128 // ATTN_THREADS
)

// Kernels is every kernel loaded for one device, with one launcher per
// operation, as native/cuda's Kernels: launchers queue work on a stream,
// must run inside the context's Do, and share one Args (not safe for
// concurrent use). The block of the matrix kernels is (wavefront, 4):
// 64 × 4 on gfx9, 32 × 4 on RDNA.
type Kernels struct {
	c    *Context
	mods []*Module
	fn   map[string]*Function
	args Args
	warp int
}

// LoadKernels compiles (or takes from cache) every kernel source for the
// device's target and loads them. Call inside c.Do.
func (c *Context) LoadKernels(n *HIPRTC, cache *Cache) (*Kernels, error) {
	if c.Arch() == "" {
		return nil, fmt.Errorf("hip: device %d reports no gcnArchName: %w", c.ordinal, ErrNotSupported)
	}
	warp := WavefrontSize(c.Arch())
	if c.Device.WarpSize != warp { // FC_WARP_SIZE comes from the target's default
		return nil, fmt.Errorf("hip: device wavefront %d, kernels for %s built for %d", c.Device.WarpSize, c.Arch(), warp)
	}
	k := &Kernels{c: c, fn: map[string]*Function{}, warp: warp}
	for _, src := range KernelSources() {
		if err := k.load(n, cache, src); err != nil {
			k.Unload()
			return nil, err
		}
	}
	return k, nil
}

func (k *Kernels) load(n *HIPRTC, cache *Cache, src Source) error {
	img, err := cache.Compile(n, src, k.c.Arch())
	if err != nil {
		return err
	}
	m, err := k.c.LoadModule(img)
	if err != nil {
		return fmt.Errorf("hip: load %s for %s: %w", src.Name, img.Arch, err)
	}
	k.mods = append(k.mods, m)
	for _, name := range kernelNames(src) {
		f, err := k.c.Function(m, name)
		if err != nil {
			return err
		}
		k.fn[name] = f
	}
	return nil
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
		return fmt.Errorf("hip: kernel %s not loaded", name)
	}
	return k.c.Launch(f, grid, block, 0, s, &k.args)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// MatMul: y[c·rows + r] = Σ_i W[r][i]·x[c·n + i] for rows weight rows of
// type t (n elements each, GGML layout) and cols float32 columns.
func (k *Kernels) MatMul(s *Stream, t WeightType, w, x, y DevicePtr, n, rows, cols int) error {
	if n%t.BlockSize() != 0 {
		return fmt.Errorf("hip: %v row of %d elements is not whole blocks", t, n)
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
		F32(float32(math.Pow(base, -2/float64(nRot)))).F32(freqScale).I32(neoxArg)
	return k.launch("rope_f32", Dim3{X: nHeads, Y: tokens}, Dim3{X: ropeThreads}, s)
}

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
		return fmt.Errorf("hip: %d query heads over %d KV heads", nHead, nKVHead)
	}
	name, _, ok := cuda.KVKernels(t)
	if !ok {
		return fmt.Errorf("hip: no attention kernel for a %v KV cache", t)
	}
	if !cuda.KVWhole(t, headDim, kvStride) {
		return fmt.Errorf("hip: %v KV rows of %d with heads of %d are not whole blocks", t, kvStride, headDim)
	}
	k.args.Reset().Ptr(q).Ptr(kc).Ptr(vc).Ptr(scratch).Ptr(out).
		I32(nKV).I32(headDim).I32(nHead).I32(nKVHead).I32(kvStride).F32(scale)
	return k.launch(name, Dim3{X: nHead}, Dim3{X: attnThreads}, s)
}

// StoreKV writes n floats from x into a KV cache of type t at y: a device
// copy for F32, kv_store_f16's rounding for F16, kv_store_q8_0's blocks
// for Q8_0.
func (k *Kernels) StoreKV(s *Stream, t WeightType, x, y DevicePtr, n int) error {
	_, name, ok := cuda.KVKernels(t)
	switch {
	case !ok:
		return fmt.Errorf("hip: no KV cache of %v", t)
	case !cuda.KVWhole(t, n):
		return fmt.Errorf("hip: %d floats are not whole %v blocks", n, t)
	case name == "":
		return k.c.CopyDevice(s, y, x, 4*n)
	}
	k.args.Reset().Ptr(x).Ptr(y).I32(n)
	return k.launch(name, Dim3{X: min(ceilDiv(n, attnThreads), 65535)}, Dim3{X: attnThreads}, s)
}
