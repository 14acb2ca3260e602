//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// r16Operands is amxCheckOperands with the activations in −127..127, as
// the Q8_0 quantizer makes them (the sign trick needs it); extreme: every
// weight at its largest magnitude (nibbles 15, Q8_0 −128) and the
// activations at ±127, a block's sign alternating, the sums' worst case.
func r16Operands(r *rand.Rand, t Type, n, rows, cols int, extreme bool) (w, x []byte) {
	w, x = amxCheckOperands(r, t, n, rows, cols)
	ts := t.TypeSize()
	for i := range x {
		if i%34 >= 2 && x[i] == 0x80 {
			x[i] = 0x81
		}
		if extreme && i%34 >= 2 {
			x[i] = 127
			if i/34%2 == 1 {
				x[i] = 0x81
			}
		}
	}
	if extreme {
		for i := range w {
			if i%ts >= 2 {
				w[i] = 0xff
				if t == Q8_0 {
					w[i] = 0x80
				}
			}
		}
	}
	return w, x
}

// r16Here is the fastest set of tile layout kernels below AMX that this
// CPU runs (AVX-VNNI even where AVX-512 VNNI would hide it from the tier).
func r16Here() [32]*r16Set {
	switch {
	case hasKVNNI:
		return r16VNNI
	case cpu.X86.HasAVXVNNI:
		return r16AVXVNNI
	}
	return r16AVX2
}

// TestR16Kernels: the AVX2 kernels over the tile layout (r16Gemm, every
// kernel: the group and four groups by one column, halves by 1-4 columns) give the block
// twin's bits for every row and column, over random and extreme operands,
// tails of rows past the last group, and an output stride past the rows
// whose guard cells stay untouched.
func TestR16Kernels(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: the AVX2 tile kernels need AVX2, FMA and F16C, which this CPU lacks")
	}
	sets := map[string][32]*r16Set{"avx2": r16AVX2}
	if cpu.X86.HasAVXVNNI {
		sets["avx-vnni"] = r16AVXVNNI
	} else {
		t.Log("the AVX-VNNI kernels are unchecked: this CPU lacks AVX-VNNI")
	}
	if hasKVNNI {
		sets["avx-512 vnni"] = r16VNNI
	} else {
		t.Log("the AVX-512 VNNI kernels are unchecked: this CPU lacks AVX-512 VNNI or BW")
	}
	// The AVX2 set's one-column path four ways: one group at a time, and
	// as 1-4 streams (the row counts leave 1-4 groups to the last calls)
	// with and without their software prefetch, over the quarters of the
	// groups or over consecutive groups.
	savedDec4, savedAhead4, savedSpread := r16Dec4, r16Ahead4, r16Spread
	t.Cleanup(func() { r16Dec4, r16Ahead4, r16Spread = savedDec4, savedAhead4, savedSpread })
	for _, d4 := range []struct {
		on     bool
		ahead  int
		spread bool
	}{{false, 0, true}, {true, 0, true}, {true, 4096, true}, {true, 0, false}} {
		r16Dec4, r16Ahead4, r16Spread = d4.on, d4.ahead, d4.spread
		checkR16Sets(t, sets, fmt.Sprintf("streams=%v ahead=%d spread=%v", d4.on, d4.ahead, d4.spread))
	}
}

func checkR16Sets(t *testing.T, sets map[string][32]*r16Set, how string) {
	r := rand.New(rand.NewPCG(16, 2))
	for name, set := range sets {
		for _, tp := range []Type{Q4_0, Q8_0} {
			for _, n := range []int{32, 96, 2048} {
				for _, rows := range []int{16, 33, 48, 64, 80, 129, 176, 200} {
					for _, cols := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 17} {
						for _, extreme := range []bool{false, true} {
							w, x := r16Operands(r, tp, n, rows, cols, extreme)
							rows16Move(tp, n, w, rows, nil, true)
							var a Act
							a.prepareB16(tp, n, x, cols, false)
							ldd := rows + 3
							want, got := nanSlice(cols*ldd), nanSlice(cols*ldd)
							b16Twin(tp, n, w, rows, 0, rows, &a, want, ldd)
							r16Gemm(tp, n, w, rows, &a, got, ldd, set[tp])
							checkGemm(t, fmt.Sprintf("%s %s %v n=%d rows=%d cols=%d extreme=%v", name, how, tp, n, rows, cols, extreme), got, want, rows, ldd)
						}
					}
				}
			}
		}
	}
}

