// Package device is the engine's accelerator interface: the operations a
// transformer layer needs (matrix products by weight type, RMSNorm, RoPE,
// SiLU·gate, the residual add, decode attention) over device memory, and
// the copies in and out of it. engine/model runs the layers placed on a
// device through it; the spec interpreter stays free of per-family code.
//
// Implementations: CUDA (native/cuda's kernels), HIP (native/hip, the same
// kernel sources) and StandIn, a CPU stand-in that computes with the
// kernels' plain-Go twins, so that the device path's arithmetic (not the
// CPU engine's) runs in tests on machines without a GPU.
package device

import (
	"errors"
	"fmt"

	"flowchat/engine/ggml"
	"flowchat/engine/quant"
	"flowchat/native/cuda"
)

// ErrNoDevice is wrapped by every error that means "no usable GPU": no
// driver, no device, no runtime compiler. It is never turned into a silent
// CPU fallback: the caller says why.
var ErrNoDevice = errors.New("no GPU device available")

// ErrOutOfMemory is returned when an allocation does not fit.
var ErrOutOfMemory = errors.New("device out of memory")

// WeightType is a weight layout the matrix kernels read (GGML's blocks).
type WeightType = cuda.WeightType

// Weight types the kernels read as they are stored.
const (
	F32    = cuda.WeightF32
	F16    = cuda.WeightF16
	BF16   = cuda.WeightBF16
	Q8_0   = cuda.WeightQ8_0
	Q4_0   = cuda.WeightQ4_0
	Q4_1   = cuda.WeightQ4_1
	Q5_0   = cuda.WeightQ5_0
	Q5_1   = cuda.WeightQ5_1
	IQ4_NL = cuda.WeightIQ4_NL
	Q2_K   = cuda.WeightQ2_K
	Q3_K   = cuda.WeightQ3_K
	Q4_K   = cuda.WeightQ4_K
	Q5_K   = cuda.WeightQ5_K
	Q6_K   = cuda.WeightQ6_K
	// Inferflow's formats (engine/quant).
	Q8_B32  = cuda.WeightQ8_B32
	Q8_B64  = cuda.WeightQ8_B64
	Q6_B64  = cuda.WeightQ6_B64
	Q5_B64  = cuda.WeightQ5_B64
	Q4_B32  = cuda.WeightQ4_B32
	Q4_B64  = cuda.WeightQ4_B64
	Q3H_B64 = cuda.WeightQ3H_B64
	Q3_B32  = cuda.WeightQ3_B32
	Q2_B32  = cuda.WeightQ2_B32
)

// kernelTypes maps GGML types to the kernels' weight types.
var kernelTypes = map[ggml.Type]WeightType{
	ggml.F32: F32, ggml.F16: F16, ggml.BF16: BF16, ggml.Q8_0: Q8_0, ggml.Q4_0: Q4_0,
	ggml.Q4_1: Q4_1, ggml.Q5_0: Q5_0, ggml.Q5_1: Q5_1, ggml.IQ4_NL: IQ4_NL,
	ggml.Q2_K: Q2_K, ggml.Q3_K: Q3_K, ggml.Q4_K: Q4_K, ggml.Q5_K: Q5_K, ggml.Q6_K: Q6_K,
	quant.Q8_B32: Q8_B32, quant.Q8_B64: Q8_B64, quant.Q6_B64: Q6_B64, quant.Q5_B64: Q5_B64,
	quant.Q4_B32: Q4_B32, quant.Q4_B64: Q4_B64, quant.Q3H_B64: Q3H_B64, quant.Q3_B32: Q3_B32,
	quant.Q2_B32: Q2_B32,
}

// KernelType maps a GGML type (or an Inferflow format's) to the kernels'
// weight type; ok is false for the types no kernel reads (Q8_1 and Q8_K,
// activation types: converted at upload, see engine/model's device
// weights).
func KernelType(t ggml.Type) (wt WeightType, ok bool) {
	wt, ok = kernelTypes[t]
	return wt, ok
}

// Mem is a range of device memory: an allocation's handle, an offset and a
// length in bytes. Slices of an allocation share its handle.
type Mem struct {
	h      uint64
	off, n int
}

// Bytes is the length of m.
func (m Mem) Bytes() int { return m.n }

// Slice is the n bytes of m from off.
func (m Mem) Slice(off, n int) Mem {
	if off < 0 || n < 0 || off+n > m.n {
		panic(fmt.Sprintf("device: slice [%d:+%d] of %d bytes", off, n, m.n))
	}
	return Mem{h: m.h, off: m.off + off, n: n}
}

// Floats is the float32 elements [i, i+n) of m.
func (m Mem) Floats(i, n int) Mem { return m.Slice(4*i, 4*n) }

// Memory is a device's memory and the copies to, from and within it. Copies
// and operations run in the order they are issued; Read returns when the
// bytes are on the host (it waits for everything issued before it).
type Memory interface {
	MemInfo() (free, total uint64, err error)
	Alloc(bytes int) (Mem, error)
	Free(m Mem)
	Write(dst Mem, src []byte) error // len(src) == dst.Bytes()
	Read(dst []byte, src Mem) error  // len(dst) == src.Bytes()
	Copy(dst, src Mem) error         // within the device, equal lengths
}

