package device

import (
	"fmt"

	"flowchat/native/hip"
)

// hipDevice runs the layer operations with native/hip's kernels on one
// stream of the device's primary context. Every call enters the context
// (Context.Do: current on a locked OS thread).
type hipDevice struct {
	ctx *hip.Context
	k   *hip.Kernels
	s   *hip.Stream
}

// OpenHIP opens HIP device ordinal and compiles (or takes from the
// kernel cache) every kernel for it. Errors wrap ErrNoDevice when ROCm is
// not usable here, and say why.
func OpenHIP(ordinal int) (Device, error) {
	ctx, err := hip.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: ROCm: %w", ErrNoDevice, err)
	}
	d := &hipDevice{ctx: ctx}
	err = ctx.Do(func() error {
		n, err := hip.LoadHIPRTC()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNoDevice, err)
		}
		if d.k, err = ctx.LoadKernels(n, hip.NewCache(hip.DefaultCacheDir())); err != nil {
			return err
		}
		d.s, err = ctx.NewStream()
		return err
	})
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("HIP device %d: %w", ordinal, err)
	}
	return d, nil
}

func (d *hipDevice) Name() string {
	return fmt.Sprintf("hip:%d (%s)", d.ctx.Device.Ordinal, d.ctx.Device.Name)
}

func (d *hipDevice) Close() error {
	d.ctx.Do(func() error {
		d.k.Unload()
		return d.ctx.DestroyStream(d.s)
	})
	return d.ctx.Close()
}

func (d *hipDevice) MemInfo() (free, total uint64, err error) {
	err = d.ctx.Do(func() error {
		free, total, err = d.ctx.MemInfo()
		return err
	})
	return free, total, err
}

func (d *hipDevice) Alloc(bytes int) (Mem, error) {
	var p hip.DevicePtr
	err := d.ctx.Do(func() (err error) {
		p, err = d.ctx.Alloc(max(bytes, 4))
		return err
	})
	if err != nil {
		return Mem{}, fmt.Errorf("%s: %d bytes: %w (%w)", d.Name(), bytes, ErrOutOfMemory, err)
	}
	return Mem{h: uint64(p), n: bytes}, nil
}

func (d *hipDevice) Free(m Mem) {
	if m.off == 0 && m.h != 0 {
		d.ctx.Do(func() error { return d.ctx.Free(hip.DevicePtr(m.h)) })
	}
}

// ptr is m's device address.
func hptr(m Mem) hip.DevicePtr {
	if m.n == 0 {
		return 0
	}
	return hip.DevicePtr(m.h + uint64(m.off))
}

func (d *hipDevice) Write(dst Mem, src []byte) error {
	return d.ctx.Do(func() error { return d.ctx.CopyToDevice(d.s, hptr(dst), src[:dst.n]) })
}

func (d *hipDevice) Read(dst []byte, src Mem) error {
	return d.ctx.Do(func() error {
		if err := d.ctx.CopyToHost(d.s, dst[:src.n], hptr(src)); err != nil {
			return err
		}
		return d.ctx.SyncStream(d.s)
	})
}

func (d *hipDevice) Copy(dst, src Mem) error {
	if dst.n != src.n {
		panic(fmt.Sprintf("device: copy of %d bytes into %d", src.n, dst.n))
	}
	return d.ctx.Do(func() error { return d.ctx.CopyDevice(d.s, hptr(dst), hptr(src), src.n) })
}

func (d *hipDevice) do(fn func() error) error { return d.ctx.Do(fn) }

func (d *hipDevice) MatMul(t WeightType, w, x, y Mem, n, rows, cols int) error {
	return d.do(func() error { return d.k.MatMul(d.s, t, hptr(w), hptr(x), hptr(y), n, rows, cols) })
}

func (d *hipDevice) RMSNorm(x, g, y Mem, n, rows int, eps float32) error {
	return d.do(func() error { return d.k.RMSNorm(d.s, hptr(x), hptr(g), hptr(y), n, rows, eps) })
}

func (d *hipDevice) RoPE(x, pos Mem, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	return d.do(func() error {
		return d.k.RoPE(d.s, hptr(x), hptr(pos), tokens, rowStride, nHeads, headDim, nRot, base, freqScale, neox)
	})
}

func (d *hipDevice) SiLUMul(h, g, u Mem, n int) error {
	return d.do(func() error { return d.k.SiLUMul(d.s, hptr(h), hptr(g), hptr(u), n) })
}

func (d *hipDevice) Add(y, x Mem, n int) error {
	return d.do(func() error { return d.k.Add(d.s, hptr(y), hptr(x), n) })
}

func (d *hipDevice) Attn(q, k, v, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	return d.do(func() error {
		return d.k.AttnDecode(d.s, hptr(q), hptr(k), hptr(v), hptr(scratch), hptr(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	})
}
