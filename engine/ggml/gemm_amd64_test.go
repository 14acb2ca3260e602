//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTilesMatchLanes runs every kernel tier this CPU has (not only the
// one installed) against the lane twins, bit for bit.
func TestTilesMatchLanes(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	tiers := []map[Type]*tileSet{avx2Tiles}
	if hasVNNI {
		tiers = append(tiers, vnniTiles)
	} else {
		t.Log("no AVX-512 VNNI: that tier is not checked here")
	}
	r := rand.New(rand.NewPCG(25, 26))
	for _, tier := range tiers {
		for tp, k := range tier {
			for _, shape := range [][3]int{{32, 1, 1}, {64, 2, 4}, {96, 7, 5}, {256, 8, 8}, {1024, 11, 13}, {64, 9, 16}, {128, 4, 21}, {32, 6, 8}} {
				n, rows, cols := shape[0], shape[1], shape[2]
				g := newGemmCase(r, tp, n, rows, cols)
				for _, group := range []int{1, zGroup(k)} {
					var a Act
					a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, group)
					ldd := rows + 2
					got := nanSlice(cols * ldd)
					k.run(n, g.w, rows, &a, got, ldd)
					name := fmt.Sprintf("%v %s group %d n=%d %dx%d", tp, k.tier, a.group, n, rows, cols)
					checkGemm(t, name, got, g.want(tp, lanesTwin[tp], ldd), rows, ldd)
				}
			}
		}
	}
}

// BenchmarkTiles measures each tier's kernels on a 256x2048 matrix that
// stays in cache: the compute ceiling. cols=1 is decode (4-row strips),
// cols=64 prefill (tiles). GMAC/s counts multiply-adds per CPU second.
func BenchmarkTiles(b *testing.B) {
	tiers := map[string]map[Type]*tileSet{"avx2": avx2Tiles}
	if hasVNNI {
		tiers["vnni"] = vnniTiles
	}
	for name, tier := range tiers {
		for _, tp := range []Type{Q4_0, Q8_0} {
			for _, cols := range []int{1, 64} {
				b.Run(fmt.Sprintf("%v/%s/cols=%d", tp, name, cols), func(b *testing.B) {
					k := tier[tp]
					r := rand.New(rand.NewPCG(1, 1))
					n, rows := 2048, 256
					g := newGemmCase(r, tp, n, rows, cols)
					var a Act
					a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, zGroup(k))
					dst := make([]float32, rows*cols)
					cpuTimed(b, func() { k.run(n, g.w, rows, &a, dst, rows) })
					b.ReportMetric(float64(n*rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s-wall")
				})
			}
		}
	}
}

// zGroup is the column group of k's 512-bit tiles (1: it has none).
func zGroup(k *tileSet) int {
	if k.z {
		return 8
	}
	return 1
}