// TestR16Encoding checks the AVX-VNNI kernels' BYTE-encoded vpdpbusd
// against GNU as.
func TestR16Encoding(t *testing.T) {
	checkByteEncodings(t, "r16_amd64.s", "{vex}")
}

// TestR16Dispatch: with the tile layout installed on the kernels of this
// CPU's tier below AMX (AVX-512 VNNI, AVX-VNNI or AVX2), Q4_0 and
// Q8_0 take it (groups of 16), and MatMulActRows4 over a matrix
// interleaved by InterleaveRows4 gives every column the block twin's value
// on the row-major rows, the same bits alone and in batches of 2 to 17.
func TestR16Dispatch(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: the AVX2 tile kernels need AVX2, FMA and F16C, which this CPU lacks")
	}
	saved4, savedPairs, saved16, savedOn16, savedR16, savedState := gemmRows4, rows4Pairs, tileRows16, b16On, r16On, r16State
	t.Cleanup(func() {
		gemmRows4, rows4Pairs, tileRows16, b16On, r16On, r16State = saved4, savedPairs, saved16, savedOn16, savedR16, savedState
	})
	useR16(r16Here(), "test")
	r := rand.New(rand.NewPCG(16, 3))
	for _, tp := range []Type{Q4_0, Q8_0} {
		if !Rows4(tp) || InterleaveGroup(tp) != 16 {
			t.Fatalf("%v: the tile layout is not installed", tp)
		}
		dot := dotQ8_0Blocks
		if tp == Q4_0 {
			dot = dotQ4_0Blocks
		}
		const n, rows = 320, 37
		g := newGemmCase(r, tp, n, rows, 17)
		w16 := append([]byte(nil), g.w...)
		InterleaveRows4(tp, n, w16, rows, nil)
		var alone []float32
		var reused Act // holds the widest batch's columns past the narrower ones'
		reused.Prepare(tp, n, g.x, 17)
		for _, cols := range []int{1, 2, 3, 4, 5, 8, 9, 13, 17} {
			sub := g
			sub.cols, sub.x = cols, g.x[:cols*Q8_0.RowSize(n)]
			var a Act
			a.Prepare(tp, n, sub.x, cols)
			if len(a.bqs) != 0 {
				t.Fatalf("%v: %d bytes of AMX operands packed for the AVX2 kernels", tp, len(a.bqs))
			}
			ldd := rows + 1
			got := nanSlice(cols * ldd)
			MatMulActRows4(tp, n, w16, rows, &a, got, ldd)
			checkGemm(t, fmt.Sprintf("%v tile layout, %d columns", tp, cols), got, sub.want(tp, dot, ldd), rows, ldd)
			checkTilesOnly(t, tp, n, w16, g.w, rows, &reused, sub.x, cols, got, ldd)
			if alone == nil {
				alone = got[:rows]
			}
			for i := range alone {
				if math.Float32bits(got[i]) != math.Float32bits(alone[i]) {
					t.Fatalf("%v: row %d of column 0 is %v in a batch of %d, %v alone", tp, i, got[i], cols, alone[i])
				}
			}
		}
		back := append([]byte(nil), w16...)
		DeinterleaveRows4(tp, n, back, rows, nil)
		for i := 0; i < rows*tp.RowSize(n); i++ {
			if back[i] != g.w[i] {
				t.Fatalf("%v: byte %d differs after the round trip", tp, i)
			}
		}
	}
}

