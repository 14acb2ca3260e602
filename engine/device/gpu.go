package device

import (
	"fmt"

	"flowchat/native/cuda"
	"flowchat/native/hip"
)

// gpu is a Device over one of the native packages (native/cuda, native/hip):
// their contexts and kernel launchers have the same methods over their own
// pointer (P), stream (S), event (E) and context (C) types, so one adapter
// serves both. It runs the layer operations on one stream of the device;
// every call enters the context (Do: current on a locked OS thread).
// Writes go through a pinned staging buffer with an async copy (the call
// returns while the copy runs; an event guards the buffer's reuse), and
// copies to another device of the same backend go peer to peer where the
// devices allow it, else through pinned host memory, ordered by events
// on the two streams without the host waiting (copy.go).
type gpu[P ~uint64, S, E any, C comparable] struct {
	name string
	ctx  nativeContext[P, S, E, C]
	self C // ctx as the native type, for the peer calls
	k    nativeKernels[P, S]
	s    *S

	// copy.go's state: pinned staging (Write's, Read's, and copies from
	// other devices through the host), the events that order them, and
	// peer access by the source device's context.
	wstage, rstage, xstage []byte
	wrote, ready, moved    *E // after a Write's async copy; a source's bytes ready; a copy into d done
	peers                  map[C]bool
}

// nativeContext is what the adapter uses of cuda.Context and hip.Context.
type nativeContext[P ~uint64, S, E any, C comparable] interface {
	Do(fn func() error) error
	Close() error
	MemInfo() (free, total uint64, err error)
	Alloc(bytes int) (P, error)
	Free(p P) error
	NewStream() (*S, error)
	DestroyStream(s *S) error
	SyncStream(s *S) error
	CopyToDevice(s *S, dst P, src []byte) error
	CopyToHost(s *S, dst []byte, src P) error
	CopyDevice(s *S, dst, src P, n int) error

	NewEvent(timing bool) (*E, error)
	DestroyEvent(e *E) error
	Record(e *E, s *S) error
	SyncEvent(e *E) error
	WaitEvent(s *S, e *E) error
	AllocPinned(bytes int) ([]byte, error)
	FreePinned(b []byte) error
	CanAccessPeer(peer C) (bool, error)
	EnablePeerAccess(peer C) error
	CopyPeer(s *S, dst P, srcCtx C, src P, n int) error
}

// nativeKernels is what the adapter uses of cuda.Kernels and hip.Kernels:
// the launchers, whose shapes are documented there.
type nativeKernels[P ~uint64, S any] interface {
	Unload()
	MatMul(s *S, t WeightType, w, x, y P, n, rows, cols int) error
	RMSNorm(s *S, x, g, y P, n, rows int, eps float32) error
	RoPE(s *S, x, pos P, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error
	SiLUMul(s *S, h, g, u P, n int) error
	Add(s *S, y, x P, n int) error
	StoreKV(s *S, t WeightType, x, y P, n int) error
	AttnDecode(s *S, t WeightType, q, kc, vc, scratch, out P, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error
}

// OpenCUDA opens CUDA device ordinal and compiles (or takes from the
// kernel cache) every kernel for it. Errors wrap ErrNoDevice when CUDA is
// not usable here, and say why.
func OpenCUDA(ordinal int) (Device, error) {
	ctx, err := cuda.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: CUDA: %w", ErrNoDevice, err)
	}
	name := fmt.Sprintf("cuda:%d (%s)", ctx.Device.Ordinal, ctx.Device.Name)
	return openGPU[cuda.DevicePtr, cuda.Stream, cuda.Event](name, ctx, func() (nativeKernels[cuda.DevicePtr, cuda.Stream], error) {
		n, err := cuda.LoadNVRTC()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoDevice, err)
		}
		k, err := ctx.LoadKernels(n, cuda.NewCache(cuda.DefaultCacheDir()))
		if err == nil {
			useCUBLAS(k)
		}
		return k, err
	}, fmt.Sprintf("CUDA device %d", ordinal))
}

