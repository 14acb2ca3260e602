package hip

import (
	"fmt"

	"flowchat/native/cuda"
)

// WeightType is native/cuda's: the GGML weight types the matrix kernels read.
type WeightType = cuda.WeightType

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

// run queues l on s; errors name the backend.
func (k *Kernels) run(s *Stream, l cuda.Launch, err error) error {
	if err != nil {
		return fmt.Errorf("hip: %w", err)
	}
	if l.Kernel == "" {
		return k.c.CopyDevice(s, DevicePtr(l.Params[1]), DevicePtr(l.Params[0]), l.Copy)
	}
	f := k.fn[l.Kernel]
	if f == nil {
		return fmt.Errorf("hip: kernel %s not loaded", l.Kernel)
	}
	k.args.Reset()
	for _, v := range l.Params[:l.N] {
		k.args.add(v)
	}
	return k.c.Launch(f, Dim3(l.Grid), Dim3(l.Block), 0, s, &k.args)
}

// The launchers queue one operation each on a stream and return at once
// (native/cuda's launches.go has their shapes).

// MatMul: y[c·rows + r] = Σ_i W[r][i]·x[c·n + i] for rows weight rows of
// type t (n elements each, GGML layout) and cols float32 columns.
func (k *Kernels) MatMul(s *Stream, t WeightType, w, x, y DevicePtr, n, rows, cols int) error {
	l, err := cuda.MatMulLaunch(k.warp, t, uint64(w), uint64(x), uint64(y), n, rows, cols)
	return k.run(s, l, err)
}

// RMSNorm normalizes rows of n floats from x into y (which may be x), with
// the gain g unless g is 0.
func (k *Kernels) RMSNorm(s *Stream, x, g, y DevicePtr, n, rows int, eps float32) error {
	return k.run(s, cuda.RMSNormLaunch(uint64(x), uint64(g), uint64(y), n, rows, eps), nil)
}

// RoPE rotates, in place, nHeads heads of headDim floats in each of tokens
// rows of rowStride floats at x, for the int32 positions at pos.
func (k *Kernels) RoPE(s *Stream, x, pos DevicePtr, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	return k.run(s, cuda.RoPELaunch(uint64(x), uint64(pos), tokens, rowStride, nHeads, headDim, nRot, base, freqScale, neox), nil)
}

// SiLUMul sets h = silu(g)·u over n floats.
func (k *Kernels) SiLUMul(s *Stream, h, g, u DevicePtr, n int) error {
	return k.run(s, cuda.SiLUMulLaunch(uint64(h), uint64(g), uint64(u), n), nil)
}

// Add sets y += x over n floats (the residual connection).
func (k *Kernels) Add(s *Stream, y, x DevicePtr, n int) error {
	return k.run(s, cuda.AddLaunch(uint64(y), uint64(x), n), nil)
}

// Softmax normalizes rows of n floats in place.
func (k *Kernels) Softmax(s *Stream, x DevicePtr, n, rows int) error {
	return k.run(s, cuda.SoftmaxLaunch(uint64(x), n, rows), nil)
}

// AttnDecode is one query token's attention over nKV cached positions
// of a cache of type t, F32, F16 or Q8_0 (see attn.cu); scratch holds
// nHead·nKV floats.
func (k *Kernels) AttnDecode(s *Stream, t WeightType, q, kc, vc, scratch, out DevicePtr, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	l, err := cuda.AttnDecodeLaunch(t, uint64(q), uint64(kc), uint64(vc), uint64(scratch), uint64(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	return k.run(s, l, err)
}

// StoreKV writes n floats from x into a KV cache of type t at y: a device
// copy for F32, kv_store_f16's rounding for F16, kv_store_q8_0's blocks
// for Q8_0.
func (k *Kernels) StoreKV(s *Stream, t WeightType, x, y DevicePtr, n int) error {
	l, err := cuda.StoreKVLaunch(t, uint64(x), uint64(y), n)
	return k.run(s, l, err)
}

// AttnSplit is one query token's attention split over chunks of keys with
// a unified max (native/cuda's AttnSplitLaunches): phi holds nHead floats
// (NaN to start), scratch cuda.AttnSplitScratch(nHead, nKV, headDim).
func (k *Kernels) AttnSplit(s *Stream, t WeightType, q, kc, vc, phi, scratch, out DevicePtr, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	ls, err := cuda.AttnSplitLaunches(t, uint64(q), uint64(kc), uint64(vc), uint64(phi), uint64(scratch), uint64(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	if err == nil {
		err = k.run(s, ls[0], nil)
	}
	return k.run(s, ls[1], err)
}

// AttnPrefill is the causal attention of nTok query rows over the cache
// (native/cuda's AttnPrefillLaunch).
func (k *Kernels) AttnPrefill(s *Stream, t WeightType, q, kc, vc, out DevicePtr, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	l, err := cuda.AttnPrefillLaunch(t, uint64(q), uint64(kc), uint64(vc), uint64(out), nTok, nPast, headDim, nHead, nKVHead, kvStride, scale)
	return k.run(s, l, err)
}

// Argmax writes the index of each row's largest float (the lowest on
// ties) as int32s at y (native/cuda's ArgmaxLaunch).
func (k *Kernels) Argmax(s *Stream, x, y DevicePtr, n, rows int) error {
	return k.run(s, cuda.ArgmaxLaunch(uint64(x), uint64(y), n, rows), nil)
}
