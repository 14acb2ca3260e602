package cuda

// Twin runs the plain-Go twins of the kernels at a warp size (32 on NVIDIA,
// 32 or 64 on AMD): the device arithmetic, bit for bit, on the CPU. It is
// what engine/device's stand-in device computes with, so that tests of the
// engine's device path without a GPU run the kernels' order of operations
// and not the CPU engine's. Like the twins, it allocates: a test oracle,
// not a fast path.
type Twin struct{ Warp int }

// MatMul is MatMul's arithmetic: y[c·rows + r] = Σ_i W[r][i]·x[c·n + i],
// by the kernel MatMulLaunch picks (MatMulTiled).
func (t Twin) MatMul(wt WeightType, w []byte, x, y []float32, n, rows, cols int) {
	if MatMulTiled(cols) {
		mtTwin(wt, w, x, y, n, rows, cols)
		return
	}
	mmTwin(wt, t.Warp, w, x, y, n, rows, cols)
}

// RMSNorm is RMSNorm's arithmetic over rows of n (g nil: no gain).
func (t Twin) RMSNorm(x, g, y []float32, n int, eps float32) { rmsNormTwin(t.Warp, x, g, y, n, eps) }

// RoPE is RoPE's arithmetic (base and the rotated width give the kernel's
// theta scale exactly as the launcher computes it).
func (t Twin) RoPE(x []float32, pos []int32, rowStride, nHeads, headDim, nRot int, base float64, freqScale float32, neox bool) {
	ropeTwin(x, pos, rowStride, nHeads, headDim, nRot, ropeThetaScale(base, nRot), freqScale, neox)
}

// SiLUMul is SiLUMul's arithmetic: h = silu(g)·u.
func (t Twin) SiLUMul(h, g, u []float32) { siluMulTwin(h, g, u) }

// Add is Add's arithmetic: y += x.
func (t Twin) Add(y, x []float32) { addTwin(y, x) }

// AttnDecode is AttnDecode's arithmetic for one query token over a cache
// of kv (F32 or F16).
func (t Twin) AttnDecode(kv WeightType, q []float32, k, v []byte, out []float32, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) {
	attnTwin(t.Warp, kv, q, k, v, out, nKV, headDim, nHead, nKVHead, kvStride, scale)
}

// StoreKV is StoreKV's arithmetic: n = len(src) floats into dst as kv.
func (t Twin) StoreKV(kv WeightType, dst []byte, src []float32) { kvStoreTwin(kv, dst, src) }

// AttnSplit is AttnSplit's arithmetic (attn_split_* then attn_combine_*):
// phi (nHead floats) is updated, scr holds AttnSplitScratch floats.
func (t Twin) AttnSplit(kv WeightType, q []float32, k, v []byte, phi, scr, out []float32, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) {
	attnSplitTwin(t.Warp, kv, q, k, v, phi, scr, nKV, headDim, nHead, nKVHead, kvStride, scale)
	attnCombineTwin(t.Warp, kv, q, k, v, phi, scr, out, nKV, headDim, nHead, nKVHead, kvStride, scale)
}

// AttnPrefill is AttnPrefill's arithmetic: nTok causal query rows at
// positions nPast… over the cache.
func (t Twin) AttnPrefill(kv WeightType, q []float32, k, v []byte, out []float32, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) {
	attnPrefillTwin(kv, q, k, v, out, nTok, nPast, headDim, nHead, nKVHead, kvStride, scale)
}

// Argmax is Argmax's arithmetic: each row's largest value's index.
func (t Twin) Argmax(x []float32, n int) []int32 { return argmaxTwin(x, n) }
