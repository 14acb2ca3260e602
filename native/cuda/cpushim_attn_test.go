//go:build linux && (amd64 || arm64)

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Split decode and tiled prefill: the kernels through the CPU shim against
// their twins, bit for bit, and the twins against the classic decode
// twin within a stated bound.

// Bounds against the classic decode twin, relative to max |v|. Both sides
// are convex combinations of the same values with weights exp(s_j − c)/Σ;
// the roundings that differ (the exponentials' arguments, sums of up to
// n_kv terms in float32 in another order, the prefill's scores summed
// sequentially rather than across lanes, the rescalings by α) stay well
// below 2^−16 of the largest value for the caches tested (≤ 1,200 keys,
// scores of a few units); measured up to ~2^−20.
const (
	splitBound   = 1.0 / (1 << 16)
	prefillBound = 1.0 / (1 << 16)
)

func checkBound(t *testing.T, name string, got, want []float32, bound float64) {
	t.Helper()
	var worst float64
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= bound) {
			t.Fatalf("%s: out[%d] = %g, decode twin %g (|Δ| %.3g > %.3g)", name, i, got[i], want[i], d, bound)
		}
		worst = max(worst, d)
	}
	t.Logf("%s: max |Δ| against the decode twin %.3g (bound %.3g)", name, worst, bound)
}

// TestShimAttnSplit: attn_split_* then attn_combine_* equal the twins bit
// for bit (warp 32 and 64, F32/F16/Q8_0, 4 query heads on 2 KV heads, an
// odd key count of two chunks, the second partial), over three steps of one sequence's φ:
// cold (NaN: every head recomputed, the classic decode's output bit for
// bit), warm (φ from the step before: the combine path, within
// splitBound of the classic twin), and forced fallbacks (φ of some heads
// set 40 below their maximum, so a chunk leaves the window above, or 60
// above it, below the window).
func TestShimAttnSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	const nKV, hd, nHead, nKVHead = 293, 64, 4, 2
	stride := nKVHead*hd + 32
	for _, kvt := range []WeightType{WeightF32, WeightF16, WeightQ8_0} {
		kb, vb := kvCache(r, kvt, nKV, stride, 1), kvCache(r, kvt, nKV, stride, 1)
		q := randFloats(r, nHead*hd, 3)
		for _, warp := range warps {
			h := shimHarness(t, warp)
			name := fmt.Sprintf("%v warp=%d", kvt, warp)
			classic := twinDecode(warp, kvt, q, kb, vb, nKV, hd, nHead, nKVHead, stride)
			phi := nanPhi(nHead)
			out := shimSplit(t, h, warp, kvt, q, kb, vb, phi, nKV, hd, nHead, nKVHead, stride)
			checkULP(t, name+" cold", out, classic, 0) // every head recomputed exactly
			warm := shimSplit(t, h, warp, kvt, q, kb, vb, phi, nKV, hd, nHead, nKVHead, stride)
			checkBound(t, name+" warm", warm, classic, splitBound*maxAbsKV(kvt, vb, nKV*stride))
			if slices.Equal(warm, out) { // 256 outputs rounded alike: the combine did not run
				t.Errorf("%s warm: the classic output bit for bit", name)
			}
			m := slices.Clone(phi) // each head's maximum, from the warm step
			phi[1], phi[2] = m[1]-40, m[2]+60
			forced := shimSplit(t, h, warp, kvt, q, kb, vb, phi, nKV, hd, nHead, nKVHead, stride)
			for _, hh := range []int{1, 2} {
				checkULP(t, fmt.Sprintf("%s head %d recomputed", name, hh), forced[hh*hd:(hh+1)*hd], classic[hh*hd:(hh+1)*hd], 0)
				if phi[hh] != m[hh] {
					t.Errorf("%s: φ of recomputed head %d = %g, want its maximum %g", name, hh, phi[hh], m[hh])
				}
			}
			checkULP(t, name+" head 0 combined", forced[:hd], warm[:hd], 0)
		}
	}
}

