package sample

import "math"

// Constants of Cephes' expf: ln 2 split in a part exact in float32 and the
// rest, and the minimax polynomial of e^r on |r| <= ln2/2.
const (
	log2e    = 1.44269504088896341
	ln2Hi    = 0.693359375
	ln2Lo    = -2.12194440e-4
	expfMinX = -87.33654 // ln of the smallest normal float32
)

// expf is e^x for x <= 0 (a logit minus the largest logit) in float32
// arithmetic: x = n*ln2 + r, e^r by Cephes' polynomial, 2^n through the
// exponent bits. The relative error is below 3e-7 (see TestExpf against
// math.Exp); x below expfMinX gives 0, x > 0 is not supported. Plain
// float32 steps cost about a third of math.Exp on the softmax paths that
// touch every token of a 32k-128k vocabulary.
func expf(x float32) float32 {
	if !(x >= expfMinX) { // also NaN and -Inf
		return 0
	}
	n := int32(x*log2e - 0.5) // round to nearest for x <= 0
	r := x - float32(n)*ln2Hi - float32(n)*ln2Lo
	z := r * r
	y := (((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r+5.0000001201e-1)*z + r + 1
	return y * math.Float32frombits(uint32(n+127)<<23)
}
