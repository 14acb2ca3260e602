package ggml

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// These tests need no AMX: they run the tier's Go walk (amxGemm) with the
// plain-Go model of the tile kernel over the instruction emulator, on
// every build. amx_amd64_test.go checks the assembly against them where
// AMX exists, and its encoding everywhere.

// amxTwin maps the types the AMX tier takes to their block twins.
var amxTwin = map[Type]dotFunc{Q4_0: dotQ4_0Blocks, Q8_0: dotQ8_0Blocks}

// amxModel is the tier's kernels in plain Go: the tile kernel over the
// emulator, the decode kernel and the unpack.
var amxModel = b16Kernels{amxModelTile, b16DecGo, b16UnpackGo, nil}

// TestAMXEmulator holds the emulated TDPBSSD and TDPBUSD to the integer
// matrix product they define, for every tile shape class (1-16 rows, K of
// 4-64 bytes, 1-16 int32 columns), with a nonzero starting C (the
// instructions accumulate) and loads from strided memory; and checks that
// loads and products zero what lies past the configured shape.
func TestAMXEmulator(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 1))
	for _, sh := range [][3]int{{16, 64, 16}, {1, 4, 1}, {7, 32, 16}, {16, 32, 3}, {13, 12, 5}, {3, 64, 16}} {
		M, K, N := sh[0], sh[1], sh[2]
		var cfg [64]byte
		cfg[0] = 1
		for i, s := range [3][2]int{{4 * N, M}, {K, M}, {4 * N, K / 4}} {
			cfg[16+2*i], cfg[48+i] = byte(s[0]), byte(s[1])
		}
		const stride = 100
		mem := make([]byte, 3*16*stride)
		for i := range mem {
			mem[i] = byte(r.Uint32())
		}
		for _, signedA := range []bool{true, false} {
			var e amxEmu
			e.ldtilecfg(&cfg)
			e.tileloadd(0, mem, 0, stride)
			e.tileloadd(1, mem, 16*stride, stride)
			e.tileloadd(2, mem, 32*stride, stride)
			c0 := e.t[0]
			if signedA {
				e.tdpbssd(0, 1, 2)
			} else {
				e.tdpbusd(0, 1, 2)
			}
			for m := 0; m < 16; m++ {
				for n := 0; n < 16; n++ {
					want := int32(0)
					if m < M && n < N {
						want = int32(le32(c0[m][4*n:]))
						for k := 0; k < K; k++ {
							a := int32(int8(mem[16*stride+m*stride+k]))
							if !signedA {
								a = int32(mem[16*stride+m*stride+k])
							}
							want += a * int32(int8(mem[32*stride+k/4*stride+4*n+k%4]))
						}
					}
					if got := int32(le32(e.t[0][m][4*n:])); got != want {
						t.Fatalf("M%d K%d N%d signed %v: C[%d][%d] = %d, want %d", M, K, N, signedA, m, n, got, want)
					}
				}
			}
			out := make([]byte, 16*64)
			e.tilestored(0, out, 0, 64)
			for i := 4 * N; i < 64 && M > 0; i++ {
				if out[i] != 0 {
					t.Fatalf("M%d K%d N%d: TILESTORED wrote past colsb", M, K, N)
				}
			}
		}
	}
	var e amxEmu
	cfg := amxConfig(16)
	cfg[16+2*1] = 36 // A's K (36 bytes) no longer 4·B.rows (32)
	e.ldtilecfg(&cfg)
	defer func() {
		if recover() == nil {
			t.Error("TDPBSSD with A.colsb ≠ 4·B.rows did not fault")
		}
	}()
	e.tdpbssd(0, 1, 2)
}

// TestAMXConfig: the configuration the kernel loads for mr rows.
func TestAMXConfig(t *testing.T) {
	for _, mr := range []int{1, 5, 16} {
		c := amxConfig(mr)
		want := [64]byte{0: 1, 16: 64, 18: 32, 20: 64, 22: 64, 24: 32, 26: 64, 48: byte(mr), 49: byte(mr), 50: 8, 51: byte(mr), 52: byte(mr), 53: 8}
		if c != want {
			t.Fatalf("mr=%d: config %v", mr, c)
		}
	}
}

// amxShapes are (n, rows, cols): row groups full and not (1, 15-17, 33
// rows: tail rows past the last group), column groups full and partial
// (16, 17, 31, 40 columns), decode batches (1, 3 columns), one to 64
// blocks.
var amxShapes = [][3]int{{32, 1, 16}, {96, 16, 16}, {64, 17, 17}, {160, 15, 31}, {32, 33, 40}, {2048, 19, 21}, {288, 16, 32}, {96, 33, 1}, {256, 32, 3}}

