package ggml

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestK16Layout: the Q4_K tile layout's rewrite and its inverse are exact
// (every row read back through Rows4Row's reader, the whole matrix moved
// back), the tail rows stay row-major, and no byte outside the matrix is
// touched.
func TestK16Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 4))
	for _, tp := range []Type{Q4_K, Q5_K, Q6_K} {
		testK16Layout(t, r, tp)
	}
}

func testK16Layout(t *testing.T, r *rand.Rand, tp Type) {
	for _, nb := range []int{1, 3} {
		n, rows := nb*QK_K, 37
		rs := tp.RowSize(n)
		orig := randomRow(r, tp, n*rows)
		w := withGuard(append([]byte(nil), orig...))
		rows16Move(tp, n, w, rows, nil, true)
		if bytes.Equal(w[:32*rs], orig[:32*rs]) {
			t.Fatalf("%v nb=%d: the groups were not rewritten", tp, nb)
		}
		if !bytes.Equal(w[32*rs:], orig[32*rs:]) {
			t.Fatalf("%v nb=%d: the tail rows moved", tp, nb)
		}
		for i := len(w); i < len(w)+64; i++ {
			if w[:i+1][i] != 0x7f {
				t.Fatalf("%v nb=%d: guard byte %d overwritten", tp, nb, i)
			}
		}
		row := make([]byte, rs)
		for m := 0; m < rows; m++ {
			if got := rows16Row(tp, n, w, rows, m, row); !bytes.Equal(got, orig[m*rs:(m+1)*rs]) {
				t.Fatalf("%v nb=%d: row %d read back differs", tp, nb, m)
			}
		}
		rows16Move(tp, n, w, rows, nil, false)
		if !bytes.Equal(w, orig) {
			t.Fatalf("%v nb=%d: the inverse rewrite differs", tp, nb)
		}
	}
}

// TestK16Chain: the layout's chain (dotQ4_K16) is the Q4_K dot product:
// within 2⁻²⁰ of Σ|w·x| of the exact value in float64, on random rows
// and on the extremes (every nibble 15, scales and mins 63, activations
// ±127/−128).
func TestK16Chain(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 5))
	check := func(name string, n int, w, x []byte) {
		t.Helper()
		got, exact := float64(dotQ4_K16(n, w, x)), 0.0
		wd, xd := make([]float32, n), make([]float32, n)
		DequantizeRow(Q4_K, w, wd)
		DequantizeRow(Q8_K, x, xd)
		scale := 0.0
		for b := 0; b < n/QK_K; b++ {
			blk, xb := w[144*b:], x[292*b:]
			dx := float64(math.Float32frombits(binary.LittleEndian.Uint32(xb)))
			for j := 0; j < 8; j++ {
				sc, m := scaleMinK4(j, blk[4:16])
				for e := 0; e < 32; e++ {
					q := float64(blk[16+32*(j/2)+e] >> (4 * uint(j%2)) & 15)
					xv := float64(int8(xb[4+32*j+e]))
					term := float64(f16(blk))*dx*float64(sc)*q*xv - float64(f16(blk[2:]))*dx*float64(m)*xv
					exact += term
					scale += math.Abs(float64(f16(blk))*dx*float64(sc)*q*xv) + math.Abs(float64(f16(blk[2:]))*dx*float64(m)*xv)
				}
			}
		}
		if d := math.Abs(got - exact); d > scale*0x1p-20 {
			t.Fatalf("%s: chain %v, exact %v (off by %g of Σ|w·x| %g)", name, got, exact, d/scale, scale)
		}
	}
	for _, nb := range []int{1, 2, 7} {
		n := nb * QK_K
		for i := 0; i < 20; i++ {
			check("random", n, randomRow(r, Q4_K, n), randomActivation(r, Q8_K, n))
		}
		w, x := k16Extremes(n, -128)
		check("extremes −128", n, w, x)
		w, x = k16Extremes(n, 127)
		check("extremes 127", n, w, x)
	}
}