// Kernels are the layer operations, on float32 activations. Shapes are
// those of native/cuda's launchers (the documentation of each is there).
type Kernels interface {
	// MatMul: y[c·rows + r] = Σ_i W[r][i]·x[c·n + i], cols columns.
	MatMul(t WeightType, w, x, y Mem, n, rows, cols int) error
	// RMSNorm normalizes rows of n floats from x into y (may be x) with gain g.
	RMSNorm(x, g, y Mem, n, rows int, eps float32) error
	// RoPE rotates in place nHeads heads of headDim floats (the first nRot
	// of each) in tokens rows of rowStride floats, at the int32 positions pos.
	RoPE(x, pos Mem, tokens, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) error
	// SiLUMul: h = silu(g)·u over n floats.
	SiLUMul(h, g, u Mem, n int) error
	// Add: y += x over n floats.
	Add(y, x Mem, n int) error
	// StoreKV writes n floats of x into a KV cache of type kv (F32, F16 or
	// Q8_0; see KVType) at y: a copy, F16's rounding to nearest even, or
	// Q8_0 blocks as the CPU's cache quantizes them.
	StoreKV(kv WeightType, x, y Mem, n int) error
	// Attn is one query token's attention over nKV cached rows of kvStride
	// elements of type kv; scratch holds nHead·nKV floats.
	Attn(kv WeightType, q, k, v, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error
}

// KVType is the device KV cache's element type for a host cache of t (a
// State's or KVPool's KV type) and heads of headDim: F16 and Q8_0 caches
// are kept so on the device too (rows written by StoreKV, the host's rows
// bit for bit), Q8_0 only when heads are whole 32-element blocks (F32
// otherwise); F32 stays F32.
func KVType(t ggml.Type, headDim int) WeightType {
	switch {
	case t == ggml.F16:
		return F16
	case t == ggml.Q8_0 && cuda.KVWhole(Q8_0, headDim):
		return Q8_0
	}
	return F32
}

// KVCacheBytes is the device memory of a KV cache for a host cache of
// type t (see KVType): rows positions of kvHeads heads, each of headDimK
// key and headDimV value elements, in the device cache's element type (F32:
// 4 bytes, F16: 2, Q8_0: 34 per 32). engine/model allocates exactly this
// (rows·RowBytes(kvHeads·headDim) for K and for V); the memory estimates
// (the CLI's auto-fit, the GUI's per-device lines through app/hub, and the
// planner's KV bytes per head) all count the KV cache with it.
func KVCacheBytes(t ggml.Type, rows, kvHeads, headDimK, headDimV int) int64 {
	wt := KVType(t, headDimK)
	return int64(rows) * int64(wt.RowBytes(kvHeads*headDimK)+wt.RowBytes(kvHeads*headDimV))
}

// Device is one accelerator (or a stand-in for one). A Device is used by
// one goroutine at a time.
type Device interface {
	Name() string
	Memory
	Kernels
	Close() error
}

// Finite is a device whose allocations can be counted: the stand-in
// reports them so tests can hold the memory estimate against them.
type Finite interface {
	Allocated() int64
}

// Attention is the attention kernels beyond one token at a time: decode
// rows over long contexts split over chunks of keys, and prompt batches
// in tiles. engine/model finds them by type assertion; a device without
// them runs Attn once per token, which is what both mean (up to
// rounding: native/cuda's shim tests state the bounds).
type Attention interface {
	// AttnSplit is Attn split over chunks of keys with FlashDecoding++'s
	// unified max: phi holds nHead floats kept per sequence and layer (NaN
	// to start; updated, engine/model's φ rule), scratch SplitScratch(nHead,
	// nKV, headDim) floats.
	AttnSplit(kv WeightType, q, k, v, phi, scratch, out Mem, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error
	// AttnPrefill is the causal attention of nTok query rows (nHead·headDim
	// floats each, in q and out) at positions nPast…, whose K/V rows are
	// already in the cache: row t attends over cache rows [0, nPast+t].
	// headDim is at most PrefillMaxHeadDim.
	AttnPrefill(kv WeightType, q, k, v, out Mem, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error
}

// SplitMinKeys is the number of keys from which a decode row takes
// AttnSplit (native/cuda's AttnSplitMinKeys: 512, as the CPU engine).
const SplitMinKeys = cuda.AttnSplitMinKeys

// PrefillMaxHeadDim is the widest head AttnPrefill takes.
const PrefillMaxHeadDim = cuda.AttnPrefillMaxHeadDim

// SplitScratch is AttnSplit's scratch in floats for nKV keys.
func SplitScratch(nHead, nKV, headDim int) int { return cuda.AttnSplitScratch(nHead, nKV, headDim) }

// Argmaxer is greedy decoding's pick on the device: out (rows int32s)
// gets the index of the largest of each row of n floats of x, the lowest
// index on ties (engine/sample's Greedy on rows without NaN). The engine
// does not use it yet: logits come back for the sampler chain.
type Argmaxer interface {
	Argmax(x, out Mem, n, rows int) error
}

// MatvecMaxCols is the most columns a MatMul runs on the matrix-vector
// kernels; wider products run the tiled kernels, which sum in another
// order (native/cuda's MatMulTiled). A caller that cuts a batch into
// parts keeps every part on the side of this line the whole batch is on,
// so that cutting changes no bit.
const MatvecMaxCols = cuda.MatMulMatvecMaxCols