// OpenHIP opens HIP device ordinal and compiles (or takes from the kernel
// cache) every kernel for it. Errors wrap ErrNoDevice when ROCm is not
// usable here, and say why.
func OpenHIP(ordinal int) (Device, error) {
	ctx, err := hip.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: ROCm: %w", ErrNoDevice, err)
	}
	name := fmt.Sprintf("hip:%d (%s)", ctx.Device.Ordinal, ctx.Device.Name)
	return openGPU[hip.DevicePtr, hip.Stream, hip.Event](name, ctx, func() (nativeKernels[hip.DevicePtr, hip.Stream], error) {
		n, err := hip.LoadHIPRTC()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoDevice, err)
		}
		return ctx.LoadKernels(n, hip.NewCache(hip.DefaultCacheDir()))
	}, fmt.Sprintf("HIP device %d", ordinal))
}

// openGPU loads the kernels (inside the context) and makes the stream;
// on failure it closes ctx and the error starts with what.
func openGPU[P ~uint64, S, E any, C interface {
	comparable
	nativeContext[P, S, E, C]
}](name string, ctx C, load func() (nativeKernels[P, S], error), what string) (Device, error) {
	d := &gpu[P, S, E, C]{name: name, ctx: ctx, self: ctx}
	err := ctx.Do(func() (err error) {
		if d.k, err = load(); err != nil {
			return err
		}
		if d.s, err = ctx.NewStream(); err != nil {
			return err
		}
		return d.openCopies()
	})
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return d, nil
}

func (d *gpu[P, S, E, C]) Name() string { return d.name }

func (d *gpu[P, S, E, C]) Close() error {
	d.ctx.Do(func() error {
		d.k.Unload()
		d.closeCopies()
		return d.ctx.DestroyStream(d.s)
	})
	return d.ctx.Close()
}

func (d *gpu[P, S, E, C]) MemInfo() (free, total uint64, err error) {
	err = d.ctx.Do(func() error {
		free, total, err = d.ctx.MemInfo()
		return err
	})
	return free, total, err
}

func (d *gpu[P, S, E, C]) Alloc(bytes int) (Mem, error) {
	var p P
	err := d.ctx.Do(func() (err error) {
		p, err = d.ctx.Alloc(max(bytes, 4))
		return err
	})
	if err != nil {
		return Mem{}, fmt.Errorf("%s: %d bytes: %w (%w)", d.Name(), bytes, ErrOutOfMemory, err)
	}
	return Mem{h: uint64(p), n: bytes}, nil
}

func (d *gpu[P, S, E, C]) Free(m Mem) {
	if m.off == 0 && m.h != 0 {
		d.ctx.Do(func() error { return d.ctx.Free(P(m.h)) })
	}
}

// at is m's device address.
func at[P ~uint64](m Mem) P {
	if m.n == 0 {
		return 0
	}
	return P(m.h + uint64(m.off))
}

func (d *gpu[P, S, E, C]) Copy(dst, src Mem) error {
	if dst.n != src.n {
		panic(fmt.Sprintf("device: copy of %d bytes into %d", src.n, dst.n))
	}
	return d.ctx.Do(func() error { return d.ctx.CopyDevice(d.s, at[P](dst), at[P](src), src.n) })
}

func (d *gpu[P, S, E, C]) MatMul(t WeightType, w, x, y Mem, n, rows, cols int) error {
	return d.ctx.Do(func() error { return d.k.MatMul(d.s, t, at[P](w), at[P](x), at[P](y), n, rows, cols) })
}

func (d *gpu[P, S, E, C]) RMSNorm(x, g, y Mem, n, rows int, eps float32) error {
	return d.ctx.Do(func() error { return d.k.RMSNorm(d.s, at[P](x), at[P](g), at[P](y), n, rows, eps) })
}