// k16Extremes is a Q4_K row with every nibble 15, every scale and min 63
// and d = dmin = 1, and a Q8_K column of v everywhere (d_x = 1, its sums).
func k16Extremes(n int, v int8) (w, x []byte) {
	w, x = make([]byte, Q4_K.RowSize(n)), make([]byte, Q8_K.RowSize(n))
	for b := 0; b < n/QK_K; b++ {
		blk, xb := w[144*b:], x[292*b:]
		put16(blk, FP32ToFP16(1))
		put16(blk[2:], FP32ToFP16(1))
		for i := 4; i < 144; i++ {
			blk[i] = 0xff
		}
		binary.LittleEndian.PutUint32(xb, math.Float32bits(1))
		for i := 0; i < QK_K; i++ {
			xb[4+i] = byte(v)
		}
		for g := 0; g < 16; g++ {
			binary.LittleEndian.PutUint16(xb[260+2*g:], uint16(int16(16*int(v))))
		}
	}
	return w, x
}

// TestK16ChainQ6K: the Q6_K tile layout's chain (dotQ6_K16) is the Q6_K
// dot product within 2⁻²⁰ of Σ|w·x| of the exact value, on random rows
// and on the extremes (every value 31 or −32, scales ±127/−128,
// activations −128/127).
func TestK16ChainQ6K(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 8))
	check := func(name string, n int, w, x []byte) {
		t.Helper()
		got, exact, scale := float64(dotQ6_K16(n, w, x)), 0.0, 0.0
		for b := 0; b < n/QK_K; b++ {
			blk, xb := w[210*b:], x[292*b:]
			dx := float64(math.Float32frombits(binary.LittleEndian.Uint32(xb)))
			d := float64(f16(blk[208:]))
			for e := 0; e < QK_K; e++ {
				term := d * dx * float64(int8(blk[192+e/16])) * float64(q6u(blk, e)-32) * float64(int8(xb[4+e]))
				exact += term
				scale += math.Abs(term)
			}
		}
		if dd := math.Abs(got - exact); dd > scale*0x1p-20 {
			t.Fatalf("%s: chain %v, exact %v (off by %g of Σ|w·x| %g)", name, got, exact, dd/scale, scale)
		}
	}
	for _, nb := range []int{1, 2, 7} {
		n := nb * QK_K
		for i := 0; i < 20; i++ {
			check("random", n, randomRow(r, Q6_K, n), randomActivation(r, Q8_K, n))
		}
		for _, fill := range []byte{0x00, 0xff} {
			for _, sc := range []int8{127, -128} {
				w, x := q6Extremes(n, fill, sc, -128)
				check("extremes", n, w, x)
				w, x = q6Extremes(n, fill, sc, 127)
				check("extremes", n, w, x)
			}
		}
	}
}

// q6Extremes is a Q6_K row with ql and qh bytes fill (every value −32 or
// 31), every scale sc and d = 1, and a Q8_K column of v everywhere.
func q6Extremes(n int, fill byte, sc, v int8) (w, x []byte) {
	w, x = make([]byte, Q6_K.RowSize(n)), make([]byte, Q8_K.RowSize(n))
	_, x = k16Extremes(n, v)
	for b := 0; b < n/QK_K; b++ {
		blk := w[210*b:]
		for i := 0; i < 192; i++ {
			blk[i] = fill
		}
		for j := 0; j < 16; j++ {
			blk[192+j] = byte(sc)
		}
		put16(blk[208:], FP32ToFP16(1))
	}
	return w, x
}

// TestK16ChainQ5K: the Q5_K tile layout's chain (dotQ5_K16) is the Q5_K
// dot product within 2⁻²⁰ of Σ|w·x| of the exact value in float64 (the
// dequantized row against the column), on random rows.
func TestK16ChainQ5K(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 9))
	for _, nb := range []int{1, 2, 7} {
		n := nb * QK_K
		for i := 0; i < 20; i++ {
			w, x := randomRow(r, Q5_K, n), randomActivation(r, Q8_K, n)
			wd := make([]float32, n)
			DequantizeRow(Q5_K, w, wd)
			exact, scale := 0.0, 0.0
			for e := 0; e < n; e++ {
				xb := x[292*(e/QK_K):]
				xv := float64(math.Float32frombits(binary.LittleEndian.Uint32(xb))) * float64(int8(xb[4+e%QK_K]))
				exact += float64(wd[e]) * xv
				scale += math.Abs(float64(wd[e]) * xv)
			}
			if got := float64(dotQ5_K16(n, w, x)); math.Abs(got-exact) > scale*0x1p-20+1e-30 {
				t.Fatalf("nb=%d: chain %v, exact %v (Σ|w·x| %g)", nb, got, exact, scale)
			}
		}
	}
}
