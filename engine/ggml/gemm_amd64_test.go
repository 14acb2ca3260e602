//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestTilesMatchLanes runs every kernel tier this CPU has (not only the
// one installed) against the lane twins, bit for bit.
func TestTilesMatchLanes(t *testing.T) {
	tiers := testTiers(t)
	r := rand.New(rand.NewPCG(25, 26))
	for _, tier := range tiers {
		for tp, k := range tier {
			for _, shape := range [][3]int{{32, 1, 1}, {64, 2, 4}, {96, 7, 5}, {256, 8, 8}, {1024, 11, 13}, {64, 9, 16}, {128, 4, 21}, {32, 6, 8},
				{64, 5, 2}, {96, 6, 3}, {128, 9, 7}, {64, 12, 6}, {160, 17, 12}, {32, 3, 2}} {
				n, rows, cols := shape[0], shape[1], shape[2]
				g := newGemmCase(r, tp, n, rows, cols)
				tierPrep(t, k)
				for i, group := range []int{1, zGroup(k), zGroup(k), zGroup(k)} {
					zFull = i == 2     // the full groups through gemmz_amd64.s
					rowsOuter = i != 3 // each group over all rows
					var a Act
					a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, group)
					ldd := rows + 2
					got := nanSlice(cols * ldd)
					k.run(n, g.w, rows, &a, got, ldd)
					name := fmt.Sprintf("%v %s group %d n=%d %dx%d", tp, k.tier, a.group, n, rows, cols)
					checkGemm(t, name, got, g.want(tp, lanesTwin[tp], ldd), rows, ldd)
				}
				zFull, rowsOuter = false, true
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
	if cpu.X86.HasAVXVNNI {
		tiers["avxvnni"] = withTier(avx2Tiles, avxvnniTiles)
	}
	for name, tier := range tiers {
		for _, tp := range []Type{Q4_0, Q8_0} {
			for _, cols := range []int{1, 64} {
				b.Run(fmt.Sprintf("%v/%s/cols=%d", tp, name, cols), func(b *testing.B) {
					k := tier[tp]
					tierPrep(b, k)
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

// testTiers is every kernel tier this CPU can run (skipping without AVX2,
// saying so when the VNNI tier is left out).
func testTiers(t *testing.T) []map[Type]*tileSet {
	t.Helper()
	if !hasAVX2 {
		t.Skip("skipping: no AVX2")
	}
	tiers := []map[Type]*tileSet{avx2Tiles}
	if hasVNNI {
		tiers = append(tiers, vnniTiles)
	} else {
		t.Log("no AVX-512 VNNI: that tier is not checked here")
	}
	if cpu.X86.HasAVXVNNI {
		tiers = append(tiers, withTier(avx2Tiles, avxvnniTiles))
	} else {
		t.Log("no AVX-VNNI: that tier is not checked here")
	}
	return tiers
}

// tierPrep makes the Act preparation follow k's tier (the hi16 lanes are
// the VNNI tier's, not the AVX-VNNI one's) until the test ends.
func tierPrep(tb testing.TB, k *tileSet) {
	saved := prepHi16
	prepHi16 = k.tier != "avxvnni"
	tb.Cleanup(func() { prepHi16 = saved })
}

// zGroup is the column group of k's 512-bit tiles (1: it has none).
func zGroup(k *tileSet) int {
	if k.z {
		return 8
	}
	return 1
}

// BenchmarkFlat compares, in one run, the Q4_0/Q8_0 batched decode step of
// BenchmarkBatchDecode under the previous dispatch (old: strips and 256-bit
// tiles below 8 columns, the 4×8 tile padded for a partial group of 8) and
// the flat kernels (flat; flatz: with the 4×8 tile for full groups;
// flatg: each column group over all rows before the next). t1 and t2 are
// one and two threads timed by CPU time (benchBatchCPU, benchBatchCPU2).
// Q4_0 has no 4×8 tile since its groups took the pair layout: its full
// groups run the flat kernel in every variant, and old differs from flat
// only below 8 columns.
func BenchmarkFlat(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	defer setFlat("flat")
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}} {
			rows, n := sh[0], sh[1]
			b.Run(fmt.Sprintf("%v/%dx%d", tp, rows, n), func(b *testing.B) {
				set, w, _ := streamSet(b, tp, rows, n, 1)
				for _, th := range []int{1, 2} {
					for _, T := range []int{1, 2, 3, 4, 6, 8, 12, 16} {
						for _, v := range []string{"old", "flat", "flatz", "flatg"} {
							b.Run(fmt.Sprintf("t%d/T%d/%s", th, T, v), func(b *testing.B) {
								setFlat(v)
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
}

func setFlat(v string) {
	flatGEMM, zFull, groupMin, rowsOuter = v != "old", v == "old" || v == "flatz", 2, v == "flat"
	if v == "old" {
		groupMin = 8
	}
}

// TestFlatQ4_0Widths runs the Q4_0 flat kernels over the pair layout at
// every batch width of batched decode (2-17 columns: full and partial
// groups, odd widths), row counts with every remainder below 4, and
// short and long rows, against the lane twin bit for bit. One Act is
// reused from the widest batch down, so stale lanes of an earlier batch
// would show in a partial group.
func TestFlatQ4_0Widths(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI: the flat kernels do not run here")
	}
	k := vnniTiles[Q4_0]
	r := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{32, 160, 2048} {
		var a Act
		for cols := 17; cols >= 2; cols-- {
			for _, rows := range []int{1, 2, 3, 4, 5, 7, 13} {
				g := newGemmCase(r, Q4_0, n, rows, cols)
				a.prepare(Q4_0, n, g.x, cols, prepKindQ8, k.off, 8)
				if !a.pairs {
					t.Fatal("Q4_0 groups of 8 not in the pair layout")
				}
				ldd := rows + 1
				got := nanSlice(cols * ldd)
				k.run(n, g.w, rows, &a, got, ldd)
				checkGemm(t, fmt.Sprintf("n=%d %dx%d", n, rows, cols), got, g.want(Q4_0, dotQ4_0Lanes, ldd), rows, ldd)
			}
		}
	}
}

// TestF16TileA holds the AVX2 tier's F16 matrix kernel (installed only
// without AVX-512, so called directly here) to the plain-Go twin of its
// order (dotF16QGo), bit for bit: tiles, leftover rows and columns,
// decode, with rows of 1 to 176 groups (no whole range, ranges with 0-3
// groups past them).
func TestF16TileA(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2")
	}
	r := rand.New(rand.NewPCG(16, 43))
	for _, shape := range [][3]int{{32, 4, 3}, {64, 7, 9}, {96, 6, 8}, {288, 13, 5}, {1024, 3, 1}, {64, 9, 1}, {96, 8, 2},
		{2048, 7, 11}, {64, 10, 13}, {4096, 4, 8}, {32, 2, 4}, {2080, 5, 6}, {5632, 8, 3},
		{128, 4, 3}, {160, 5, 4}, {416, 8, 6}, {480, 4, 7}, {224, 3, 3}} {
		n, rows, cols := shape[0], shape[1], shape[2]
		g := newGemmCase(r, F16, n, rows, cols)
		var a Act
		a.prepare(F16, n, g.x, cols, prepKindF32, 0, 1)
		ldd := rows + 1
		got := nanSlice(cols * ldd)
		gemmF16A(n, g.w, rows, &a, got, ldd)
		checkGemm(t, fmt.Sprintf("F16 avx2 n=%d %dx%d", n, rows, cols), got, g.want(F16, dotF16QGo, ldd), rows, ldd)
	}
}

// TestF16TilesZ holds the AVX-512 tier's F16 prefill tiles to the row
// kernel's plain-Go twin, bit for bit, with the 4-row tiles reading
// float32 columns and F16 ones (f16Cols46 picks one by CPU; both run
// here): every column count from 3 to 20 (6-, 4- and 3-column tiles and
// the strips after them), leftover rows, n up to 5632 (K-blocked past
// 2048 with F16 columns: f16h46K).
func TestF16TilesZ(t *testing.T) {
	if !hasAVX512 {
		t.Skip("skipping: no AVX-512 (the AVX2 tier's F16 tile is TestF16TileA's)")
	}
	defer func(v bool) { f16Cols46 = v }(f16Cols46)
	r := rand.New(rand.NewPCG(16, 46))
	k := &floatTiles{F16}
	for _, h := range []bool{false, true} {
		f16Cols46 = h
		for cols := 3; cols <= 20; cols++ {
			for _, sh := range [][2]int{{32, 4}, {96, 7}, {2048, 9}, {2080, 9}, {2080, 33}, {5632, 5}, {5632, 37}} {
				n, rows := sh[0], sh[1]
				g := newGemmCase(r, F16, n, rows, cols)
				var a Act
				a.prepare(F16, n, g.x, cols, prepKindF32, 0, 1)
				ldd := rows + 1
				got := nanSlice(cols * ldd)
				k.runF16(n, g.w, rows, &a, got, ldd)
				checkGemm(t, fmt.Sprintf("F16 avx512 F16 columns %v n=%d %dx%d", h, n, rows, cols), got, g.want(F16, goDot[F16], ldd), rows, ldd)
			}
		}
	}
}

// TestF16Tail: f16Tail covers every column once, with tiles of 6, 4 and
// 3, and leaves the strips nothing from 7 columns on.
func TestF16Tail(t *testing.T) {
	for cols := 3; cols <= 600; cols++ {
		n6, tails, nt := f16Tail(cols)
		tail := tails[:nt]
		sum := 6 * n6
		for _, w := range tail {
			if w != 3 && w != 4 {
				t.Fatalf("%d columns: tail %v", cols, tail)
			}
			sum += w
		}
		if sum > cols || (cols >= 7 && sum != cols) || cols-sum > 2 {
			t.Fatalf("%d columns: %d×6 + %v leaves %d to the strips", cols, n6, tail, cols-sum)
		}
		if cols >= 12 && n6 < cols/6-1 {
			t.Fatalf("%d columns: only %d tiles of 6", cols, n6)
		}
	}
	if n6, tail, nt := f16Tail(128); n6 != 20 || nt != 2 || tail[0] != 4 || tail[1] != 4 {
		t.Fatalf("128 columns: %d×6 + %v, want 20×6 + [4 4]", n6, tail[:nt])
	}
}

// BenchmarkF16TileA runs the AVX2 F16 tile the way gemmF16A does on
// TinyLlama's shapes (64-row chunks against 128 columns), and alone on 4
// rows and 3 columns that stay in L1 (the kernel's ceiling). GMAC/s per
// CPU second.
func BenchmarkF16TileA(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	tile := func(n int, w []byte, a *Act, c int, out []float32, ldo int, s *[384]float32) {
		f16t43A(&w[0], 2*n, &a.xf[c*n], 4*n, n/32, &out[0], 4*ldo, &s[0])
	}
	const chunk, cols = 64, 128
	for _, sh := range [][2]int{{5632, 2048}, {2048, 5632}, {2048, 2048}, {4, 2048}} {
		rows, n := sh[0], sh[1]
		r := rand.New(rand.NewPCG(1, 1))
		g := newGemmCase(r, F16, n, min(rows, chunk), cols)
		var a Act
		a.prepare(F16, n, g.x, cols, prepKindF32, 0, 1)
		set := make([]byte, 0, rows*2*n) // rows of the matrix, repeating the case's
		for len(set) < rows*2*n {
			set = append(set, g.w[:min(len(g.w), rows*2*n-len(set))]...)
		}
		dst := make([]float32, rows*cols)
		b.Run(fmt.Sprintf("%dx%d", rows, n), func(b *testing.B) {
			var s [384]float32
			macs := 0
			ns := cpuTimed(b, func() {
				if rows == 4 { // in L1: the first 3 columns, repeated
					for i := 0; i < 16384; i++ {
						tile(n, set, &a, 0, dst, rows, &s)
					}
					macs = 16384 * 12 * n
					return
				}
				for r0 := 0; r0 < rows; r0 += chunk {
					for c := 0; c+3 <= cols; c += 3 {
						for r := r0; r < r0+chunk; r += 4 {
							tile(n, set[r*2*n:], &a, c, dst[c*rows+r:], rows, &s)
						}
					}
				}
				macs = rows * n * (cols / 3 * 3)
			})
			b.ReportMetric(float64(macs)/ns, "GMAC/s")
		})
	}
}

// f16ExtremeW and f16ExtremeX are the F16 weights and column values the
// AVX2 tier's F16 kernel tests draw from in their extreme runs: ±65504
// against ±1 and 65504, subnormals, 1.
var f16ExtremeW, f16ExtremeX = []uint16{0x7bff, 0xfbff, 0x0001, 0x8003, 0x3c00}, []uint16{0x3c00, 0xbc00, 0x7bff, 0x0200}

// TestF16QuartersAsm holds the AVX2 tier's F16 row kernel (dotF16QAVX) to
// its plain-Go twin bit for bit, on every length from 0 to 300 and longer
// rows with and without octets and elements past the four ranges, on
// random values and on extreme ones (±65504 against ±1, subnormals).
func TestF16QuartersAsm(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2")
	}
	r := rand.New(rand.NewPCG(16, 5))
	ns := []int{512, 1000, 2048, 2083, 2088, 5632, 5639}
	for n := 0; n <= 300; n++ {
		ns = append(ns, n)
	}
	wx, xx := f16ExtremeW, f16ExtremeX
	for _, n := range ns {
		for _, extreme := range []bool{false, true} {
			w, x := randomRow(r, F16, n), randomActivation(r, F16, n)
			if extreme {
				for i := 0; i < n; i++ {
					bytesU16(w)[i], bytesU16(x)[i] = wx[r.IntN(len(wx))], xx[r.IntN(len(xx))]
				}
			}
			got, want := dotF16QAsm(n, w, x), dotF16QGo(n, w, x)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d extreme=%v: dotF16QAVX %v, dotF16QGo %v", n, extreme, got, want)
			}
		}
	}
}

// TestF16Rows4Q holds the AVX2 tier's F16 decode (rows4Q: four rows at a
// time through f16r4QAVX, the rest through dotF16QAVX) to dotF16QGo bit
// for bit, on every multiple of 8 up to 400 and longer rows with and
// without octets past the four ranges, 1–2 columns, row counts that do
// and do not fill the last group of four, random and extreme values;
// with f16R4MinN at 0 and above every n (the row kernel row after row,
// as on Zen 3 for short rows).
func TestF16Rows4Q(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2")
	}
	defer func(saved int) { f16R4MinN = saved }(f16R4MinN)
	for _, f16R4MinN = range []int{0, 1 << 20} {
		testF16Rows4Q(t)
	}
}

func testF16Rows4Q(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 6))
	ns := []int{512, 768, 1000, 2048, 2088, 5632, 5640}
	for n := 8; n <= 400; n += 8 {
		ns = append(ns, n)
	}
	wx, xx := f16ExtremeW, f16ExtremeX
	for _, n := range ns {
		for _, extreme := range []bool{false, true} {
			rows, cols := 4+r.IntN(7), 1+r.IntN(2)
			w, x := randomRow(r, F16, rows*n), randomActivation(r, F16, cols*n)
			if extreme {
				for i := 0; i < rows*n; i++ {
					bytesU16(w)[i] = wx[r.IntN(len(wx))]
				}
				for i := 0; i < cols*n; i++ {
					bytesU16(x)[i] = xx[r.IntN(len(xx))]
				}
			}
			var a Act
			a.Prepare(F16, n, x, cols)
			dst := make([]float32, cols*rows)
			rows4Q(n, w, rows, &a, 0, dst, rows)
			for c := 0; c < cols; c++ {
				for m := 0; m < rows; m++ {
					want := dotF16QGo(n, w[2*n*m:2*n*(m+1)], x[2*n*c:2*n*(c+1)])
					if got := dst[c*rows+m]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("f16R4MinN=%d n=%d rows=%d extreme=%v: row %d column %d: rows4Q %v, dotF16QGo %v", f16R4MinN, n, rows, extreme, m, c, got, want)
					}
				}
			}
		}
	}
}

// TestCPUFamily checks cpuFamily's decoding of CPUID leaf 1 (which picks
// the F16 decode kernel on AMD): every CPU with AVX2 is of family 6 or
// later (Intel's are 6), AMD's of 0x15 (Excavator) or later.
func TestCPUFamily(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2 (cpuFamily is only called on AVX2 CPUs)")
	}
	f := cpuFamily()
	if cpuIsAMD() && (f < 0x15 || f > 0x40) || !cpuIsAMD() && (f < 6 || f > 0x40) {
		t.Fatalf("cpuFamily() = %#x (signature %#x, AMD %v)", f, cpuSignature(), cpuIsAMD())
	}
	t.Logf("CPU family %#x (signature %#x), F16 decode four rows at a time from n = %d", f, cpuSignature(), f16R4MinN)
}
