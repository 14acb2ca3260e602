package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The plain-Go twins of the kernels in kernels/*.cu. Each twin runs the
// kernel's arithmetic for a given warp size (32 on NVIDIA, 32 or 64 on AMD)
// in the kernel's order of operations: the lanes' partial sums, the
// butterfly reductions (fc_warp_sum), the block reductions through shared
// memory (fc_block_sum), fused multiply-adds where the source writes fmaf
// and nowhere else (the kernels are compiled with --fmad=false). The CPU
// tests check the twins against engine/ggml; the GPU tests check the
// kernels against the twins.
//
// They are test oracles, not fast paths: they allocate, and they exist so
// that the kernels' arithmetic is pinned down where no GPU is.

// Launch constants shared with the kernel sources (#define values there;
// TestKernelConstants checks they agree).
const (
	mmWarps     = 4   // MM_WARPS: weight rows (one per warp) per block
	mmMaxCols   = 8   // MM_MAX_COLS: activation columns per block
	normThreads = 256 // NORM_THREADS
	ropeThreads = 64  // ROPE_THREADS
	actThreads  = 256 // ACT_THREADS
	attnThreads = 128 // ATTN_THREADS
)

// WeightType is a weight layout the matrix kernels read: GGML's, with the
// same block structure (see engine/ggml).
type WeightType int

const (
	WeightF32 WeightType = iota
	WeightF16
	WeightQ8_0 // 32 elements: fp16 d, 32 × int8
	WeightQ4_0 // 32 elements: fp16 d, 16 bytes of nibbles, value d·(q − 8)
	WeightBF16
	WeightQ4_1 // 32 elements: fp16 d, m, 16 bytes of nibbles, value d·q + m
	WeightQ5_0
	WeightQ5_1
	WeightIQ4_NL
	WeightQ2_K // 256-element super-blocks, read in 32-element units
	WeightQ3_K
	WeightQ4_K
	WeightQ5_K
	WeightQ6_K
	WeightQ8_B32 // Inferflow's min–max formats (engine/quant), 32 or 64 weights a block
	WeightQ8_B64
	WeightQ6_B64
	WeightQ5_B64
	WeightQ4_B32
	WeightQ4_B64
	WeightQ3H_B64
	WeightQ3_B32
	WeightQ2_B32
)

// unitFunc writes the 32 weights of unit j of a block (twin_quant.go).
type unitFunc func(blk []byte, j int, w *[32]float32)

var weightTypes = [...]struct {
	name        string
	kernel      string
	block, size int      // elements and bytes per block
	unit        unitFunc // nil: not a unit kernel (float types, Q8_0, Q4_0)
}{
	WeightF32:    {"F32", "mm_f32", 1, 4, nil},
	WeightF16:    {"F16", "mm_f16", 1, 2, nil},
	WeightQ8_0:   {"Q8_0", "mm_q8_0", 32, 34, nil},
	WeightQ4_0:   {"Q4_0", "mm_q4_0", 32, 18, nil},
	WeightBF16:   {"BF16", "mm_bf16", 1, 2, nil},
	WeightQ4_1:   {"Q4_1", "mm_q4_1", 32, 20, unitQ4_1},
	WeightQ5_0:   {"Q5_0", "mm_q5_0", 32, 22, unitQ5_0},
	WeightQ5_1:   {"Q5_1", "mm_q5_1", 32, 24, unitQ5_1},
	WeightIQ4_NL: {"IQ4_NL", "mm_iq4_nl", 32, 18, unitIQ4_NL},
	WeightQ2_K:   {"Q2_K", "mm_q2_k", 256, 84, unitQ2_K},
	WeightQ3_K:   {"Q3_K", "mm_q3_k", 256, 110, unitQ3_K},
	WeightQ4_K:   {"Q4_K", "mm_q4_k", 256, 144, unitQ4_K},
	WeightQ5_K:   {"Q5_K", "mm_q5_k", 256, 176, unitQ5_K},
	WeightQ6_K:   {"Q6_K", "mm_q6_k", 256, 210, unitQ6_K},

	WeightQ8_B32:  {"Q8_B32", "mm_if_q8_b32", 32, 36, inferflow{32, [3]int{8}, false}.unit},
	WeightQ8_B64:  {"Q8_B64", "mm_if_q8_b64", 64, 68, inferflow{64, [3]int{8}, false}.unit},
	WeightQ6_B64:  {"Q6_B64", "mm_if_q6_b64", 64, 52, inferflow{64, [3]int{4, 2}, false}.unit},
	WeightQ5_B64:  {"Q5_B64", "mm_if_q5_b64", 64, 44, inferflow{64, [3]int{4, 1}, false}.unit},
	WeightQ4_B32:  {"Q4_B32", "mm_if_q4_b32", 32, 20, inferflow{32, [3]int{4}, false}.unit},
	WeightQ4_B64:  {"Q4_B64", "mm_if_q4_b64", 64, 36, inferflow{64, [3]int{4}, false}.unit},
	WeightQ3H_B64: {"Q3H_B64", "mm_if_q3h_b64", 64, 32, inferflow{64, [3]int{4, 2, 1}, true}.unit},
	WeightQ3_B32:  {"Q3_B32", "mm_if_q3_b32", 32, 16, inferflow{32, [3]int{2, 1}, false}.unit},
	WeightQ2_B32:  {"Q2_B32", "mm_if_q2_b32", 32, 12, inferflow{32, [3]int{2}, false}.unit},
}

// WeightTypes lists every weight type the matrix kernels read.
func WeightTypes() []WeightType {
	ts := make([]WeightType, len(weightTypes))
	for i := range ts {
		ts[i] = WeightType(i)
	}
	return ts
}

func (t WeightType) String() string { return weightTypes[t].name }

// Kernel is the name of the matrix kernel for t in matmul.cu.
func (t WeightType) Kernel() string { return weightTypes[t].kernel }

// BlockSize is the number of elements per block (1 for float types).
func (t WeightType) BlockSize() int { return weightTypes[t].block }

// RowBytes is the size of a row of n elements (n a multiple of BlockSize).
func (t WeightType) RowBytes(n int) int { return n / weightTypes[t].block * weightTypes[t].size }

// KVKernels names the decode attention kernel and the row-store kernel
// for a device KV cache of t; ok is false for the types no device cache
// is kept in. F32 rows are stored by a device copy (store is "").
func KVKernels(t WeightType) (attn, store string, ok bool) {
	switch t {
	case WeightF32:
		return "attn_decode_f32", "", true
	case WeightF16:
		return "attn_decode_f16", "kv_store_f16", true
	case WeightQ8_0:
		return "attn_decode_q8_0", "kv_store_q8_0", true
	}
	return "", "", false
}

// KVWhole reports whether every count in ns (elements) is whole blocks
// of a KV cache of t: Q8_0 caches hold rows, heads and stores of whole
// 32-element blocks.
func KVWhole(t WeightType, ns ...int) bool {
	for _, n := range ns {
		if n%t.BlockSize() != 0 {
			return false
		}
	}
	return true
}

// mmTwin is mm_<t>: y[c·rows + r] = Σ_i w[r][i] · x[c·n + i].
func mmTwin(t WeightType, warp int, w []byte, x []float32, y []float32, n, rows, cols int) {
	if n%t.BlockSize() != 0 || len(w) < rows*t.RowBytes(n) || len(x) < cols*n || len(y) < cols*rows {
		panic(fmt.Sprintf("cuda: mmTwin %v n=%d rows=%d cols=%d: bad operand sizes", t, n, rows, cols))
	}
	lanes := make([]float32, warp)
	for r := range rows {
		row := w[r*t.RowBytes(n) : (r+1)*t.RowBytes(n)]
		for c := range cols {
			for l := range lanes {
				lanes[l] = mmLane(t, warp, l, row, x[c*n:(c+1)*n])
			}
			y[c*rows+r] = warpSum(lanes)
		}
	}
}

// mmLane is one lane's accumulator for one column.
func mmLane(t WeightType, warp, lane int, row []byte, x []float32) float32 {
	var acc float32
	switch t {
	case WeightF32, WeightBF16:
		for i := lane; i < len(x); i += warp {
			acc = fmaf(floatWeight(t, row, i), x[i], acc)
		}
	case WeightF16: // chunks of 8 elements: lane l takes chunks l, l + W, …
		for k := lane; 8*k < len(x); k += warp {
			for i := 8 * k; i < min(8*k+8, len(x)); i++ {
				acc = fmaf(floatWeight(t, row, i), x[i], acc)
			}
		}
	case WeightQ8_0: // chunk k: quarter k%4 of block k/4
		for k := lane; k < len(x)/8; k += warp {
			b, p := k/4, k%4
			blk, xb := row[b*34:], x[b*32+8*p:]
			var s float32
			for j := range 8 {
				s = fmaf(float32(int8(blk[2+8*p+j])), xb[j], s)
			}
			acc = fmaf(halfToFloat(le16(blk)), s, acc)
		}
	case WeightQ4_0: // chunk k: bytes 4p…4p+3 of block k/4, p = k%4
		for k := lane; k < len(x)/8; k += warp {
			b, p := k/4, k%4
			blk, xb := row[b*18:], x[b*32:]
			var s float32
			for j := range 4 {
				q := blk[2+4*p+j]
				s = fmaf(float32(int(q&0xf)-8), xb[4*p+j], s)
				s = fmaf(float32(int(q>>4)-8), xb[16+4*p+j], s)
			}
			acc = fmaf(halfToFloat(le16(blk)), s, acc)
		}
	default:
		acc = unitLane(t, warp, lane, row, x)
	}
	return acc
}

// unitLane is a unit kernel's lane: units (32 elements) lane, lane + W, …
// of the row, each dequantized as engine/ggml does, its Σ w_j·x_j taken by
// fmaf in j order and added to the accumulator.
func unitLane(t WeightType, warp, lane int, row []byte, x []float32) float32 {
	wt := weightTypes[t]
	per := wt.block / 32
	var acc float32
	var w [32]float32
	for u := lane; u < len(x)/32; u += warp {
		wt.unit(row[u/per*wt.size:], u%per, &w)
		xu := x[u*32:]
		var s float32
		for j := range 32 {
			s = fmaf(w[j], xu[j], s)
		}
		acc += s
	}
	return acc
}

func floatWeight(t WeightType, row []byte, i int) float32 {
	switch t {
	case WeightF16:
		return halfToFloat(le16(row[2*i:]))
	case WeightBF16:
		return bf16ToFloat(le16(row[2*i:]))
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:]))
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// rmsNormTwin is rms_norm_f32 over rows of n: y = x · (1/sqrtf(mean(x²)+eps)) · g
// (g nil: no gain). y may alias x.
func rmsNormTwin(warp int, x, g, y []float32, n int, eps float32) {
	part := make([]float64, normThreads)
	for r := 0; r < len(x)/n; r++ {
		xr, yr := x[r*n:(r+1)*n], y[r*n:(r+1)*n]
		for k := range part {
			part[k] = 0
			for i := k; i < n; i += normThreads {
				part[k] += float64(xr[i] * xr[i])
			}
		}
		mean := float32(blockSum(part, warp) / float64(n))
		scale := 1 / float32(math.Sqrt(float64(mean+eps)))
		for i, v := range xr {
			v = v * scale
			if g != nil {
				v = v * g[i]
			}
			yr[i] = v
		}
	}
}

// ropeTwin is rope_f32 over tokens rows of rowStride floats, nHeads heads each.
func ropeTwin(x []float32, pos []int32, rowStride, nHeads, headDim, nRot int, thetaScale, freqScale float32, neox bool) {
	half := nRot / 2
	for t, p := range pos {
		for h := range nHeads {
			xh := x[t*rowStride+h*headDim:]
			for i := range half {
				theta := float32(p)
				for range i {
					theta *= thetaScale
				}
				a := float64(freqScale * theta)
				c, s := float32(math.Cos(a)), float32(math.Sin(a))
				i0, i1 := 2*i, 2*i+1
				if neox {
					i0, i1 = i, i+half
				}
				x0, x1 := xh[i0], xh[i1]
				// Explicit conversions keep Go from fusing (it may on arm64).
				xh[i0] = float32(x0*c) - float32(x1*s)
				xh[i1] = float32(x0*s) + float32(x1*c)
			}
		}
	}
}

// siluMulTwin is silu_mul_f32: h = g / (1 + e^−g) · u.
func siluMulTwin(h, g, u []float32) {
	for i := range h {
		x := g[i]
		e := float32(math.Exp(-float64(x)))
		h[i] = float32(x/(1+e)) * u[i]
	}
}

// addTwin is add_f32: y += x.
func addTwin(y, x []float32) {
	for i := range y {
		y[i] += x[i]
	}
}

// softmaxTwin is softmax_f32 over rows of n, in place.
func softmaxTwin(warp int, x []float32, n int) {
	part := make([]float32, actThreads)
	for r := 0; r < len(x)/n; r++ {
		xr := x[r*n : (r+1)*n]
		inv := softmaxRow(warp, xr, part)
		for i := range xr {
			xr[i] *= inv
		}
	}
}

// softmaxRow is the part of softmax_f32 and attn_decode_f32 that runs with
// len(part) threads: it replaces x by e_i = exp(x_i − max x) and returns
// 1/Σe (softmax_f32 then scales x, attention its output).
func softmaxRow(warp int, x, part []float32) float32 {
	nt := len(part)
	for k := range part {
		part[k] = negInf
		for i := k; i < len(x); i += nt {
			part[k] = fmaxf(part[k], x[i])
		}
	}
	m := blockMax(part, warp)
	for k := range part {
		part[k] = 0
		for i := k; i < len(x); i += nt {
			x[i] = expGGML(x[i] - m)
			part[k] += x[i]
		}
	}
	return 1 / blockSumF(part, warp)
}

// attnTwin is attn_decode_<t> for one query token: k and v hold the cache
// as t (F32, F16 or Q8_0), each element widened exactly as it is read.
func attnTwin(warp int, t WeightType, q []float32, k, v []byte, out []float32, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) {
	for h := range nHead {
		attnHeadTwin(warp, t, q, k, v, out, nKV, headDim, nHead, nKVHead, kvStride, scale, h)
	}
}

// attnHeadTwin is attn_head: attn_decode_<t>'s work for query head h.
func attnHeadTwin(warp int, t WeightType, q []float32, k, v []byte, out []float32, nKV, headDim, nHead, nKVHead, kvStride int, scale float32, h int) {
	part := make([]float32, attnThreads)
	s := make([]float32, nKV)
	g := h / (nHead / nKVHead)
	attnScoresTwin(warp, t, q[h*headDim:(h+1)*headDim], k, s, 0, g*headDim, kvStride, scale)
	inv := softmaxRow(warp, s, part)
	for i := range headDim {
		var acc float32
		for j := range nKV {
			acc = fmaf(s[j], kvAt(t, v, j*kvStride+g*headDim+i), acc)
		}
		out[h*headDim+i] = acc * inv
	}
}

// attnScoresTwin is the decode kernels' scores: s[j] = scale·q·k_{j0+j}
// with k_j at j·kvStride + kv0, the lanes splitting the dimensions and
// fc_warp_sum adding them.
func attnScoresTwin(warp int, t WeightType, q []float32, k []byte, s []float32, j0, kv0, kvStride int, scale float32) {
	lanes := make([]float32, warp)
	for j := range s {
		kj := (j0+j)*kvStride + kv0
		for l := range lanes {
			var d float32
			for i := l; i < len(q); i += warp {
				d = fmaf(q[i], kvAt(t, k, kj+i), d)
			}
			lanes[l] = d
		}
		s[j] = warpSum(lanes) * scale
	}
}

// kvAt is element i of a cache of type t: attn_load.
func kvAt(t WeightType, b []byte, i int) float32 {
	if t == WeightQ8_0 {
		blk := b[i/32*34:]
		return float32(int8(blk[2+i%32])) * halfToFloat(le16(blk))
	}
	return floatWeight(t, b, i)
}

// kvStoreTwin is the cache's row store of n floats as t: kv_store_f16
// for F16 (binary16, to nearest even), kv_store_q8_0 for Q8_0, a copy
// for F32.
func kvStoreTwin(t WeightType, dst []byte, src []float32) {
	if t == WeightQ8_0 {
		for b := range len(src) / 32 {
			storeQ8_0(dst[34*b:34*b+34], src[32*b:32*b+32])
		}
		return
	}
	for i, f := range src {
		switch t {
		case WeightF16:
			binary.LittleEndian.PutUint16(dst[2*i:], floatToHalf(f))
		case WeightF32:
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
		default:
			panic(fmt.Sprintf("cuda: a KV cache of %v", t))
		}
	}
}

// storeQ8_0 is one block of kv_store_q8_0.
func storeQ8_0(y []byte, x []float32) {
	var amax float32
	for _, v := range x {
		amax = fmaxf(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	binary.LittleEndian.PutUint16(y, floatToHalf(d))
	for j, v := range x {
		y[2+j] = byte(int8(int(math.RoundToEven(float64(v * id)))))
	}
}
