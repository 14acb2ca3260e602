//go:build amd64 && !noasm

package ggml

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestKKernelsMatchLanes: the K-quant single-row kernels, 4-row strips and
// 1×8 tiles equal the lane twins bit for bit, over odd row counts, column
// counts around the tile width, poisoned bytes after the operands and
// guard cells between output columns.
func TestKKernelsMatchLanes(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(33, 34))
	for tp, twin := range kLanesTwin {
		// Single rows (Q5_K too: it has no strips yet, but the same chain).
		for _, n := range kernelSizes(tp) {
			w, x := withGuard(randomRow(r, tp, n)), withGuard(randomActivation(r, Q8_K, n))
			if got, want := VecDot(tp, n, w, x), twin(n, w, x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v n=%d: single-row kernel %v, twin %v", tp, n, got, want)
			}
		}
		if gemmImpl[tp] == nil {
			continue
		}
		for _, shape := range kGemmShapes {
			n, rows, cols := shape[0], shape[1], shape[2]
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			ldd := rows + 2
			got := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, got, ldd)
			name := fmt.Sprintf("%v n=%d %dx%d", tp, n, rows, cols)
			checkGemm(t, name, got, g.want(tp, twin, ldd), rows, ldd)
			// The strips alone (decode), with guard cells after dst,
			// every variant this CPU runs.
			for _, v := range kStripVariants(tp) {
				restore := useStrip(tp, v.f)
				dst := nanSlice(rows + 3)
				MatVec(tp, n, g.w, a.Column(0), dst[:rows])
				restore()
				checkGemm(t, name+" strips "+v.name, dst, g.want(tp, twin, rows+3)[:rows+3], rows, rows+3)
			}
		}
	}
}

// BenchmarkKDecode measures the K-quant decode kernels on a 256x2048
// matrix in cache, one column: the 4-row strips (MatVec as installed)
// against the single-row kernel applied row by row (the previous path).
// GMAC/s counts multiply-adds per second of the thread's CPU time.
func BenchmarkKDecode(b *testing.B) {
	for _, tp := range []Type{Q4_K, Q6_K} {
		for _, path := range []string{"strips", "rows"} {
			b.Run(fmt.Sprintf("%v/%s", tp, path), func(b *testing.B) {
				ws, x := benchWeights(tp, 256, 2048)
				w, dst := ws[0], make([]float32, 256)
				mv := matVecImpl[tp]
				if path == "rows" {
					mv = rowsMatVec(tp, dotImpl[tp])
				}
				ns := cpuTimed(b, func() { mv(2048, w, x, dst) })
				b.ReportMetric(256*2048/ns, "GMAC/s")
			})
		}
	}
}

type stripVariant struct {
	name string
	f    stripFunc
}

// kStripVariants are the decode strips of tp this CPU can run.
func kStripVariants(tp Type) []stripVariant {
	var vs []stripVariant
	switch tp {
	case Q4_K:
		vs = append(vs, stripVariant{"avx2", q4kx4})
		if hasKVNNI {
			vs = append(vs, stripVariant{"vnni", q4kx4V})
		}
	case Q6_K:
		vs = append(vs, stripVariant{"avx2", q6kx4})
		if hasKVNNI {
			vs = append(vs, stripVariant{"vnni", q6kx4V})
		}
	}
	return vs
}

// useStrip installs f as tp's strip and returns the function restoring the
// previous one.
func useStrip(tp Type, f stripFunc) func() {
	p := &q4kStrip
	if tp == Q6_K {
		p = &q6kStrip
	}
	old := *p
	*p = f
	return func() { *p = old }
}

// TestKFlatMatchesLanes runs the Q4_K and Q6_K flat kernels (groups of 8
// columns) at every width from 2 to 25 columns (a last group of 4-7 or
// 5-7 padded with zero columns, fewer leftover columns on the strips), in
// one pass and (n = 4608, 8960) in ranges of super-blocks, one Act
// reused from the widest down, on random rows and on rows and columns at
// the extremes (Q6_K: q = 0 or 63, scales 127/−128; Q4_K: nibbles 0 or
// 15, 6-bit scales and mins 0 or 63; activations −128 or 127: the largest
// pair sums), against the lane twins bit for bit.
func TestKFlatMatchesLanes(t *testing.T) {
	if !kFlat {
		t.Skip("no AVX-512 BW/VNNI: the K-quant flat kernels do not run here")
	}
	r := rand.New(rand.NewPCG(35, 36))
	for tp, twin := range map[Type]dotFunc{Q4_K: dotQ4_KLanes, Q6_K: dotQ6_KLanes} {
		for _, extreme := range []bool{false, true} {
			for _, n := range []int{256, 768, 2048, 4608, 8960} { // past kfMaxBytes: ranges of super-blocks
				var a Act
				for cols := 25; cols >= 2; cols-- {
					rows := 1 + cols%5
					if cols == 9 || cols == 5 {
						rows = kfRows + 6 // two blocks of rows for the ranges of super-blocks
					}
					g := newGemmCase(r, tp, n, rows, cols)
					if extreme {
						if tp == Q6_K {
							extremeQ6K(r, g.w, n*rows)
						} else {
							extremeQ4K(r, g.w, n*rows)
						}
						extremeQ8K(r, g.x, n*cols)
					}
					a.Prepare(tp, n, g.x, cols)
					if (len(a.kf) > 0) != (a.kfCols() > 0) || (cols >= 8 && len(a.kf) == 0) {
						t.Fatalf("%v n=%d %d columns: %d bytes prepared for the flat kernel", tp, n, cols, len(a.kf))
					}
					ldd := rows + 1
					got := nanSlice(cols * ldd)
					MatMulAct(tp, n, g.w, rows, &a, got, ldd)
					name := fmt.Sprintf("%v extreme=%v n=%d %dx%d", tp, extreme, n, rows, cols)
					checkGemm(t, name, got, g.want(tp, twin, ldd), rows, ldd)
				}
			}
		}
	}
}

