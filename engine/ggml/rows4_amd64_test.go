//go:build amd64 && !noasm

package ggml

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestRows4MatchesRowMajor holds the kernels on the interleaved layout to
// the row-major ones of the same tier, bit for bit, over every dispatch
// path (strips, 4×4 tiles, the flat kernels in groups of 8, partial
// groups, tail rows past the last group of 4), and the layout's
// conversions to their inverses.
func TestRows4MatchesRowMajor(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2, the first tier that has the interleaved kernels")
	}
	tiers := [][2]map[Type]*tileSet{{avx2Tiles, avx2Rows4}}
	if hasVNNI {
		tiers = append(tiers, [2]map[Type]*tileSet{vnniTiles, vnniRows4})
	} else {
		t.Log("no AVX-512 VNNI: its interleaved kernels are not tested")
	}
	if cpu.X86.HasAVXVNNI {
		tiers = append(tiers, [2]map[Type]*tileSet{withTier(avx2Tiles, avxvnniTiles), withTier(avx2Rows4, avxvnniRows4)})
	} else {
		t.Log("no AVX-VNNI: its interleaved kernels are not tested")
	}
	r := rand.New(rand.NewPCG(18, 4))
	for _, tier := range tiers {
		for tp, k4 := range tier[1] {
			k := tier[0][tp]
			// The layout is the tier's (the AVX2 Q4_0 pairs), whichever tier
			// this CPU installed.
			// The AMX tier's tile layout is tested in amx_amd64_test.go.
			defer func(saved, saved16 bool) { rows4Pairs[tp], tileRows16[tp] = saved, saved16 }(rows4Pairs[tp], tileRows16[tp])
			rows4Pairs[tp], tileRows16[tp] = k4.pairs, false
			tierPrep(t, k)
			for _, shape := range [][3]int{{32, 4, 1}, {64, 5, 1}, {96, 7, 2}, {256, 8, 3}, {1024, 11, 4}, {64, 9, 5},
				{128, 4, 7}, {32, 6, 8}, {288, 13, 9}, {160, 17, 12}, {64, 16, 16}, {2048, 21, 17}, {96, 3, 6}, {64, 12, 40}} {
				n, rows, cols := shape[0], shape[1], shape[2]
				g := newGemmCase(r, tp, n, rows, cols)
				il := append([]byte(nil), g.w...)
				InterleaveRows4(tp, n, il, rows, nil)
				if rows >= 4 && n > 32 && bytes.Equal(il, g.w) { // one block per row: the same layout
					t.Fatalf("%v n=%d rows=%d: interleaving changed nothing", tp, n, rows)
				}
				for row := 0; row < rows; row++ {
					rs := tp.RowSize(n)
					if got := Rows4Row(tp, n, il, rows, row, make([]byte, rs)); !bytes.Equal(got, g.w[row*rs:(row+1)*rs]) {
						t.Fatalf("%v n=%d rows=%d: Rows4Row(%d) differs from the row", tp, n, rows, row)
					}
				}
				back := append([]byte(nil), il...)
				DeinterleaveRows4(tp, n, back, rows, nil)
				if !bytes.Equal(back, g.w) {
					t.Fatalf("%v n=%d rows=%d: deinterleave(interleave(w)) != w", tp, n, rows)
				}
				for i, group := range []int{1, zGroup(k), zGroup(k)} {
					rowsOuter = i != 2
					var a Act
					a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, group)
					ldd := rows + 2
					want, got := nanSlice(cols*ldd), nanSlice(cols*ldd)
					k.run(n, g.w, rows, &a, want, ldd)
					k4.run(n, il, rows, &a, got, ldd)
					name := fmt.Sprintf("%s %v group %d n=%d %dx%d", k.tier, tp, a.group, n, rows, cols)
					for c := 0; c < cols; c++ {
						for row := 0; row < rows; row++ {
							if w, h := want[c*ldd+row], got[c*ldd+row]; w != h {
								t.Fatalf("%s: row %d col %d: interleaved %g, row-major %g", name, row, c, h, w)
							}
						}
					}
					// And through the exported entry point, on the rows of a
					// chunk that starts on a group (as the engine splits them).
					if rows >= 8 && group == zGroup(k) && gemmRows4[tp] != nil && tierOf(tp) == k.tier {
						checkRows4From4(t, name, tp, n, il, rows, &a, want, ldd)
					}
				}
				rowsOuter = true
			}
		}
	}
}

