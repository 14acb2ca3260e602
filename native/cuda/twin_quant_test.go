package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/ggml"
)

// dequantTwin is what a unit kernel takes as the weights of a row: its
// units' weights, in order.
func dequantTwin(t WeightType, row []byte, n int) []float32 {
	out := make([]float32, n)
	wt := weightTypes[t]
	if wt.unit == nil {
		for i := range out {
			out[i] = floatWeight(t, row, i)
		}
		return out
	}
	per := wt.block / 32
	var w [32]float32
	for u := range n / 32 {
		wt.unit(row[u/per*wt.size:], u%per, &w)
		copy(out[u*32:], w[:])
	}
	return out
}

// scaleFields are the byte offsets of each unit type's fp16 scales (d,
// and dmin or m where the type has one).
var scaleFields = map[WeightType][]int{
	WeightQ4_1: {0, 2}, WeightQ5_0: {0}, WeightQ5_1: {0, 2}, WeightIQ4_NL: {0},
	WeightQ2_K: {80, 82}, WeightQ3_K: {108}, WeightQ4_K: {0, 2}, WeightQ5_K: {0, 2}, WeightQ6_K: {208},
	WeightQ8_B32: {0, 2}, WeightQ8_B64: {0, 2}, WeightQ6_B64: {0, 2}, WeightQ5_B64: {0, 2}, WeightQ4_B32: {0, 2},
	WeightQ4_B64: {0, 2}, WeightQ3H_B64: {0, 2}, WeightQ3_B32: {0, 2}, WeightQ2_B32: {0, 2},
}

// extremeHalves are scales at the edges of fp16: zero and negative zero,
// the smallest subnormal, the largest subnormal, one, the largest finite,
// and negatives (files hold no infinities or NaNs).
var extremeHalves = []uint16{0x0000, 0x8000, 0x0001, 0x03ff, 0x3c00, 0x7bff, 0xfbff, 0x8001, 0xbc00}

// randomBlocks fills nb blocks of t with random bytes: every bit pattern
// of the codes, scales and packed 6-bit scales. With extreme, the fp16
// scale fields are set from extremeHalves instead.
func randomBlocks(r *rand.Rand, t WeightType, nb int, extreme bool) []byte {
	size := weightTypes[t].size
	b := make([]byte, nb*size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for blk := range nb {
		for _, off := range scaleFields[t] {
			h := uint16(r.Uint32()) &^ 0x4000 // |value| < 2: finite
			if extreme {
				h = extremeHalves[r.IntN(len(extremeHalves))]
			}
			binary.LittleEndian.PutUint16(b[blk*size+off:], h)
		}
	}
	return b
}

func sameBits(a, b float32) bool {
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b)) || a != a && b != b
}

// TestUnitWeightsAreGGMLs: a unit kernel's weights are engine/ggml's
// DequantizeRow bit for bit (sign of zero included), on random bytes and
// on blocks whose scales are at fp16's extremes; BF16 on every pattern.
func TestUnitWeightsAreGGMLs(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, wt := range WeightTypes() {
		if weightTypes[wt].unit == nil && wt != WeightBF16 {
			continue
		}
		for _, extreme := range []bool{false, true} {
			nb := 40
			row := randomBlocks(r, wt, nb, extreme)
			n := nb * wt.BlockSize()
			want := make([]float32, n)
			ggml.DequantizeRow(ggmlType[wt], row, want)
			got := dequantTwin(wt, row, n)
			for i := range want {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("%v extreme=%v: weight %d = %g (%#08x), ggml %g (%#08x)", wt, extreme, i,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

// TestUnitMatMulAgainstGGMLDot: the twin's row·column against engine/ggml's
// own dot product (VecDot over the type's quantized activations), on
// quantizer-made rows: the two differ by ggml's activation rounding only.
func TestUnitMatMulAgainstGGMLDot(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, wt := range WeightTypes() {
		gt := ggmlType[wt]
		n := 4 * 256
		w, deq := randWeights(r, wt, n, 3)
		x := randFloats(r, n, 2)
		y := make([]float32, 3)
		mmTwin(wt, 32, w, x, y, n, 3, 1)
		at := gt.VecDotType()
		xq := make([]byte, at.RowSize(n))
		ggml.QuantizeActivation(at, x, xq)
		for row := range 3 {
			got := ggml.VecDot(gt, n, w[row*wt.RowBytes(n):(row+1)*wt.RowBytes(n)], xq)
			var mag float64
			for i := range n {
				mag += math.Abs(float64(deq[row*n+i]) * float64(x[i]))
			}
			if d := math.Abs(float64(got - y[row])); d > 1e-2*mag {
				t.Errorf("%v row %d: twin %g, ggml's dot %g (|w·x| %g)", wt, row, y[row], got, mag)
			}
		}
	}
}

// TestUnitMatMulExtremeScales: rows of random bytes with scales at fp16's
// extremes (products overflow to ±Inf, subnormal scales) give the twin
// the float64 sum of ggml's weights where float32 does not overflow.
func TestUnitMatMulExtremeScales(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	for wt := range scaleFields {
		n := 3 * 256
		rows := 4
		w := randomBlocks(r, wt, rows*n/wt.BlockSize(), true)
		deq := make([]float32, rows*n)
		for row := range rows {
			ggml.DequantizeRow(ggmlType[wt], w[row*wt.RowBytes(n):(row+1)*wt.RowBytes(n)], deq[row*n:(row+1)*n])
		}
		x := randFloats(r, 2*n, 1)
		y := make([]float32, 2*rows)
		mmTwin(wt, 32, w, x, y, n, rows, 2)
		checkMM(t, fmt.Sprintf("%v extreme scales", wt), deq, x, y, n, rows, 2)
	}
}

func TestWeightTypeNames(t *testing.T) {
	for _, wt := range WeightTypes() {
		if got := fmt.Sprint(wt); got != ggmlType[wt].String() {
			t.Errorf("weight type %d is %q, ggml calls it %q", int(wt), got, ggmlType[wt].String())
		}
		if wt.RowBytes(256) != ggmlType[wt].RowSize(256) {
			t.Errorf("%v: %d bytes per 256 elements, ggml %d", wt, wt.RowBytes(256), ggmlType[wt].RowSize(256))
		}
	}
}