func (d *gpu[P, S, E, C]) RoPE(x, pos Mem, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	return d.ctx.Do(func() error {
		return d.k.RoPE(d.s, at[P](x), at[P](pos), tokens, rowStride, nHeads, headDim, nRot, base, freqScale, neox)
	})
}

func (d *gpu[P, S, E, C]) SiLUMul(h, g, u Mem, n int) error {
	return d.ctx.Do(func() error { return d.k.SiLUMul(d.s, at[P](h), at[P](g), at[P](u), n) })
}

func (d *gpu[P, S, E, C]) Add(y, x Mem, n int) error {
	return d.ctx.Do(func() error { return d.k.Add(d.s, at[P](y), at[P](x), n) })
}

func (d *gpu[P, S, E, C]) StoreKV(kv WeightType, x, y Mem, n int) error {
	return d.ctx.Do(func() error { return d.k.StoreKV(d.s, kv, at[P](x), at[P](y), n) })
}

func (d *gpu[P, S, E, C]) Attn(kv WeightType, q, k, v, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	return d.ctx.Do(func() error {
		return d.k.AttnDecode(d.s, kv, at[P](q), at[P](k), at[P](v), at[P](scratch), at[P](out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	})
}

// attnKernels is what the adapter uses of the native launchers' split
// decode and tiled prefill (attnlaunch.go in native/cuda).
type attnKernels[P ~uint64, S any] interface {
	AttnSplit(s *S, t WeightType, q, kc, vc, phi, scratch, out P, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error
	AttnPrefill(s *S, t WeightType, q, kc, vc, out P, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error
}

var (
	_ attnKernels[cuda.DevicePtr, cuda.Stream] = (*cuda.Kernels)(nil)
	_ attnKernels[hip.DevicePtr, hip.Stream]   = (*hip.Kernels)(nil)
	_ Attention                                = (*gpu[cuda.DevicePtr, cuda.Stream, cuda.Event, *cuda.Context])(nil)
)

// attn is the launchers' attention kernels (both native packages have them).
func (d *gpu[P, S, E, C]) attn() attnKernels[P, S] { return d.k.(attnKernels[P, S]) }

func (d *gpu[P, S, E, C]) AttnSplit(kv WeightType, q, k, v, phi, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	return d.ctx.Do(func() error {
		return d.attn().AttnSplit(d.s, kv, at[P](q), at[P](k), at[P](v), at[P](phi), at[P](scratch), at[P](out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	})
}

func (d *gpu[P, S, E, C]) AttnPrefill(kv WeightType, q, k, v, out Mem, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	return d.ctx.Do(func() error {
		return d.attn().AttnPrefill(d.s, kv, at[P](q), at[P](k), at[P](v), at[P](out), nTok, nPast, headDim, nHead, nKVHead, kvStride, scale)
	})
}

// argmaxKernels is the native launchers' greedy argmax.
type argmaxKernels[P ~uint64, S any] interface {
	Argmax(s *S, x, y P, n, rows int) error
}

var (
	_ argmaxKernels[cuda.DevicePtr, cuda.Stream] = (*cuda.Kernels)(nil)
	_ argmaxKernels[hip.DevicePtr, hip.Stream]   = (*hip.Kernels)(nil)
	_ Argmaxer                                   = (*gpu[cuda.DevicePtr, cuda.Stream, cuda.Event, *cuda.Context])(nil)
)

func (d *gpu[P, S, E, C]) Argmax(x, out Mem, n, rows int) error {
	return d.ctx.Do(func() error { return d.k.(argmaxKernels[P, S]).Argmax(d.s, at[P](x), at[P](out), n, rows) })
}

// useCUBLAS gives k cuBLAS for prefill-shaped products where a libcublas
// loads (cuda.LoadCUBLAS; $FLOWCHAT_CUBLAS=off for none). Without it, or
// when it fails to start, k keeps its tiled kernels: never an error.
func useCUBLAS(k *cuda.Kernels) {
	if lib, err := cuda.LoadCUBLAS(); err == nil {
		k.UseCUBLAS(lib)
	}
}