// b16Case prepares g for the tile layout: its weights rewritten into it
// (a copy) and an Act with the layout's operands.
func b16Case(tp Type, g gemmCase) ([]byte, *Act) {
	w := append([]byte(nil), g.w...)
	rows16Move(tp, g.n, w, g.rows, nil, true)
	a := new(Act)
	a.prepareB16(tp, g.n, g.x, g.cols, true)
	return w, a
}

// TestAMXModel runs the tier's walk (b16Gemm) with the plain-Go kernels
// (the tile model over the emulator, the decode twin) over the tile
// layout, and holds every value to the block twin of the row-major rows
// bit for bit, with NaN guard cells between output columns left alone,
// for random and for extreme operands (largest and subnormal fp16 scales,
// zero scales, int8 −128 and 127 throughout), on both sides of amxCols.
func TestAMXModel(t *testing.T) {
	defer func(c [32]int) { amxCols = c }(amxCols)
	for _, c := range []int{1, 4, 17} {
		amxCols[Q4_0], amxCols[Q8_0] = c, c
		eachAMXCase(rand.New(rand.NewPCG(18, 2)), func(tp Type, g gemmCase, name string) {
			w, a := b16Case(tp, g)
			ldd := g.rows + 2
			want := g.want(tp, amxTwin[tp], ldd)
			got := nanSlice(g.cols * ldd)
			b16Gemm(tp, g.n, w, g.rows, a, got, ldd, &amxModel)
			checkGemm(t, fmt.Sprintf("%s model (tiles from %d columns)", name, c), got, want, g.rows, ldd)
		})
	}
}

// TestRows16Layout: the tile layout's rewrite has its inverse, its rows
// read back as the row-major ones, a group's block is what the kernels
// take it for (the 16 rows' scales, then dword k of each row side by
// side), and a run of rows from a multiple of 16 is the layout of those
// rows (the engine's row chunks).
func TestRows16Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 9))
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, sh := range [][2]int{{32, 16}, {96, 17}, {64, 40}, {2048, 35}, {32, 5}} {
			n, rows := sh[0], sh[1]
			rs, ts := tp.RowSize(n), tp.TypeSize()
			w := randomRow(r, tp, n*rows)
			il := append([]byte(nil), w...)
			rows16Move(tp, n, il, rows, nil, true)
			if rows >= 16 && bytes.Equal(il, w) {
				t.Fatalf("%v %dx%d: the rewrite changed nothing", tp, rows, n)
			}
			for row := 0; row < rows; row++ {
				if got := rows16Row(tp, n, il, rows, row, make([]byte, rs)); !bytes.Equal(got, w[row*rs:(row+1)*rs]) {
					t.Fatalf("%v %dx%d: row %d reads back differently", tp, rows, n, row)
				}
			}
			if rows >= 16 { // group 0, block nb−1: row 5's scale and dword 1
				b := n/32 - 1
				blk := il[16*ts*b:]
				if !bytes.Equal(blk[10:12], w[5*rs+ts*b:][:2]) || !bytes.Equal(blk[32+64+20:][:4], w[5*rs+ts*b+6:][:4]) {
					t.Fatalf("%v: the block is not laid out as documented", tp)
				}
			}
			if rows > 16 {
				sub := append([]byte(nil), w[16*rs:]...)
				rows16Move(tp, n, sub, rows-16, nil, true)
				if !bytes.Equal(sub, il[16*rs:]) {
					t.Fatalf("%v %dx%d: rows from 16 are not the layout of those rows", tp, rows, n)
				}
			}
			back := append([]byte(nil), il...)
			rows16Move(tp, n, back, rows, nil, false)
			if !bytes.Equal(back, w) {
				t.Fatalf("%v %dx%d: the inverse does not give the rows back", tp, rows, n)
			}
		}
	}
}

// eachAMXCase calls fn for every type the AMX tier takes (Q4_0, Q8_0),
// every shape of amxShapes and both kinds of operands, random and then
// extreme (amxExtreme), each a fresh case drawn from r; name says which.
func eachAMXCase(r *rand.Rand, fn func(tp Type, g gemmCase, name string)) {
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, sh := range amxShapes {
			for _, extreme := range []bool{false, true} {
				g := newGemmCase(r, tp, sh[0], sh[1], sh[2])
				if extreme {
					amxExtreme(r, tp, g)
				}
				fn(tp, g, fmt.Sprintf("%v n=%d %dx%d extreme %v", tp, g.n, g.rows, g.cols, extreme))
			}
		}
	}
}

