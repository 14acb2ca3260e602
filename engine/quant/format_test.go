package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/ggml"
)

// paperWeights is the worked example of the Inferflow paper (one block).
var paperWeights = []float32{-1, -0.9, -0.6, -0.4, -0.2, 0, 0.1, 0.5, 0.7, 1, 1.3, 1.5}

// TestPaperExample checks the paper's codes and average absolute errors
// for 4-bit, 3-bit and 3.5-bit. The block is filled by repeating the 12
// weights, which leaves its min and max (and so every code) unchanged.
func TestPaperExample(t *testing.T) {
	cases := []struct {
		f      *Format
		codes  []uint8
		avgErr float64
	}{
		{ForType(Q4_B32), []uint8{0, 1, 2, 4, 5, 6, 7, 9, 10, 12, 14, 15}, 0.031},
		{ForType(Q3_B32), []uint8{0, 0, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7}, 0.075},
		{ForType(Q3H_B64), []uint8{0, 0, 2, 2, 3, 4, 4, 6, 7, 8, 9, 10}, 0.046},
	}
	for _, c := range cases {
		x := make([]float32, c.f.Block)
		for i := range x {
			x[i] = paperWeights[i%len(paperWeights)]
		}
		blk := make([]byte, c.f.Size)
		c.f.QuantizeRow(x, blk)
		got := c.f.Codes(blk, c.f.Block)[:len(paperWeights)]
		for i := range got {
			if got[i] != c.codes[i] {
				t.Fatalf("%s: codes %v, paper says %v", c.f.Name, got, c.codes)
			}
		}
		y := make([]float32, c.f.Block)
		c.f.DequantizeRow(blk, y)
		var e float64
		for i, w := range paperWeights {
			e += math.Abs(float64(y[i] - w))
		}
		e /= float64(len(paperWeights))
		t.Logf("%s: codes %v, average absolute error %.4f", c.f.Name, got, e)
		if math.Abs(e-c.avgErr) >= 0.0005 {
			t.Errorf("%s: average absolute error %.4f, paper says %.3f", c.f.Name, e, c.avgErr)
		}
	}
}

// TestLayouts pins the block sizes documented in docs/QUANTIZATION.md.
func TestLayouts(t *testing.T) {
	want := map[ggml.Type][2]int{ // block, bytes
		Q8_B32: {32, 36}, Q8_B64: {64, 68}, Q6_B64: {64, 52}, Q5_B64: {64, 44},
		Q4_B32: {32, 20}, Q4_B64: {64, 36}, Q3H_B64: {64, 32}, Q3_B32: {32, 16}, Q2_B32: {32, 12},
	}
	for _, f := range Formats {
		if w := want[f.Type]; f.Block != w[0] || f.Size != w[1] {
			t.Errorf("%s: block %d, %d bytes; want %d, %d", f.Name, f.Block, f.Size, w[0], w[1])
		}
	}
}

// randomWeights returns n values with a spread of magnitudes per block and
// the occasional outlier, as in trained weight matrices.
func randomWeights(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	scale := 1.0
	for i := range x {
		if i%32 == 0 {
			scale = math.Pow(2, float64(r.IntN(12)-8))
		}
		x[i] = float32(r.NormFloat64() * scale)
		if r.IntN(200) == 0 {
			x[i] *= 8
		}
	}
	return x
}

// TestRoundTripBound checks every format's error against its theoretical
// bound: half a step, plus what rounding lo and d to fp16 can add.
func TestRoundTripBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range Formats {
		x := randomWeights(r, 64*37)
		blk := make([]byte, f.RowSize(len(x)))
		f.QuantizeRow(x, blk)
		y := make([]float32, len(x))
		f.DequantizeRow(blk, y)
		for b := 0; b < len(x)/f.Block; b++ {
			xs, ys := x[b*f.Block:(b+1)*f.Block], y[b*f.Block:(b+1)*f.Block]
			lo, hi := minMax(xs)
			m, d := blockScales(blk[b*f.Size:])
			exact := float64(hi-lo) / float64(f.Levels-1)
			bound := float64(d)/2 + math.Abs(float64(m-lo)) + float64(f.Levels-1)*math.Abs(float64(d)-exact) + 1e-6*float64(hi-lo)
			for i := range xs {
				if e := math.Abs(float64(xs[i] - ys[i])); e > bound {
					t.Fatalf("%s block %d: |%g − %g| = %g exceeds the bound %g", f.Name, b, xs[i], ys[i], e, bound)
				}
			}
		}
	}
}

// TestPackUnpack checks that every level survives packing, at every
// position of a block (catches plane offsets that overlap or are skipped).
func TestPackUnpack(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, f := range Formats {
		for trial := 0; trial < 50; trial++ {
			q := make([]uint8, f.Block)
			for i := range q {
				q[i] = uint8(r.IntN(f.Levels))
			}
			buf := make([]byte, f.Size-headerSize)
			f.pack(q, buf)
			got := make([]uint8, f.Block)
			f.unpack(buf, got)
			for i := range q {
				if q[i] != got[i] {
					t.Fatalf("%s: level %d at %d came back as %d", f.Name, q[i], i, got[i])
				}
			}
		}
	}
}

// TestDegenerateBlocks covers constant blocks (d = 0), infinities and NaN:
// outside input must not panic and a constant block must come back exact
// when its value is representable in fp16.
func TestDegenerateBlocks(t *testing.T) {
	for _, f := range Formats {
		x := make([]float32, f.Block)
		for i := range x {
			x[i] = 0.75
		}
		blk := make([]byte, f.Size)
		f.QuantizeRow(x, blk)
		y := make([]float32, f.Block)
		f.DequantizeRow(blk, y)
		for i := range y {
			if y[i] != 0.75 {
				t.Fatalf("%s: constant block came back as %v", f.Name, y[i])
			}
		}
		x[3], x[5] = float32(math.NaN()), float32(math.Inf(1))
		f.QuantizeRow(x, blk)
		f.DequantizeRow(blk, y)
	}
}

func TestParse(t *testing.T) {
	for name, want := range map[string]ggml.Type{"q3h": Q3H_B64, "Q4": Q4_B32, "q4_b64": Q4_B64, "Q8": Q8_B32, "Q2_B32": Q2_B32} {
		f, err := Parse(name)
		if err != nil || f.Type != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", name, f, err, want)
		}
	}
	if _, err := Parse("Q4_K"); err == nil {
		t.Error("Parse(Q4_K) accepted a GGML type")
	}
}
