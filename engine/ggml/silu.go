package ggml

import "math"

// SiLUMul sets h[i] = silu(gate[i])·up[i] for i < len(h), where
// silu(x) = x / (1 + expf(−x)) in float32 with expf correctly rounded
// (float32(math.Exp(float64(−x))) up to vanishingly rare double-rounding
// cases: the exponential is evaluated in float64 to about 1e−16 and then
// rounded once). h may alias gate or up; gate and up must be at least as
// long as h.
func SiLUMul(h, gate, up []float32) {
	gate, up = gate[:len(h)], up[:len(h)]
	siluMul(h, gate, up)
}

var siluMul = siluMulGo

// Constants of the float64 exponential (see expSiLU). The asm kernels read
// them from siluTab, built from these.
const (
	siluLo    = -110.0 // exp below rounds to float32 0
	siluHi    = 90.0   // exp above overflows float32
	siluLog2e = 0x1.71547652b82fep0
	siluMagic = 0x1.8p52 // adding it rounds to an integer, k in the low bits
	siluLn2Hi = 0x1.62e42fefa39efp-1
	siluLn2Lo = 0x1.abc9e3b39803fp-56
)

// siluPoly holds 1/n! for n = 13 down to 0 (Taylor series of exp on
// |r| ≤ ln2/2: truncation error below 1e-17 relative).
var siluPoly = [14]float64{
	1.0 / 6227020800, 1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800,
	1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24,
	1.0 / 6, 1.0 / 2, 1, 1,
}

// siluTab is the asm kernels' constant table, one 32-byte row per
// constant (four float64 copies, or eight float32): lo, hi, log2e, magic,
// ln2hi, ln2lo, the 14 polynomial coefficients, the float32 sign mask and
// float32 1.
var siluTab = func() (t [22][4]uint64) {
	row := func(i int, v float64) {
		for l := range t[i] {
			t[i][l] = math.Float64bits(v)
		}
	}
	row(0, siluLo)
	row(1, siluHi)
	row(2, siluLog2e)
	row(3, siluMagic)
	row(4, siluLn2Hi)
	row(5, siluLn2Lo)
	for n, c := range siluPoly {
		row(6+n, c)
	}
	for l := range t[20] {
		t[20][l] = 0x8000_0000_8000_0000
		t[21][l] = uint64(math.Float32bits(1))<<32 | uint64(math.Float32bits(1))
	}
	return
}()

// expSiLU is exp(y) in float64 lane by lane as the asm kernels compute it:
// y clamped to [siluLo, siluHi] (NaN passes), k = round(y·log2e) by the
// magic-number addition, r = y − k·ln2 in two FMA steps, Horner over
// siluPoly with FMA, then 2^k added into the exponent bits.
func expSiLU(y float64) float64 {
	if y < siluLo {
		y = siluLo
	}
	if y > siluHi {
		y = siluHi
	}
	t := math.FMA(y, siluLog2e, siluMagic)
	k := t - siluMagic
	r := math.FMA(-k, siluLn2Hi, y)
	r = math.FMA(-k, siluLn2Lo, r)
	p := siluPoly[0]
	for _, c := range siluPoly[1:] {
		p = math.FMA(p, r, c)
	}
	return math.Float64frombits(math.Float64bits(p) + math.Float64bits(t)<<52)
}

// siluMulGo is the plain-Go twin of the asm kernels, bit for bit.
func siluMulGo(h, gate, up []float32) {
	up = up[:len(h)]
	gate = gate[:len(h)]
	for i := range h {
		x := gate[i]
		e := float32(expSiLU(float64(-x)))
		h[i] = x / (1 + e) * up[i]
	}
}