// amxExtreme rewrites g's scales to extremes (fp16 65504, the smallest
// subnormal 2⁻²⁴, 0, negative) and a quarter of its values to the int8
// ends, in weights and activations.
func amxExtreme(r *rand.Rand, tp Type, g gemmCase) {
	scales := []uint16{0x7bff, 0xfbff, 0x0001, 0x8001, 0, 0x3c00, 0x0400}
	set := func(b []byte, ts, nbytes int) {
		for i := 0; i+ts <= nbytes; i += ts {
			put16(b[i:], scales[r.IntN(len(scales))])
			for j := 2; j < ts; j++ {
				switch r.IntN(8) {
				case 0:
					b[i+j] = 0x80
				case 1:
					b[i+j] = 0x7f
				}
			}
		}
	}
	set(g.w, tp.TypeSize(), g.rows*tp.RowSize(g.n))
	set(g.x, 34, g.cols*Q8_0.RowSize(g.n))
}

// TestAMXModelBound: the AMX chain (block sums) and the VNNI/AVX2 chain
// (lane sums) each stay within (nb+4)·2⁻²⁴·Σ|w_i·x_i| of the exact
// product (w_i, x_i the dequantized values), so they differ by at most
// twice that: the bound docs state for the tier's departure from the
// decode kernels' bits.
func TestAMXModelBound(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 3))
	lanes := map[Type]dotFunc{Q4_0: dotQ4_0Lanes, Q8_0: dotQ8_0Lanes}
	for tp, twin := range amxTwin {
		for _, n := range []int{32, 96, 4096, 14336} {
			for i := 0; i < 20; i++ {
				w, x := randomRow(r, tp, n), randomActivation(r, Q8_0, n)
				exact, mag := amxExact(tp, n, w, x)
				bound := float64(n/32+4)*0x1p-24*mag + 1e-30
				for name, got := range map[string]float32{"blocks": twin(n, w, x), "lanes": lanes[tp](n, w, x)} {
					if d := math.Abs(float64(got) - exact); d > bound {
						t.Fatalf("%v n=%d: %s %v, exact %v: off by %g > %g", tp, n, name, got, exact, d, bound)
					}
				}
			}
		}
	}
}

// amxExact is Σ_b C_b·d_w·d_x in float64 (C_b the block's integer sum;
// each term exact: 11+11+20 significant bits) and Σ|w_i·x_i|.
func amxExact(tp Type, n int, w, x []byte) (sum, mag float64) {
	ts := tp.TypeSize()
	for b := 0; b < n/32; b++ {
		c := int64(0)
		for j := 0; j < 32; j++ {
			var lv int64
			if tp == Q8_0 {
				lv = int64(int8(w[ts*b+2+j]))
			} else {
				q := w[ts*b+2+j%16]
				if j >= 16 {
					q >>= 4
				}
				lv = int64(q&0xf) - 8
			}
			p := lv * int64(int8(x[34*b+2+j]))
			c += p
			mag += math.Abs(float64(p) * float64(f16(w[ts*b:])) * float64(f16(x[34*b:])))
		}
		sum += float64(c) * float64(f16(w[ts*b:])) * float64(f16(x[34*b:]))
	}
	return sum, mag
}

// TestUnpackQ4: the B tiles of a Q4_0 block in the tile layout hold q − 8
// of each nibble where TDPBSSD reads value j of row m (B row j/4, byte
// 4m + j%4).
func TestUnpackQ4(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 10))
	w := randomRow(r, Q4_0, 32*16*3)
	il := append([]byte(nil), w...)
	rows16Move(Q4_0, 32*3, il, 16, nil, true)
	out := make([]byte, 512*3)
	b16UnpackGo(il, 3, out)
	for b := 0; b < 3; b++ {
		for m := 0; m < 16; m++ {
			q := w[m*54+18*b+2:][:16]
			for j := 0; j < 32; j++ {
				nib := q[j%16] & 15
				if j >= 16 {
					nib = q[j%16] >> 4
				}
				if got := int8(out[512*b+64*(j/4)+4*m+j%4]); got != int8(nib)-8 {
					t.Fatalf("block %d row %d value %d unpacked as %d, want %d", b, m, j, got, int8(nib)-8)
				}
			}
		}
	}
}
