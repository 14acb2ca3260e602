package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"flowchat/engine/ggml"
)

// activation returns n normal values quantized to Q8_0 as the engine does.
func activation(r *rand.Rand, n int) []byte {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	b := make([]byte, ggml.Q8_0.RowSize(n))
	ggml.QuantizeActivation(ggml.Q8_0, x, b)
	return b
}

// randomRow quantizes random weights, then (every other call) overwrites
// every code byte with random bits, so that extreme levels such as 255 in
// Q8 occur, and Q3H pair codes 121…127 that no quantizer writes but a
// damaged file may hold (every implementation must decode them alike).
func randomRow(r *rand.Rand, f *Format, n int) []byte {
	b := make([]byte, f.RowSize(n))
	f.QuantizeRow(randomWeights(r, n), b)
	if r.IntN(2) == 0 {
		return b
	}
	for blk := 0; blk < n/f.Block; blk++ {
		for i := headerSize; i < f.Size; i++ {
			b[blk*f.Size+i] = byte(r.Uint32())
		}
	}
	return b
}

// refDot is the float64 dot product of the dequantized operands, and the
// sum of the magnitudes of its terms (the scale of any rounding error).
func refDot(f *Format, n int, w, x []byte) (dot, mag float64) {
	wd, xd := make([]float32, n), make([]float32, n)
	f.DequantizeRow(w, wd)
	ggml.DequantizeRow(ggml.Q8_0, x, xd)
	for i := range wd {
		dot += float64(wd[i]) * float64(xd[i])
		mag += math.Abs(float64(wd[i]) * float64(xd[i]))
	}
	return dot, mag
}

func dotSizes(f *Format) []int {
	var ns []int
	for _, k := range []int{1, 2, 3, 5, 7, 9, 31, 65} {
		ns = append(ns, k*f.Block)
	}
	return ns
}

// TestDotGoMatchesFloat checks the plain-Go twin against the float64 dot
// product of the dequantized rows: an independent definition of the result.
func TestDotGoMatchesFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range Formats {
		for _, n := range dotSizes(f) {
			w, x := randomRow(r, f, n), activation(r, n)
			want, mag := refDot(f, n, w, x)
			got := dotGo(f, n, w, x)
			if e := math.Abs(float64(got) - want); e > 2e-6*mag+1e-30 {
				t.Fatalf("%s n=%d: dotGo = %g, float64 reference %g (mag %g)", f.Name, n, got, want, mag)
			}
		}
	}
}

// withGuard copies b into a larger buffer whose tail is poison and returns
// the exact-length slice: a kernel reading past the end gives a wrong sum.
func withGuard(b []byte) []byte {
	g := make([]byte, len(b)+128)
	copy(g, b)
	for i := len(b); i < len(g); i++ {
		g[i] = 0x7f
	}
	return g[:len(b)]
}

// TestKernelsMatchGo compares the kernels in use (assembly where the CPU
// has it) with the plain-Go twin on random rows with odd block counts,
// poisoned bytes after every input and guard cells after the output.
func TestKernelsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, f := range Formats {
		t.Run(f.Name, func(t *testing.T) {
			for _, n := range dotSizes(f) {
				const rows = 7
				rs := f.RowSize(n)
				w := withGuard(randomRow(r, f, n*rows))
				x := withGuard(activation(r, n))
				dst := make([]float32, rows+3)
				for i := range dst {
					dst[i] = -12345
				}
				f.MatVec(n, w, x, dst[:rows])
				for i := rows; i < len(dst); i++ {
					if dst[i] != -12345 {
						t.Fatalf("n=%d: MatVec wrote past dst", n)
					}
				}
				for row := 0; row < rows; row++ {
					wr := w[row*rs : (row+1)*rs]
					want := dotGo(f, n, wr, x)
					_, mag := refDot(f, n, wr, x)
					for name, got := range map[string]float32{"MatVec": dst[row], "Dot": f.Dot(n, wr, x)} {
						if e := math.Abs(float64(got - want)); e > 1e-5*mag+1e-30 {
							t.Fatalf("n=%d row %d: %s = %g, Go twin %g (mag %g)", n, row, name, got, want, mag)
						}
					}
				}
			}
		})
	}
}

// benchRows quantizes rows×n weights distributed like a trained model's
// (N(0, 0.02²)) and copies the matrix until the set exceeds minBytes, so
// that with minBytes past the L3 every product streams from DRAM.
func benchRows(f *Format, rows, n, minBytes int) [][]byte {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, rows*n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.02)
	}
	w := make([]byte, f.RowSize(rows*n))
	f.QuantizeRow(x, w)
	ws := make([][]byte, max(1, minBytes/len(w)+1))
	for i := range ws {
		ws[i] = append([]byte(nil), w...)
	}
	return ws
}

// BenchmarkMatVec streams a 2048×2048 matrix from DRAM (one thread).
func BenchmarkMatVec(b *testing.B) {
	benchFormats(b, 2048, 64<<20)
}

// BenchmarkMatVecHot keeps a 256×2048 matrix in cache: each kernel's
// compute ceiling.
func BenchmarkMatVecHot(b *testing.B) {
	benchFormats(b, 256, 0)
}

func benchFormats(b *testing.B, rows, minBytes int) {
	const n = 2048
	x := activation(rand.New(rand.NewPCG(9, 10)), n)
	dst := make([]float32, rows)
	for _, f := range Formats {
		ws := benchRows(f, rows, n, minBytes)
		b.Run(fmt.Sprintf("%s/%s", f.Name, Accel()), func(b *testing.B) {
			b.SetBytes(int64(len(ws[0])))
			for i := 0; i < b.N; i++ {
				f.MatVec(n, ws[i%len(ws)], x, dst)
			}
		})
	}
}
