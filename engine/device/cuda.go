package device

import (
	"fmt"

	"flowchat/native/cuda"
)

// cudaDevice runs the layer operations with native/cuda's kernels on one
// stream of the device's primary context. Every call enters the context
// (Context.Do: current on a locked OS thread).
type cudaDevice struct {
	ctx *cuda.Context
	k   *cuda.Kernels
	s   *cuda.Stream
}

// OpenCUDA opens CUDA device ordinal and compiles (or takes from the
// kernel cache) every kernel for it. Errors wrap ErrNoDevice when CUDA is
// not usable here, and say why.
func OpenCUDA(ordinal int) (Device, error) {
	ctx, err := cuda.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: CUDA: %w", ErrNoDevice, err)
	}
	d := &cudaDevice{ctx: ctx}
	err = ctx.Do(func() error {
		n, err := cuda.LoadNVRTC()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNoDevice, err)
		}
		if d.k, err = ctx.LoadKernels(n, cuda.NewCache(cuda.DefaultCacheDir())); err != nil {
			return err
		}
		d.s, err = ctx.NewStream()
		return err
	})
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("CUDA device %d: %w", ordinal, err)
	}
	return d, nil
}

func (d *cudaDevice) Name() string {
	return fmt.Sprintf("cuda:%d (%s)", d.ctx.Device.Ordinal, d.ctx.Device.Name)
}

func (d *cudaDevice) Close() error {
	d.ctx.Do(func() error {
		d.k.Unload()
		return d.ctx.DestroyStream(d.s)
	})
	return d.ctx.Close()
}

func (d *cudaDevice) MemInfo() (free, total uint64, err error) {
	err = d.ctx.Do(func() error {
		free, total, err = d.ctx.MemInfo()
		return err
	})
	return free, total, err
}

func (d *cudaDevice) Alloc(bytes int) (Mem, error) {
	var p cuda.DevicePtr
	err := d.ctx.Do(func() (err error) {
		p, err = d.ctx.Alloc(max(bytes, 4))
		return err
	})
	if err != nil {
		return Mem{}, fmt.Errorf("%s: %d bytes: %w (%w)", d.Name(), bytes, ErrOutOfMemory, err)
	}
	return Mem{h: uint64(p), n: bytes}, nil
}

func (d *cudaDevice) Free(m Mem) {
	if m.off == 0 && m.h != 0 {
		d.ctx.Do(func() error { return d.ctx.Free(cuda.DevicePtr(m.h)) })
	}
}

// ptr is m's device address.
func ptr(m Mem) cuda.DevicePtr {
	if m.n == 0 {
		return 0
	}
	return cuda.DevicePtr(m.h + uint64(m.off))
}

func (d *cudaDevice) Write(dst Mem, src []byte) error {
	return d.ctx.Do(func() error { return d.ctx.CopyToDevice(d.s, ptr(dst), src[:dst.n]) })
}

func (d *cudaDevice) Read(dst []byte, src Mem) error {
	return d.ctx.Do(func() error {
		if err := d.ctx.CopyToHost(d.s, dst[:src.n], ptr(src)); err != nil {
			return err
		}
		return d.ctx.SyncStream(d.s)
	})
}

func (d *cudaDevice) Copy(dst, src Mem) error {
	if dst.n != src.n {
		panic(fmt.Sprintf("device: copy of %d bytes into %d", src.n, dst.n))
	}
	return d.ctx.Do(func() error { return d.ctx.CopyDevice(d.s, ptr(dst), ptr(src), src.n) })
}

func (d *cudaDevice) do(fn func() error) error { return d.ctx.Do(fn) }

func (d *cudaDevice) MatMul(t WeightType, w, x, y Mem, n, rows, cols int) error {
	return d.do(func() error { return d.k.MatMul(d.s, t, ptr(w), ptr(x), ptr(y), n, rows, cols) })
}

func (d *cudaDevice) RMSNorm(x, g, y Mem, n, rows int, eps float32) error {
	return d.do(func() error { return d.k.RMSNorm(d.s, ptr(x), ptr(g), ptr(y), n, rows, eps) })
}

func (d *cudaDevice) RoPE(x, pos Mem, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	return d.do(func() error {
		return d.k.RoPE(d.s, ptr(x), ptr(pos), tokens, rowStride, nHeads, headDim, nRot, base, freqScale, neox)
	})
}

func (d *cudaDevice) SiLUMul(h, g, u Mem, n int) error {
	return d.do(func() error { return d.k.SiLUMul(d.s, ptr(h), ptr(g), ptr(u), n) })
}

func (d *cudaDevice) Add(y, x Mem, n int) error {
	return d.do(func() error { return d.k.Add(d.s, ptr(y), ptr(x), n) })
}

func (d *cudaDevice) Attn(q, k, v, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	return d.do(func() error {
		return d.k.AttnDecode(d.s, ptr(q), ptr(k), ptr(v), ptr(scratch), ptr(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	})
}
