package device

import (
	"fmt"
	"sync"
	"unsafe"

	"flowchat/native/cuda"
)

// StandIn is a device made of host memory that computes with the kernels'
// plain-Go twins (native/cuda's Twin) at a warp size: what a GPU would
// compute, bit for bit by the twins' contract, at CPU speed. It has a
// memory cap, so placements are tested against running out.
type StandIn struct {
	name string
	cap  int64
	tw   cuda.Twin

	mu    sync.Mutex
	mem   map[uint64][]float32 // allocations, as float32 for alignment
	next  uint64
	inUse int64
}

// NewStandIn makes a stand-in device with capBytes of memory (≤ 0: 1 TiB)
// whose kernels run at warp size warp (32 as NVIDIA, 64 as gfx9).
func NewStandIn(name string, capBytes int64, warp int) *StandIn {
	if capBytes <= 0 {
		capBytes = 1 << 40
	}
	return &StandIn{name: name, cap: capBytes, tw: cuda.Twin{Warp: warp}, mem: map[uint64][]float32{}, next: 1}
}

func (d *StandIn) Name() string { return d.name }
func (d *StandIn) Close() error { return nil }

// Allocated is the bytes allocated and not freed.
func (d *StandIn) Allocated() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inUse
}

func (d *StandIn) MemInfo() (free, total uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return uint64(d.cap - d.inUse), uint64(d.cap), nil
}

func (d *StandIn) Alloc(bytes int) (Mem, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inUse+int64(bytes) > d.cap {
		return Mem{}, fmt.Errorf("%s: %d bytes with %d of %d in use: %w", d.name, bytes, d.inUse, d.cap, ErrOutOfMemory)
	}
	h := d.next
	d.next++
	d.mem[h] = make([]float32, (bytes+3)/4)
	d.inUse += int64(bytes)
	return Mem{h: h, n: bytes}, nil
}

func (d *StandIn) Free(m Mem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.mem[m.h]; ok && m.off == 0 {
		d.inUse -= int64(m.n)
		delete(d.mem, m.h)
	}
}

// bytes is the host memory behind m.
func (d *StandIn) bytes(m Mem) []byte {
	d.mu.Lock()
	a, ok := d.mem[m.h]
	d.mu.Unlock()
	if !ok {
		panic(fmt.Sprintf("device: %s: memory handle %d is not allocated here", d.name, m.h))
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), 4*len(a))
	return b[m.off : m.off+m.n]
}

// floats is m as float32s (m's offset and length are multiples of 4).
func (d *StandIn) floats(m Mem) []float32 {
	if m.off%4 != 0 || m.n%4 != 0 {
		panic(fmt.Sprintf("device: float view of [%d:+%d]", m.off, m.n))
	}
	if m.n == 0 {
		return nil
	}
	b := d.bytes(m)
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), m.n/4)
}

func (d *StandIn) Write(dst Mem, src []byte) error {
	copy(d.bytes(dst), src[:dst.n])
	return nil
}

func (d *StandIn) Read(dst []byte, src Mem) error {
	copy(dst[:src.n], d.bytes(src))
	return nil
}

func (d *StandIn) Copy(dst, src Mem) error {
	if dst.n != src.n {
		panic(fmt.Sprintf("device: copy of %d bytes into %d", src.n, dst.n))
	}
	copy(d.bytes(dst), d.bytes(src))
	return nil
}

func (d *StandIn) MatMul(t WeightType, w, x, y Mem, n, rows, cols int) error {
	d.tw.MatMul(t, d.bytes(w), d.floats(x), d.floats(y), n, rows, cols)
	return nil
}

func (d *StandIn) RMSNorm(x, g, y Mem, n, rows int, eps float32) error {
	xs, ys := d.floats(x), d.floats(y)
	d.tw.RMSNorm(xs[:n*rows], d.floats(g), ys[:n*rows], n, eps)
	return nil
}

func (d *StandIn) RoPE(x, pos Mem, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error {
	p := unsafe.Slice((*int32)(unsafe.Pointer(&d.bytes(pos)[0])), tokens)
	d.tw.RoPE(d.floats(x), p, rowStride, nHeads, headDim, nRot, base, freqScale, neox)
	return nil
}

func (d *StandIn) SiLUMul(h, g, u Mem, n int) error {
	d.tw.SiLUMul(d.floats(h)[:n], d.floats(g), d.floats(u))
	return nil
}

func (d *StandIn) Add(y, x Mem, n int) error {
	d.tw.Add(d.floats(y)[:n], d.floats(x))
	return nil
}

func (d *StandIn) StoreKV(kv WeightType, x, y Mem, n int) error {
	d.tw.StoreKV(kv, d.bytes(y), d.floats(x)[:n])
	return nil
}

func (d *StandIn) Attn(kv WeightType, q, k, v, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	d.tw.AttnDecode(kv, d.floats(q), d.bytes(k), d.bytes(v), d.floats(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	return nil
}

var _ Attention = (*StandIn)(nil)

func (d *StandIn) AttnSplit(kv WeightType, q, k, v, phi, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	d.tw.AttnSplit(kv, d.floats(q), d.bytes(k), d.bytes(v), d.floats(phi), d.floats(scratch), d.floats(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	return nil
}

func (d *StandIn) AttnPrefill(kv WeightType, q, k, v, out Mem, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	d.tw.AttnPrefill(kv, d.floats(q), d.bytes(k), d.bytes(v), d.floats(out), nTok, nPast, headDim, nHead, nKVHead, kvStride, scale)
	return nil
}

var _ Argmaxer = (*StandIn)(nil)

func (d *StandIn) Argmax(x, out Mem, n, rows int) error {
	idx := d.tw.Argmax(d.floats(x)[:n*rows], n)
	o := unsafe.Slice((*int32)(unsafe.Pointer(&d.bytes(out)[0])), rows)
	copy(o, idx)
	return nil
}