// tierOf is the tier whose kernels MatMulActRows4 runs for tp here.
func tierOf(tp Type) string {
	if b16On[tp] {
		return "amx"
	}
	if hasVNNI {
		return vnniTiles[tp].tier
	}
	if k := avxvnniTiles[tp]; hasAVXVNNI && k != nil {
		return k.tier
	}
	return avx2Tiles[tp].tier
}

// BenchmarkRows4Stream streams the decode strip over a set larger than the
// last-level cache, row-major and interleaved, in the thread's CPU time.
func BenchmarkRows4Stream(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	for _, sh := range [][2]int{{5632, 2048}, {2048, 5632}} {
		rows, n := sh[0], sh[1]
		for _, c := range []struct {
			tp Type
			il bool
		}{{Q4_0, false}, {Q4_0, true}, {Q8_0, false}, {Q8_0, true}, {Q4_0, false}, {Q4_0, true}, {Q8_0, false}, {Q8_0, true}} {
			tp, il := c.tp, c.il
			b.Run(fmt.Sprintf("%v/%dx%d/rows4=%v", tp, rows, n, il), func(b *testing.B) {
				set, w, x := streamSet(b, tp, rows, n, 1)
				if il {
					for off := 0; off < len(set); off += len(w) {
						InterleaveRows4(tp, n, set[off:off+len(w)], rows, nil)
					}
				}
				var a Act
				a.Prepare(tp, n, x, 1)
				dst := make([]float32, rows)
				ns := cpuTimed(b, func() { passCopies(tp, n, rows, set, len(w), &a, dst, il) })
				b.ReportMetric(float64(len(set))/ns, "cpuGB/s")
			})
		}
	}
}

// BenchmarkRows4Prompt compares the prompt kernels (groups of 8 columns)
// row-major and interleaved on a matrix in cache, in CPU time.
func BenchmarkRows4Prompt(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	for _, sh := range [][3]int{{768, 768, 64}, {2048, 2048, 64}, {768, 768, 8}} {
		rows, n, cols := sh[0], sh[1], sh[2]
		for _, c := range []struct {
			tp Type
			il bool
		}{{Q4_0, false}, {Q4_0, true}, {Q8_0, false}, {Q8_0, true}} {
			tp, il := c.tp, c.il
			b.Run(fmt.Sprintf("%v/%dx%d/cols=%d/rows4=%v", tp, rows, n, cols, il), func(b *testing.B) {
				r := rand.New(rand.NewPCG(3, 3))
				g := newGemmCase(r, tp, n, rows, cols)
				k := vnniTiles[tp]
				if il {
					InterleaveRows4(tp, n, g.w, rows, nil)
					k = vnniRows4[tp]
				}
				var a Act
				a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, zGroup(k))
				dst := make([]float32, rows*cols)
				ns := cpuTimed(b, func() { k.run(n, g.w, rows, &a, dst, rows) })
				b.ReportMetric(float64(n*rows*cols)/ns, "GMAC/cpu-s")
			})
		}
	}
}

// checkRows4From4 runs MatMulActRows4 over the interleaved rows × n matrix
// il from row 4 on (a chunk that starts on a group, as the engine splits
// rows) and compares every value with want (dst[c·ldd + row]) bit for bit.
func checkRows4From4(t *testing.T, name string, tp Type, n int, il []byte, rows int, a *Act, want []float32, ldd int) {
	t.Helper()
	rs := tp.RowSize(n)
	sub := nanSlice(a.cols * ldd)
	MatMulActRows4(tp, n, il[4*rs:], rows-4, a, sub[4:], ldd)
	for c := 0; c < a.cols; c++ {
		for row := 4; row < rows; row++ {
			if math.Float32bits(sub[c*ldd+row]) != math.Float32bits(want[c*ldd+row]) {
				t.Fatalf("%s: MatMulActRows4 from row 4: row %d col %d: %v, want %v", name, row, c, sub[c*ldd+row], want[c*ldd+row])
			}
		}
	}
}
