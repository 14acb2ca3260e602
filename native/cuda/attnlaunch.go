package cuda

import "fmt"

// Launches of attn.cu's split decode and tiled prefill (the decode
// kernel's is in launches.go) and of act.cu's greedy argmax.

// attnCheck is the checks every attention launch makes; it returns the
// kernels' suffix for a cache of t.
func attnCheck(t WeightType, headDim, nHead, nKVHead, kvStride int) (string, error) {
	name, _, ok := KVKernels(t)
	switch {
	case nKVHead <= 0 || nHead%nKVHead != 0:
		return "", fmt.Errorf("%d query heads over %d KV heads", nHead, nKVHead)
	case !ok:
		return "", fmt.Errorf("no attention kernel for a %v KV cache", t)
	case !KVWhole(t, headDim, kvStride):
		return "", fmt.Errorf("%v KV rows of %d with heads of %d are not whole blocks", t, kvStride, headDim)
	}
	return name[len("attn_decode_"):], nil
}

// AttnSplitLaunches are AttnSplit's two launches (attn.cu): attn_split_*
// over (head, chunk), then attn_combine_* per head. phi holds the nHead
// heads' unified maxima (NaN: not known), updated by the combine;
// scratch holds AttnSplitScratch(nHead, nKV, headDim) floats.
func AttnSplitLaunches(t WeightType, q, kc, vc, phi, scratch, out uint64, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) ([2]Launch, error) {
	sfx, err := attnCheck(t, headDim, nHead, nKVHead, kvStride)
	if err != nil {
		return [2]Launch{}, err
	}
	ls := [2]Launch{
		{Kernel: "attn_split_" + sfx, Grid: Dim3{X: nHead, Y: AttnSplitChunks(nKV)}, Block: Dim3{X: attnThreads}},
		{Kernel: "attn_combine_" + sfx, Grid: Dim3{X: nHead}, Block: Dim3{X: attnThreads}},
	}
	ls[0].ptrs(q, kc, vc, phi, scratch).ints(nKV, headDim, nHead, nKVHead, kvStride).f32(scale)
	ls[1].ptrs(q, kc, vc, phi, scratch, out).ints(nKV, headDim, nHead, nKVHead, kvStride).f32(scale)
	return ls, nil
}

// AttnPrefillLaunch is AttnPrefill's launch (attn.cu): attn_prefill_g_*
// for heads of up to 128, else attn_prefill_*, nTok query rows at
// positions nPast…, whose K/V rows are in the cache, row t attending
// over cache rows [0, nPast+t]; q and out are nTok rows of nHead·headDim
// floats.
func AttnPrefillLaunch(t WeightType, q, kc, vc, out uint64, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) (Launch, error) {
	sfx, err := attnCheck(t, headDim, nHead, nKVHead, kvStride)
	switch {
	case err != nil:
		return Launch{}, err
	case headDim > attnMaxHD:
		return Launch{}, fmt.Errorf("prefill attention over heads of %d (at most %d)", headDim, attnMaxHD)
	case nTok <= 0:
		return Launch{}, fmt.Errorf("prefill attention over %d tokens", nTok)
	}
	l := Launch{Kernel: "attn_prefill_" + sfx, Grid: Dim3{X: nHead, Y: ceilDiv(nTok, attnBQ)}, Block: Dim3{X: attnThreads}}
	if headDim <= attnGHD { // the grouped kernel: the same bits, K/V tiles shared by a group's heads
		nh := attnGroupHeads(nHead / nKVHead)
		l = Launch{Kernel: "attn_prefill_g_" + sfx, Grid: Dim3{X: nHead / nh, Y: ceilDiv(nTok, attnGRows/nh)}, Block: Dim3{X: attnGThreads}}
	}
	l.ptrs(q, kc, vc, out).ints(nTok, nPast, headDim, nHead, nKVHead, kvStride).f32(scale)
	return l, nil
}

// AttnSplit is one query token's attention over nKV cached positions
// split over chunks of keys (AttnSplitLaunches): phi holds nHead floats
// (the unified maxima, kept per sequence and layer; NaN to start), scratch
// AttnSplitScratch(nHead, nKV, headDim) floats.
func (k *Kernels) AttnSplit(s *Stream, t WeightType, q, kc, vc, phi, scratch, out DevicePtr, nKV, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	ls, err := AttnSplitLaunches(t, uint64(q), uint64(kc), uint64(vc), uint64(phi), uint64(scratch), uint64(out), nKV, headDim, nHead, nKVHead, kvStride, scale)
	if err == nil {
		err = k.run(s, ls[0], nil)
	}
	return k.run(s, ls[1], err)
}

// AttnPrefill is the causal attention of nTok query rows over the cache
// (AttnPrefillLaunch).
func (k *Kernels) AttnPrefill(s *Stream, t WeightType, q, kc, vc, out DevicePtr, nTok, nPast, headDim, nHead, nKVHead, kvStride int, scale float32) error {
	l, err := AttnPrefillLaunch(t, uint64(q), uint64(kc), uint64(vc), uint64(out), nTok, nPast, headDim, nHead, nKVHead, kvStride, scale)
	return k.run(s, l, err)
}

// ArgmaxLaunch is Argmax's launch (act.cu): for each of rows rows of n
// floats at x, the int32 index of its largest value (the lowest on ties)
// at y.
func ArgmaxLaunch(x, y uint64, n, rows int) Launch {
	l := Launch{Kernel: "argmax_f32", Grid: Dim3{X: rows}, Block: Dim3{X: actThreads}}
	l.ptrs(x, y).ints(n)
	return l
}

// Argmax writes the index of each row's largest float (greedy decoding's
// token, engine/sample's Greedy on rows without NaN) as int32s at y.
func (k *Kernels) Argmax(s *Stream, x, y DevicePtr, n, rows int) error {
	return k.run(s, ArgmaxLaunch(uint64(x), uint64(y), n, rows), nil)
}
