package ggml_test

import (
	"fmt"
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// quantFixtures are the llama-quantize --pure outputs of rand-llama-gqa-F32.
var quantFixtures = []string{"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "Q4_K_M-mix"}

func openFixture(t *testing.T, name string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "arch/rand-llama-gqa-"+name+".gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestQuantizeMatchesLlamaQuantize quantizes every F32 source tensor with
// QuantizeRow and compares with the blocks llama-quantize wrote.
func TestQuantizeMatchesLlamaQuantize(t *testing.T) {
	src := openFixture(t, "F32")
	for _, name := range quantFixtures {
		t.Run(name, func(t *testing.T) {
			q := openFixture(t, name)
			for i := range q.Tensors {
				ti := &q.Tensors[i]
				if ti.Type == ggml.F32 {
					continue
				}
				st, ok := src.Tensor(ti.Name)
				if !ok {
					t.Fatalf("%s missing from the F32 file", ti.Name)
				}
				x := ggml.BytesF32(src.TensorData(st))
				got := make([]byte, len(q.TensorData(ti)))
				ggml.QuantizeRow(ti.Type, x, got)
				if bad, first := diffBlocks(ti.Type, got, q.TensorData(ti)); bad > 0 {
					t.Errorf("%s (%v): %d of %d blocks differ, first at block %d", ti.Name, ti.Type, bad, len(got)/ti.Type.TypeSize(), first)
				}
			}
		})
	}
}

func diffBlocks(tp ggml.Type, a, b []byte) (bad, first int) {
	first = -1
	ts := tp.TypeSize()
	for i := 0; i < len(a)/ts; i++ {
		if string(a[i*ts:(i+1)*ts]) != string(b[i*ts:(i+1)*ts]) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	return bad, first
}

// TestDequantizeFixtures decodes llama-quantize's blocks and checks the
// reconstruction error against the F32 source: relative RMS error bounded
// per type (random N(0,1)-like weights).
func TestDequantizeFixtures(t *testing.T) {
	maxRel := map[ggml.Type]float64{
		ggml.Q8_0: 0.01, ggml.Q6_K: 0.03, ggml.Q5_0: 0.06, ggml.Q5_1: 0.06, ggml.Q5_K: 0.06,
		ggml.Q4_0: 0.12, ggml.Q4_1: 0.12, ggml.Q4_K: 0.12, ggml.IQ4_NL: 0.12,
		ggml.Q3_K: 0.25, ggml.Q2_K: 0.45,
	}
	src := openFixture(t, "F32")
	for _, name := range quantFixtures {
		q := openFixture(t, name)
		for i := range q.Tensors {
			ti := &q.Tensors[i]
			if ti.Type == ggml.F32 {
				continue
			}
			st, _ := src.Tensor(ti.Name)
			x := ggml.BytesF32(src.TensorData(st))
			y := make([]float32, len(x))
			ggml.DequantizeRow(ti.Type, q.TensorData(ti), y)
			if rel := relRMS(x, y); rel > maxRel[ti.Type] || math.IsNaN(rel) {
				t.Errorf("%s %s (%v): relative RMS error %.4f > %.4f", name, ti.Name, ti.Type, rel, maxRel[ti.Type])
			}
		}
	}
}

func relRMS(x, y []float32) float64 {
	var e, s float64
	for i := range x {
		d := float64(x[i] - y[i])
		e += d * d
		s += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(e / s)
}

// TestMatVecFixtures multiplies every quantized fixture tensor with a
// quantized activation and compares with a float64 product of the
// dequantized weights and activation.
func TestMatVecFixtures(t *testing.T) {
	for _, name := range quantFixtures {
		q := openFixture(t, name)
		for i := range q.Tensors {
			ti := &q.Tensors[i]
			if len(ti.Shape) != 2 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", name, ti.Name), func(t *testing.T) {
				checkMatVecAgainstFloat(t, ti.Type, int(ti.Shape[0]), int(ti.Shape[1]), q.TensorData(ti))
			})
		}
	}
}

func checkMatVecAgainstFloat(t *testing.T, tp ggml.Type, n, rows int, w []byte) {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.37) * 2)
	}
	vt := tp.VecDotType()
	xq := make([]byte, vt.RowSize(n))
	ggml.QuantizeActivation(vt, x, xq)
	xd := make([]float32, n)
	ggml.DequantizeRow(vt, xq, xd)
	dst := make([]float32, rows)
	ggml.MatVec(tp, n, w, xq, dst)
	wd := make([]float32, n)
	rs := tp.RowSize(n)
	for r := 0; r < rows; r++ {
		ggml.DequantizeRow(tp, w[r*rs:(r+1)*rs], wd)
		var want, mag float64
		for i := range wd {
			want += float64(wd[i]) * float64(xd[i])
			mag += math.Abs(float64(wd[i]) * float64(xd[i]))
		}
		// Q8_1 carries s = fp16(d·Σq): the min term of Q4_1/Q5_1 uses that
		// rounded sum, not the dequantized activation (relative 2^-11).
		tol := 2e-5*mag + 1e-6
		if vt == ggml.Q8_1 {
			tol = 5e-4*mag + 1e-6
		}
		if math.Abs(float64(dst[r])-want) > tol {
			t.Fatalf("row %d: MatVec %v, float64 dot of dequantized %v (Σ|w·x| %v)", r, dst[r], want, mag)
		}
	}
}
