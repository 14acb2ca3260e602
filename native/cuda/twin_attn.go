package cuda

import "math"

// Twins of attn.cu's split decode (attn_split_*, attn_combine_*) and tiled
// prefill (attn_prefill_*) kernels, in the kernels' order of operations.

// Constants of attn.cu (TestKernelConstants checks them).
const (
	attnChunk    = 256 // ATTN_CHUNK: keys per split-decode block
	attnPhiAbove = 32  // ATTN_PHI_ABOVE: a chunk maximum may be this far above φ
	attnPhiBelow = 48  // ATTN_PHI_BELOW: the head maximum may be this far below φ
	attnBQ       = 8   // ATTN_BQ: query rows per prefill block
	attnBK       = 16  // ATTN_BK: keys per prefill tile
	attnMaxHD    = 256 // ATTN_MAX_HD: the widest head the prefill kernel takes
	attnGRows    = 32  // ATTN_G_ROWS: query rows per grouped prefill block
	attnGThreads = 256 // ATTN_G_THREADS
	attnGHD      = 128 // ATTN_G_HD: the widest head the grouped prefill kernel takes
)

// attnGroupHeads is attn.cu's attn_group_heads: of a KV head's grp query
// heads, how many a grouped prefill block takes (the largest divisor of
// grp that is at most 8).
func attnGroupHeads(grp int) int {
	nh := 1
	for d := 2; d <= 8; d++ {
		if grp%d == 0 {
			nh = d
		}
	}
	return nh
}

// AttnSplitMinKeys is the split decode's threshold: a decode row over at
// least this many keys (2 chunks) takes attn_split_* + attn_combine_*,
// shorter ones attn_decode_*, whose one block per head is then short
// work anyway. The CPU engine splits from the same count (engine/model's
// splitMinKeys), so a sequence's φ starts at the same step on both.
const AttnSplitMinKeys = 2 * attnChunk

// AttnSplitChunks is the number of chunks (blocks per head) of a split
// decode over nKV keys: ceil(nKV / 256).
func AttnSplitChunks(nKV int) int { return ceilDiv(nKV, attnChunk) }

// AttnSplitScratch is the scratch a split decode over nKV keys needs, in
// floats: the fallback's scores [nHead·nKV], then the chunks' partial
// outputs [nHead·nc·headDim], sums and maxima [nHead·nc each].
func AttnSplitScratch(nHead, nKV, headDim int) int {
	return nHead * (nKV + AttnSplitChunks(nKV)*(headDim+2))
}

// AttnPrefillMaxHeadDim is the widest head attn_prefill_* takes.
const AttnPrefillMaxHeadDim = attnMaxHD

// attnSplitTwin is attn_split_<t> over every (head, chunk): the scratch's
// partials, sums and maxima from φ = phi[h]; scr as AttnSplitScratch.
func attnSplitTwin(warp int, t WeightType, q []float32, k, v []byte, phi, scr []float32, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) {
	nc := AttnSplitChunks(nKV)
	part := scr[nHead*nKV:]
	sums := part[nHead*nc*headDim:]
	maxs := sums[nHead*nc:]
	th := make([]float32, attnThreads)
	sc := make([]float32, attnChunk)
	for h := range nHead {
		g := h / (nHead / nKVHead)
		for c := range nc {
			j0 := c * attnChunk
			s := sc[:min(attnChunk, nKV-j0)]
			attnScoresTwin(warp, t, q[h*headDim:(h+1)*headDim], k, s, j0, g*headDim, kvStride, scale)
			for i := range th {
				th[i] = negInf
				for j := i; j < len(s); j += attnThreads {
					th[i] = fmaxf(th[i], s[j])
				}
			}
			m := blockMax(th, warp)
			for i := range th {
				th[i] = 0
				for j := i; j < len(s); j += attnThreads {
					s[j] = expGGML(s[j] - phi[h])
					th[i] += s[j]
				}
			}
			hc := h*nc + c
			sums[hc], maxs[hc] = blockSumF(th, warp), m
			if !(m-phi[h] <= attnPhiAbove) {
				continue
			}
			for i := range headDim {
				var acc float32
				for j, e := range s {
					acc = fmaf(e, kvAt(t, v, (j0+j)*kvStride+g*headDim+i), acc)
				}
				part[hc*headDim+i] = acc
			}
		}
	}
}