// twinDecode is attnTwin at warp into a new slice.
func twinDecode(warp int, kvt WeightType, q []float32, kb, vb []byte, nKV, hd, nHead, nKVHead, stride int) []float32 {
	out := make([]float32, nHead*hd)
	attnTwin(warp, kvt, q, kb, vb, out, nKV, hd, nHead, nKVHead, stride, 0.125)
	return out
}

// shimSplit runs the two split kernels through the shim and the twins,
// checks that output, φ and scratch agree bit for bit, updates phi and
// returns the output.
func shimSplit(t *testing.T, harness string, warp int, kvt WeightType, q []float32, kb, vb []byte, phi []float32, nKV, hd, nHead, nKVHead, stride int) []float32 {
	t.Helper()
	ls, err := AttnSplitLaunches(kvt, 0, 0, 0, 0, 0, 0, nKV, hd, nHead, nKVHead, stride, 0.125)
	if err != nil {
		t.Fatal(err)
	}
	scr := make([]float32, AttnSplitScratch(nHead, nKV, hd))
	wantPhi, wantScr, want := slices.Clone(phi), slices.Clone(scr), make([]float32, nHead*hd)
	attnSplitTwin(warp, kvt, q, kb, vb, wantPhi, wantScr, nKV, hd, nHead, nKVHead, stride, 0.125)
	attnCombineTwin(warp, kvt, q, kb, vb, wantPhi, wantScr, want, nKV, hd, nHead, nKVHead, stride, 0.125)

	b := runShim(t, harness, ls[0].Kernel, ls[0].Grid, ls[0].Block, clone32(q), kb, vb, clone32(phi), clone32(scr),
		nKV, hd, nHead, nKVHead, stride, float32(0.125))
	b = runShim(t, harness, ls[1].Kernel, ls[1].Grid, ls[1].Block, clone32(q), kb, vb, b[3], b[4], make([]byte, 4*nHead*hd),
		nKV, hd, nHead, nKVHead, stride, float32(0.125))
	name := fmt.Sprintf("%s warp=%d", ls[1].Kernel, warp)
	checkULP(t, name+" φ", bytesF32(b[3]), wantPhi, 0)
	checkULP(t, name+" out", bytesF32(b[5]), want, 0)
	copy(phi, wantPhi)
	return want
}

