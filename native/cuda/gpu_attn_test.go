package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// GPU tests of the split decode, the tiled prefill and the argmax against
// their twins (warp 32), bit for bit; they skip without a device.

func TestGPUAttnSplit(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(69, 70))
	for _, shape := range [][4]int{{513, 64, 4, 4}, {4099, 128, 32, 8}} {
		nKV, hd, nHead, nKVHead := shape[0], shape[1], shape[2], shape[3]
		stride := nKVHead * hd
		q := randFloats(r, nHead*hd, 2)
		scale := float32(1 / math.Sqrt(float64(hd)))
		for _, kvt := range []WeightType{WeightF32, WeightF16, WeightQ8_0} {
			kb, vb := kvCache(r, kvt, nKV, stride, 1), kvCache(r, kvt, nKV, stride, 1)
			want, phi := make([]float32, nHead*hd), nanPhi(nHead)
			scr := make([]float32, AttnSplitScratch(nHead, nKV, hd))
			got, gotPhi := make([]float32, nHead*hd), slices.Clone(phi)
			gpuDo(t, c, func(g *gpuBufs) {
				dq, dk, dv, dp := g.f32(q), g.upload(kb), g.upload(vb), g.f32(phi)
				ds, do := g.f32(scr), g.f32(got)
				for step := range 2 { // cold, then warm
					Twin{Warp: cudaWarp}.AttnSplit(kvt, q, kb, vb, phi, scr, want, nKV, hd, nHead, nKVHead, stride, scale)
					must(t, k.AttnSplit(g.s, kvt, dq, dk, dv, dp, ds, do, nKV, hd, nHead, nKVHead, stride, scale))
					g.download(got, do)
					g.download(gotPhi, dp)
					name := fmt.Sprintf("split %v nKV=%d heads %d/%d step %d", kvt, nKV, nHead, nKVHead, step)
					checkULP(t, name, got, want, 0)
					checkULP(t, name+" φ", gotPhi, phi, 0)
				}
			})
		}
	}
}

func TestGPUAttnPrefill(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(71, 72))
	for _, shape := range [][5]int{{1, 40, 64, 4, 2}, {37, 0, 128, 8, 2}, {517, 300, 128, 32, 8}, {20, 3, 256, 2, 2}} {
		nTok, nPast, hd, nHead, nKVHead := shape[0], shape[1], shape[2], shape[3], shape[4]
		stride := nKVHead * hd
		q := randFloats(r, nTok*nHead*hd, 2)
		scale := float32(1 / math.Sqrt(float64(hd)))
		for _, kvt := range []WeightType{WeightF32, WeightF16, WeightQ8_0} {
			kb, vb := kvCache(r, kvt, nPast+nTok, stride, 1), kvCache(r, kvt, nPast+nTok, stride, 1)
			want, got := make([]float32, len(q)), make([]float32, len(q))
			attnPrefillTwin(kvt, q, kb, vb, want, nTok, nPast, hd, nHead, nKVHead, stride, scale)
			gpuDo(t, c, func(g *gpuBufs) {
				do := g.f32(got)
				must(t, k.AttnPrefill(g.s, kvt, g.f32(q), g.upload(kb), g.upload(vb), do, nTok, nPast, hd, nHead, nKVHead, stride, scale))
				g.download(got, do)
			})
			checkULP(t, fmt.Sprintf("prefill %v T=%d past=%d hd=%d heads %d/%d", kvt, nTok, nPast, hd, nHead, nKVHead), got, want, 0)
		}
	}
}

func TestGPUArgmax(t *testing.T) {
	c, k := gpuKernels(t)
	r := rand.New(rand.NewPCG(73, 74))
	const n = 128257
	var x []float32
	rows := argmaxRows(r, n)
	for _, row := range rows {
		x = append(x, row...)
	}
	want, got := argmaxTwin(x, n), make([]byte, 4*len(rows))
	gpuDo(t, c, func(g *gpuBufs) {
		dy := g.upload(got)
		must(t, k.Argmax(g.s, g.f32(x), dy, n, len(rows)))
		g.downloadBytes(got, dy)
	})
	for i, w := range want {
		if g := int32(uint32(got[4*i]) | uint32(got[4*i+1])<<8 | uint32(got[4*i+2])<<16 | uint32(got[4*i+3])<<24); g != w {
			t.Errorf("row %d: argmax %d, twin %d", i, g, w)
		}
	}
}
