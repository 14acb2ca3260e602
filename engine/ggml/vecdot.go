package ggml

import "fmt"

// VecDotType is the type the other operand of a dot product with a row of
// t must have (ggml's type_traits_cpu vec_dot_type): llama.cpp quantizes
// the activation row to it before each product.
func (t Type) VecDotType() Type {
	if t >= 1000 { // a registered type (RegisterType); no map lookup on the hot paths
		if e := external[t]; e != nil {
			return e.VecDotType
		}
	}
	switch t {
	case Q4_0, Q5_0, Q8_0, IQ4_NL:
		return Q8_0
	case Q4_1, Q5_1:
		return Q8_1
	case Q2_K, Q3_K, Q4_K, Q5_K, Q6_K:
		return Q8_K
	}
	return t
}

// dotFunc returns the dot product of n elements of a weight row w with an
// activation row x of the weight type's VecDotType.
type dotFunc func(n int, w, x []byte) float32

// matVecFunc computes dst[r] = dot(row r of w, x) for len(dst) consecutive
// rows of w, each rowSize(n) bytes.
type matVecFunc func(n int, w, x []byte, dst []float32)

// goDot holds the plain-Go kernels: the reference every other kernel is
// tested against.
var goDot = [32]dotFunc{
	F32: dotF32Go, F16: dotF16Go, BF16: dotBF16Go,
	Q4_0: dotQ4_0Go, Q4_1: dotQ4_1Go, Q5_0: dotQ5_0Go, Q5_1: dotQ5_1Go,
	Q8_0: dotQ8_0Go, IQ4_NL: dotIQ4_NLGo,
	Q2_K: dotQ2_KGo, Q3_K: dotQ3_KGo, Q4_K: dotQ4_KGo, Q5_K: dotQ5_KGo, Q6_K: dotQ6_KGo,
}

// dotImpl and matVecImpl are the kernels in use: the plain-Go ones unless
// an architecture file installs faster ones at init.
var (
	dotImpl    = goDot
	matVecImpl [32]matVecFunc
)

// VecDot returns the dot product of n elements: w holds a row of type t,
// x a row of t.VecDotType() (for F32 both are little-endian float32 bytes).
// It panics if the types are unsupported or the lengths do not match n.
func VecDot(t Type, n int, w []byte, x []byte) float32 {
	checkDot(t, n, len(w), x)
	if e := external[t]; e != nil {
		return e.Dot(n, w, x)
	}
	return dotImpl[t](n, w, x)
}

// MatVec computes dst[r] = VecDot(t, n, row r of w, x) for the len(dst)
// consecutive rows at the start of w (row stride t.RowSize(n) bytes).
func MatVec(t Type, n int, w []byte, x []byte, dst []float32) {
	if e := external[t]; e != nil {
		e.MatVec(n, w, x, dst)
		return
	}
	rs := checkDot(t, n, -1, x)
	if len(w) < rs*len(dst) {
		panic(fmt.Sprintf("ggml: MatVec over %d rows of %v needs %d bytes of weights, got %d", len(dst), t, rs*len(dst), len(w)))
	}
	if mv := matVecImpl[t]; mv != nil {
		mv(n, w[:rs*len(dst)], x, dst)
		return
	}
	dot := dotImpl[t]
	for r := range dst {
		dst[r] = dot(n, w[r*rs:(r+1)*rs], x)
	}
}

// checkDot validates the operands and returns the weight row size; wlen < 0
// skips the weight length check.
func checkDot(t Type, n, wlen int, x []byte) int {
	if external[t] == nil && (int(t) >= len(goDot) || goDot[t] == nil) {
		panic(fmt.Sprintf("ggml: no dot product for type %v", t))
	}
	checkRow(t.VecDotType(), n, len(x))
	rs := t.RowSize(n)
	if wlen >= 0 && wlen != rs {
		panic(fmt.Sprintf("ggml: %v row of %d elements needs %d bytes, got %d", t, n, rs, wlen))
	}
	return rs
}

// matMulChunk is the weight bytes MatMul keeps hot while it walks the
// activation columns: small enough for L2 next to the activations.
const matMulChunk = 128 << 10

// MatMul multiplies rows weight rows of type t (n elements each) with cols
// activation rows x (each t.VecDotType().RowSize(n) bytes, consecutive):
// dst[c*rows+r] = VecDot(row r of w, column c of x). It prepares the
// activations once and visits the weights in cache-sized chunks of rows,
// running every column over a chunk before moving on, so prefill reads each
// weight from memory once instead of once per token. Each dst value is
// bit-identical to the MatVec result.
func MatMul(t Type, n int, w []byte, rows int, x []byte, cols int, dst []float32) {
	rs := checkDot(t, n, -1, x[:t.VecDotType().RowSize(n)])
	if len(dst) < rows*cols || len(w) < rs*rows {
		panic(fmt.Sprintf("ggml: MatMul %v %dx%d by %d columns: operands too short", t, rows, n, cols))
	}
	a := actPool.Get().(*Act)
	a.Prepare(t, n, x, cols)
	chunk := max(4, matMulChunk/max(rs, 1)&^3)
	for r0 := 0; r0 < rows; r0 += chunk {
		r1 := min(rows, r0+chunk)
		MatMulAct(t, n, w[r0*rs:r1*rs], r1-r0, a, dst[r0:], rows)
	}
	a.x = nil
	actPool.Put(a)
}