// BenchmarkR16 times the tile layout's kernels of this CPU's tier below
// AMX on one engine task's shape (64 rows of 2048, TinyLlama's chunk of a
// prompt batch) by 1, 4 and 128 columns, in GMAC/s; with -cpu 2 two
// goroutines run tasks side by side (RunParallel), each on its own rows.
func BenchmarkR16(b *testing.B) {
	set := r16Here()
	r := rand.New(rand.NewPCG(16, 4))
	const n, rows = 2048, 64
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, cols := range []int{1, 4, 128} {
			b.Run(fmt.Sprintf("%v/cols=%d", tp, cols), func(b *testing.B) {
				_, x := r16Operands(r, tp, n, rows, cols, false)
				var a Act
				a.prepareB16(tp, n, x, cols, false)
				b.RunParallel(func(pb *testing.PB) {
					w, _ := r16Operands(rand.New(rand.NewPCG(1, 1)), tp, n, rows, 1, false)
					rows16Move(tp, n, w, rows, nil, true)
					dst := make([]float32, rows*cols)
					for pb.Next() {
						r16Gemm(tp, n, w, rows, &a, dst, rows, set[tp])
					}
				})
				b.ReportMetric(float64(n*rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

// checkTilesOnly prepares cols columns x with BeginTiles in a, an Act
// that held a wider batch (the tile operands past cols stale, the
// row-major ones stale everywhere), and checks that MatMulActRows4 gives
// want's bits, and that MatMulAct over the row-major matrix w, which must
// not read the unfilled row-major operands, gives MatVec's.
func checkTilesOnly(t *testing.T, tp Type, n int, w16, w []byte, rows int, a *Act, x []byte, cols int, want []float32, ldd int) {
	t.Helper()
	a.BeginTiles(tp, n, x, cols)
	a.Fill(0, cols)
	if !a.tilesOnly {
		t.Fatalf("%v: BeginTiles left the row-major operands on", tp)
	}
	got := nanSlice(cols * ldd)
	MatMulActRows4(tp, n, w16, rows, a, got, ldd)
	for c := 0; c < cols; c++ {
		for r := 0; r < rows; r++ {
			if g, e := got[c*ldd+r], want[c*ldd+r]; math.Float32bits(g) != math.Float32bits(e) {
				t.Fatalf("%v, %d columns from BeginTiles: row %d column %d is %v, %v from Prepare", tp, cols, r, c, g, e)
			}
		}
	}
	flat := nanSlice(cols * ldd)
	MatMulAct(tp, n, w, rows, a, flat, ldd)
	for c := 0; c < cols; c++ {
		one := make([]float32, rows)
		MatVec(tp, n, w, a.Column(c), one)
		for r := 0; r < rows; r++ {
			if g, e := flat[c*ldd+r], one[r]; math.Float32bits(g) != math.Float32bits(e) {
				t.Fatalf("%v, %d columns from BeginTiles: MatMulAct row %d column %d is %v, MatVec %v", tp, cols, r, c, g, e)
			}
		}
	}
}

// BenchmarkR16DecodeHot runs the AVX2 tier's one-column path over 64 rows
// × 2048 (73 KiB of Q4_0, in cache) one group at a time and as four
// streams: the kernels' arithmetic rate without memory's limit. Set
// FLOWCHAT_R16AHEAD4 to compare the four-stream kernels with and without
// their software prefetch.
func BenchmarkR16DecodeHot(b *testing.B) {
	if !hasAVX2 {
		b.Skip("skipping: the AVX2 tile kernels need AVX2, FMA and F16C, which this CPU lacks")
	}
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, d4 := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/dec4=%v", tp, d4), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				n, rows := 2048, 64
				w, x := r16Operands(r, tp, n, rows, 1, false)
				rows16Move(tp, n, w, rows, nil, true)
				var a Act
				a.prepareB16(tp, n, x, 1, false)
				dst := make([]float32, rows)
				saved := r16Dec4
				r16Dec4 = d4
				defer func() { r16Dec4 = saved }()
				b.SetBytes(int64(len(w)))
				for i := 0; i < b.N; i++ {
					r16Gemm(tp, n, w, rows, &a, dst, rows, r16AVX2[tp])
				}
			})
		}
	}
}