// extremeQ4K sets every nibble of the Q4_K blocks in w (n values) to 0 or
// 15 and every 6-bit scale and min to 0 or 63, per block at random.
func extremeQ4K(r *rand.Rand, w []byte, n int) {
	for b := 0; b < n/QK_K; b++ {
		blk := w[144*b : 144*(b+1)]
		v := byte(0)
		if r.IntN(2) == 1 {
			v = 0xff
		}
		for i := 16; i < 144; i++ {
			blk[i] = v
		}
		for i := 4; i < 16; i++ {
			blk[i] = byte(0xff * r.IntN(2))
		}
	}
}

// extremeQ6K sets every 6-bit value of the Q6_K blocks in w (n values) to
// 0 or 63 and every scale to 127 or −128, per block at random.
func extremeQ6K(r *rand.Rand, w []byte, n int) {
	for b := 0; b < n/QK_K; b++ {
		blk := w[210*b : 210*(b+1)]
		v := byte(0)
		if r.IntN(2) == 1 {
			v = 0xff
		}
		for i := 0; i < 192; i++ {
			blk[i] = v
		}
		for i := 192; i < 208; i++ {
			blk[i] = byte(0x7f + r.IntN(2)) // 127 or −128
		}
	}
}

// extremeQ8K sets every value of the Q8_K blocks in x (n values) to −128
// or 127 per block at random, keeping the block sums consistent.
func extremeQ8K(r *rand.Rand, x []byte, n int) {
	for b := 0; b < n/QK_K; b++ {
		blk := x[292*b : 292*(b+1)]
		v := int8(-128)
		if r.IntN(2) == 1 {
			v = 127
		}
		for i := 4; i < 260; i++ {
			blk[i] = byte(v)
		}
		for j := 0; j < 16; j++ {
			put16(blk[260+2*j:], uint16(int16(16*int(v))))
		}
	}
}

// BenchmarkKFlat compares, in one run, the Q4_K and Q6_K batched decode
// step on the 1×8 AVX2 tiles (tile) and on the flat kernels (flat; both
// with strips for T < 8), as BenchmarkFlat:
// t1 one thread, t2 two locked threads, by CPU time; colGB/s is T times
// the weight bytes streamed per CPU second.
func BenchmarkKFlat(b *testing.B) {
	if !hasKVNNI {
		b.Skip("no AVX-512 BW/VNNI")
	}
	defer func() { kFlat = true }()
	for _, sh := range [][3]int{{int(Q6_K), 32000, 2048}, {int(Q6_K), 2048, 2048}, {int(Q6_K), 2048, 5632},
		{int(Q4_K), 2048, 2048}, {int(Q4_K), 5632, 2048}, {int(Q4_K), 2048, 5632}} {
		tp, rows, n := Type(sh[0]), sh[1], sh[2]
		b.Run(fmt.Sprintf("%v/%dx%d", tp, rows, n), func(b *testing.B) {
			set, w, _ := streamSet(b, tp, rows, n, 1)
			for _, th := range []int{1, 2} {
				for _, T := range []int{1, 4, 8, 12, 16} {
					for _, v := range []string{"tile", "flat"} {
						b.Run(fmt.Sprintf("t%d/T%d/%s", th, T, v), func(b *testing.B) {
							kFlat = v == "flat"
							if th == 1 {
								benchBatchCPU(b, tp, rows, n, T, set, len(w))
								return
							}
							benchBatchCPU2(b, tp, rows, n, T, set, len(w))
						})
					}
				}
			}
		})
	}
}

