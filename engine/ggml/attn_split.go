package ggml

import "math"

// Kernels of FlashDecoding++'s asynchronous softmax (Hong et al. 2023,
// "unified max"): the keys of one attention head are cut into chunks that
// are computed independently against one value φ fixed in advance instead
// of the head's own maximum, so that the partial results add up with no
// rescaling:
//
//	e_j = exp(s_j − φ)   sum_c = Σ_{j∈c} e_j   acc_c = Σ_{j∈c} e_j·v_j
//	out = Σ_c acc_c / Σ_c sum_c
//
// φ cancels, so this is the softmax exactly (up to rounding) as long as no
// e_j overflows and the largest e_j is far from the bottom of the float32
// range. The kernels report each chunk's maximum; the caller checks the
// head's maximum M against φ and, when |M − φ| leaves the window, falls
// back to recomputing the head with φ = M (the classic path).

// ExpShift replaces every x[i] by exp(x[i] − phi) the way SoftMax computes
// its exponentials (every full group of 8 through ExpGGML, the tail through
// the C library's expf) and returns their sum as SoftMax adds it up (the
// groups' float32 lane reductions and the tail elements in float64).
func ExpShift(x []float32, phi float32) float64 {
	n8 := len(x) &^ 7
	sum := expGroups(x[:n8], phi)
	for i := n8; i < len(x); i++ {
		e := float32(math.Exp(float64(x[i] - phi)))
		x[i] = e
		sum += float64(e)
	}
	return sum
}

// ExpBounded is the softmax part of one chunk, one pass over x as the
// asynchronous softmax wants it (no maximum first): every score s_j becomes
// e_j = exp(s_j − phi) as ExpShift computes it, and it returns their sum,
// the largest score maxv, and ok = maxv − phi ≤ bound. When !ok (a score is
// too far above phi for the partial sums to be trusted, or phi or the
// maximum is NaN) x and sum are to be thrown away, and the chunk
// recomputed. An empty chunk has maxv = −Inf, sum 0 and ok.
func ExpBounded(x []float32, phi, bound float32) (sum float64, maxv float32, ok bool) {
	if len(x) == 0 {
		return 0, float32(math.Inf(-1)), true
	}
	n8 := len(x) &^ 7
	sum, maxv = expMaxGroups(x[:n8], phi)
	for i := n8; i < len(x); i++ {
		if x[i] > maxv {
			maxv = x[i]
		}
		e := float32(math.Exp(float64(x[i] - phi)))
		x[i] = e
		sum += float64(e)
	}
	return sum, maxv, maxv-phi <= bound
}

var expMaxGroups = expMaxGroupsGo

// expMaxGroupsGo is expGroupsGo(x, phi) that also returns the largest
// value of x before the exponentials (−Inf for an empty x; NaN values are
// passed over).
func expMaxGroupsGo(x []float32, phi float32) (float64, float32) {
	maxv := maxF32(x)
	return expGroupsGo(x, phi), maxv
}

// AttnChunkF32 is one chunk of keys of one head's decode attention over a
// float32 cache under the unified max phi: scores[j] = scale·(q·k_j) with
// k_j = k[j·kStride : j·kStride+len(q)] (DotsF32, Scale), then ExpBounded,
// then, when ok, out = Σ_j e_j·v_j with v_j = v[j·vStride : …+len(out)]
// (out is overwritten: cleared, then AccumulateRows). It returns the
// chunk's partial sum Σ e_j and its largest scaled score; when !ok out is
// left alone. len(scores) is the number of keys.
func AttnChunkF32(q, k []float32, kStride int, v []float32, vStride int, scale, phi, bound float32, scores, out []float32) (sum float64, maxv float32, ok bool) {
	DotsF32(q, k, kStride, scores)
	Scale(scores, scale)
	sum, maxv, ok = ExpBounded(scores, phi, bound)
	if ok {
		clear(out)
		AccumulateRows(out, scores, v, vStride)
	}
	return sum, maxv, ok
}