// attnCombineTwin is attn_combine_<t> over every head: φ's update and the
// output, combined from the partials or recomputed (attnHeadTwin).
func attnCombineTwin(warp int, t WeightType, q []float32, k, v []byte, phi, scr, out []float32, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) {
	nc := AttnSplitChunks(nKV)
	part := scr[nHead*nKV:]
	sums := part[nHead*nc*headDim:]
	maxs := sums[nHead*nc:]
	for h := range nHead {
		m, ok := negInf, true
		for c := range nc {
			mc := maxs[h*nc+c]
			m = fmaxf(m, mc)
			ok = ok && mc-phi[h] <= attnPhiAbove
		}
		ok = ok && m-phi[h] >= -attnPhiBelow
		if !ok {
			phi[h] = m
			attnHeadTwin(warp, t, q, k, v, out, nKV, headDim, nHead, nKVHead, kvStride, scale, h)
			continue
		}
		phi[h] = fmaxf(phi[h], m)
		var sum float32
		for c := range nc {
			sum += sums[h*nc+c]
		}
		inv := 1 / sum
		for i := range headDim {
			var acc float32
			for c := range nc {
				acc += part[(h*nc+c)*headDim+i]
			}
			out[h*headDim+i] = acc * inv
		}
	}
}

// attnPrefillTwin is attn_prefill_<t>: nTok query rows (of nHead·headDim
// floats in q and out) at positions nPast…, row t over cache rows
// [0, nPast+t]. It needs no warp size: the kernel uses no warp operation.
func attnPrefillTwin(t WeightType, q []float32, k, v []byte, out []float32, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) {
	qs := nHead * headDim
	o := make([]float32, attnBQ*headDim)
	var ps [attnBQ][attnBK]float32
	var kt, vt [attnBK][]float32
	for j := range kt {
		kt[j], vt[j] = make([]float32, headDim), make([]float32, headDim)
	}
	for h := range nHead {
		kv0 := h / (nHead / nKVHead) * headDim
		for t0 := 0; t0 < nTok; t0 += attnBQ {
			rows := min(attnBQ, nTok-t0)
			nEnd := nPast + t0 + rows
			clear(o)
			var rm, rl, ra [attnBQ]float32
			for r := range rm {
				rm[r] = negInf
			}
			for kb := 0; kb < nEnd; kb += attnBK {
				nk := min(attnBK, nEnd-kb)
				for j := range nk {
					for i := range headDim {
						kt[j][i] = kvAt(t, k, (kb+j)*kvStride+kv0+i)
						vt[j][i] = kvAt(t, v, (kb+j)*kvStride+kv0+i)
					}
				}
				for r := range attnBQ {
					qr := q[min(t0+r, nTok-1)*qs+h*headDim:]
					for j := range attnBK {
						ps[r][j] = negInf
						if r < rows && j < nk && kb+j <= nPast+t0+r {
							var d float32
							for i := range headDim {
								d = fmaf(qr[i], kt[j][i], d)
							}
							ps[r][j] = d * scale
						}
					}
				}
				for r := range attnBQ {
					rm[r], rl[r], ra[r] = prefillRowTwin(&ps[r], rm[r], rl[r])
				}
				for e := range attnBQ * headDim {
					r, i := e/headDim, e%headDim
					acc := o[e] * ra[r]
					for j := range nk {
						acc = fmaf(ps[r][j], vt[j][i], acc)
					}
					o[e] = acc
				}
			}
			for e := range rows * headDim {
				r, i := e/headDim, e%headDim
				out[(t0+r)*qs+h*headDim+i] = o[e] * (1 / rl[r])
			}
		}
	}
}

// prefillRowTwin is one row's online-softmax step of attn_prefill: the
// tile's scores become weights p_j, and it returns the new maximum, sum
// and the factor α the row's output is rescaled by.
func prefillRowTwin(ps *[attnBK]float32, mo, l float32) (mn, ln, a float32) {
	mn = mo
	for _, s := range ps {
		mn = fmaxf(mn, s)
	}
	if mo != negInf {
		a = expGGML(mo - mn)
	}
	var sum float32
	for j, s := range ps {
		var p float32
		if s != negInf {
			p = expGGML(s - mn)
		}
		ps[j] = p
		sum += p
	}
	return mn, float32(l*a) + sum, a
}

// nanPhi is a new sequence's φ for nHead heads: NaN, not known yet.
func nanPhi(nHead int) []float32 {
	phi := make([]float32, nHead)
	for i := range phi {
		phi[i] = float32(math.NaN())
	}
	return phi
}

// argmaxTwin is argmax_f32 over rows of n floats.
func argmaxTwin(x []float32, n int) []int32 {
	out := make([]int32, len(x)/max(n, 1))
	sv, si := make([]float32, actThreads), make([]int32, actThreads)
	for r := range out {
		xr := x[r*n : (r+1)*n]
		for k := range actThreads {
			sv[k], si[k] = negInf, -1
			for i := k; i < n; i += actThreads {
				if si[k] < 0 || xr[i] > sv[k] {
					sv[k], si[k] = xr[i], int32(i)
				}
			}
		}
		for s := actThreads / 2; s > 0; s >>= 1 {
			for k := range s {
				ov, oi := sv[k+s], si[k+s]
				if oi >= 0 && (si[k] < 0 || ov > sv[k] || (ov == sv[k] && oi < si[k])) {
					sv[k], si[k] = ov, oi
				}
			}
		}
		out[r] = si[0]
	}
	return out
}