// TestKRows4MatchesLanes checks the AVX2 tier's interleaved Q4_K and Q6_K
// layouts (kTiles.rows4: q4kx4I/q6kx4I strips for fewer than 8 columns,
// q4kt18/q6kt18 tiles at a four-block super-block step for groups of 8,
// the rows past the last group row-major) against the lane twin bit for bit, at row counts that are
// and are not multiples of 4, 1–17 columns, through MatMulActRows4 from a
// chunk that starts on row 4 (as the engine splits rows), and the layout's
// round trip. CPUs with AVX-512 VNNI hold these types in the 16-row tile
// layout instead; the kernels run there all the same.
func TestKRows4MatchesLanes(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2, the tier of the interleaved K-quant kernels")
	}
	r := rand.New(rand.NewPCG(18, 6))
	for _, tp := range []Type{Q4_K, Q6_K} {
		twin := kLanesTwin[tp]
		for _, shape := range [][3]int{{256, 4, 1}, {512, 5, 1}, {768, 7, 2}, {256, 8, 3}, {768, 13, 8},
			{512, 9, 9}, {2048, 21, 17}, {256, 3, 1}, {768, 12, 16}, {1024, 16, 7}} {
			n, rows, cols := shape[0], shape[1], shape[2]
			g := newGemmCase(r, tp, n, rows, cols)
			rs := tp.RowSize(n)
			il := append([]byte(nil), g.w[:rows*rs]...)
			rows4Move(tp, n, il, rows, nil, true, false)
			if rows >= 4 && n > QK_K && bytes.Equal(il, g.w[:rows*rs]) {
				t.Fatalf("n=%d rows=%d: interleaving changed nothing", n, rows)
			}
			for row := 0; row < rows; row++ {
				if got := Rows4Row(tp, n, il, rows, row, make([]byte, rs)); !tileRows16[tp] && !bytes.Equal(got, g.w[row*rs:(row+1)*rs]) {
					t.Fatalf("n=%d rows=%d: Rows4Row(%d) differs from the row", n, rows, row)
				}
			}
			back := append([]byte(nil), il...)
			rows4Move(tp, n, back, rows, nil, false, false)
			if !bytes.Equal(back, g.w[:rows*rs]) {
				t.Fatalf("n=%d rows=%d: the round trip changed the matrix", n, rows)
			}
			var a Act
			a.Prepare(tp, n, g.x, cols)
			ldd := rows + 2
			want := g.want(tp, twin, ldd)
			got := nanSlice(cols * ldd)
			kTiles(tp).rows4(n, il, rows, &a, got, ldd)
			name := fmt.Sprintf("%v interleaved n=%d %dx%d", tp, n, rows, cols)
			checkGemm(t, name, got, want, rows, ldd)
			if rows >= 8 && gemmRows4[tp] != nil && !tileRows16[tp] {
				checkRows4From4(t, name, tp, n, il, rows, &a, want, ldd)
			}
		}
	}
}

// BenchmarkKRows4Prompt compares the AVX2 tier's K-quant prompt tiles on
// the interleaved layout (kTiles.rows4) with the row-major ones
// (kTiles.run), pass by pass on the same locked thread (wall time: the
// thread's CPU time moves in 4 ms steps on the VMs): a 2048×2048
// matrix in 64-row chunks (engine/model's chunkRows) against 128 columns,
// as a TinyLlama pp128 step; %rm is the median pass's time row-major over
// interleaved (above 100: the interleaved layout is faster).
func BenchmarkKRows4Prompt(b *testing.B) {
	for _, tp := range []Type{Q4_K, Q6_K} {
		b.Run(tp.String(), func(b *testing.B) {
			const rows, n, cols, chunk = 2048, 2048, 128, 64
			r := rand.New(rand.NewPCG(5, 6))
			g := newGemmCase(r, tp, n, rows, cols)
			rs := tp.RowSize(n)
			rm := g.w[:rows*rs]
			il := append([]byte(nil), rm...)
			rows4Move(tp, n, il, rows, nil, true, false)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			dst := make([]float32, cols*rows)
			k := kTiles(tp)
			pass := func(f func(n int, w []byte, rows int, a *Act, dst []float32, ldd int), w []byte) float64 {
				t0 := time.Now()
				for range 4 {
					for r0 := 0; r0 < rows; r0 += chunk {
						f(n, w[r0*rs:(r0+chunk)*rs], chunk, &a, dst[r0:], rows)
					}
				}
				return float64(time.Since(t0).Nanoseconds()) / 4
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ratios, trs, tis []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tr := pass(k.run, rm)
				ti := pass(k.rows4, il)
				ratios, trs, tis = append(ratios, tr/ti), append(trs, tr), append(tis, ti)
			}
			slices.Sort(ratios)
			slices.Sort(trs)
			slices.Sort(tis)
			b.ReportMetric(100*ratios[len(ratios)/2], "%rm")
			b.ReportMetric(trs[len(trs)/2]/1e6, "rm-ms")
			b.ReportMetric(tis[len(tis)/2]/1e6, "il-ms")
		})
	}
}