// TestShimAttnPrefill: attn_prefill_* equals its twin bit for bit (warp 32
// and 64, F32/F16/Q8_0, GQA, one-token batches, odd batch and past sizes,
// tiles cut by the end of the batch, heads of up to ATTN_MAX_HD), and the
// twin is within prefillBound of the decode twin run token by token.
func TestShimAttnPrefill(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	cases := []struct{ nTok, nPast, hd, nHead, nKVHead int }{
		{1, 0, 64, 4, 2}, {1, 37, 64, 6, 3}, {13, 0, 64, 4, 1}, {29, 19, 96, 6, 2}, {17, 5, 256, 2, 2},
		// The grouped kernel (heads ≤ 128): Llama-3's groups of 4 at 128
		// over blocks of 8 tokens and several tiles; groups of 8 (4 tokens
		// a block), 6 (6 heads × 5 tokens: a partial block of rows) and 1
		// (32 tokens); 160 takes the ungrouped kernel.
		{45, 7, 128, 8, 2}, {11, 30, 64, 16, 2}, {23, 3, 64, 12, 2}, {40, 9, 32, 2, 2}, {9, 20, 160, 2, 1},
	}
	for _, c := range cases {
		for _, kvt := range []WeightType{WeightF32, WeightF16, WeightQ8_0} {
			hd := c.hd
			if kvt != WeightQ8_0 && c.hd == 96 {
				hd = 72 // not whole Q8_0 blocks: float caches only
			}
			n, qs := c.nPast+c.nTok, c.nHead*hd
			stride := c.nKVHead*hd + 32
			kb, vb := kvCache(r, kvt, n, stride, 1), kvCache(r, kvt, n, stride, 1)
			q := randFloats(r, c.nTok*qs, 2)
			want := make([]float32, c.nTok*qs)
			attnPrefillTwin(kvt, q, kb, vb, want, c.nTok, c.nPast, hd, c.nHead, c.nKVHead, stride, 0.125)
			name := fmt.Sprintf("%v T=%d past=%d hd=%d heads %d/%d", kvt, c.nTok, c.nPast, hd, c.nHead, c.nKVHead)

			perTok := make([]float32, c.nTok*qs)
			for tk := range c.nTok {
				attnTwin(32, kvt, q[tk*qs:(tk+1)*qs], kb, vb, perTok[tk*qs:(tk+1)*qs], c.nPast+tk+1, hd, c.nHead, c.nKVHead, stride, 0.125)
			}
			checkBound(t, name, want, perTok, prefillBound*maxAbsKV(kvt, vb, n*stride))

			l, err := AttnPrefillLaunch(kvt, 0, 0, 0, 0, c.nTok, c.nPast, hd, c.nHead, c.nKVHead, stride, 0.125)
			if err != nil {
				t.Fatal(err)
			}
			if grouped := strings.HasPrefix(l.Kernel, "attn_prefill_g_"); grouped != (hd <= attnGHD) {
				t.Fatalf("%s: kernel %s for heads of %d", name, l.Kernel, hd)
			}
			for _, warp := range warps {
				out := runShim(t, shimHarness(t, warp), l.Kernel, l.Grid, l.Block, clone32(q), kb, vb, make([]byte, 4*len(want)),
					c.nTok, c.nPast, hd, c.nHead, c.nKVHead, stride, float32(0.125))
				checkULP(t, fmt.Sprintf("%s warp=%d", name, warp), bytesF32(out[3]), want, 0)
			}
		}
	}
}

// TestAttnLaunchChecks: the launches refuse what the kernels cannot do.
func TestAttnLaunchChecks(t *testing.T) {
	if _, err := AttnPrefillLaunch(WeightF32, 0, 0, 0, 0, 4, 0, attnMaxHD+32, 2, 2, 4*attnMaxHD, 1); err == nil {
		t.Error("prefill over heads wider than ATTN_MAX_HD accepted")
	}
	if _, err := AttnPrefillLaunch(WeightQ8_0, 0, 0, 0, 0, 4, 0, 72, 2, 2, 144, 1); err == nil {
		t.Error("Q8_0 prefill over heads of 72 accepted")
	}
	if _, err := AttnSplitLaunches(WeightF16, 0, 0, 0, 0, 0, 0, 600, 64, 6, 4, 256, 1); err == nil {
		t.Error("split over 6 query heads on 4 KV heads accepted")
	}
	ls, err := AttnSplitLaunches(WeightF16, 0, 0, 0, 0, 0, 0, 513, 64, 6, 2, 128, 1)
	if err != nil || ls[0].Grid != (Dim3{X: 6, Y: 3}) || ls[1].Grid != (Dim3{X: 6}) {
		t.Errorf("split over 513 keys: %+v, %+v, %v", ls[0].Grid, ls[1].Grid, err)
	}
}

// TestShimArgmax: argmax_f32 equals its twin on every row (warp 32, 64).
func TestShimArgmax(t *testing.T) {
	r := rand.New(rand.NewPCG(67, 68))
	const n = 1001
	var x []float32
	rows := argmaxRows(r, n)
	for _, row := range rows {
		x = append(x, row...)
	}
	want := argmaxTwin(x, n)
	for _, warp := range warps {
		l := ArgmaxLaunch(0, 0, n, len(rows))
		out := runShim(t, shimHarness(t, warp), l.Kernel, l.Grid, l.Block, clone32(x), make([]byte, 4*len(rows)), n)
		for i, w := range want {
			if got := int32(binary.LittleEndian.Uint32(out[1][4*i:])); got != w {
				t.Errorf("warp=%d row %d: %d, twin %d", warp, i, got, w)
			}
		}
	}
}
