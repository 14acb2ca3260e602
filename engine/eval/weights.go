package eval

import (
	"fmt"
	"math"

	"flowchat/engine/ggml"
	"flowchat/engine/model"
	"flowchat/engine/quant"
)

// WeightError is the quantization error of one weight matrix, w' − w over
// its elements.
type WeightError struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"` // type of w'
	Elements int     `json:"elements"`
	RMS      float64 `json:"rms"`     // sqrt(mean((w' − w)²))
	Max      float64 `json:"max"`     // max |w' − w|
	RelRMS   float64 `json:"rel_rms"` // RMS / sqrt(mean(w²))
}

// errAcc accumulates the error statistics of a tensor row by row.
type errAcc struct {
	se, sw, maxe float64
	n            int
}

func (a *errAcc) add(w, q []float32) {
	for i, v := range w {
		d := float64(q[i]) - float64(v)
		a.se += d * d
		a.sw += float64(v) * float64(v)
		a.maxe = max(a.maxe, math.Abs(d))
	}
	a.n += len(w)
}

func (a *errAcc) result(name, typ string) WeightError {
	e := WeightError{Name: name, Type: typ, Elements: a.n, Max: a.maxe}
	if a.n > 0 {
		e.RMS = math.Sqrt(a.se / float64(a.n))
	}
	if a.sw > 0 {
		e.RelRMS = math.Sqrt(a.se / a.sw)
	}
	return e
}

// CompareWeights measures every weight matrix of q against the matrix of
// the same name in base (the same model before re-quantization, or another
// file of it).
func CompareWeights(base, q *model.Model) ([]WeightError, error) {
	byName := map[string]*model.Weight{}
	for _, w := range base.Weights() {
		byName[w.Name] = w
	}
	var out []WeightError
	for _, w := range q.Weights() {
		b, ok := byName[w.Name]
		if !ok {
			return nil, fmt.Errorf("eval: the base model has no tensor %s", w.Name)
		}
		if b.Cols != w.Cols || b.Rows != w.Rows {
			return nil, fmt.Errorf("eval: tensor %s is [%d, %d] in the base, [%d, %d] here", w.Name, b.Cols, b.Rows, w.Cols, w.Rows)
		}
		var a errAcc
		x, y := make([]float32, w.Cols), make([]float32, w.Cols)
		for r := 0; r < w.Rows; r++ {
			ggml.DequantizeRow(b.Type, b.Row(r), x)
			ggml.DequantizeRow(w.Type, w.Row(r), y)
			a.add(x, y)
		}
		out = append(out, a.result(w.Name, quant.TypeName(w.Type)))
	}
	return out, nil
}

// QuantError measures what quantizing w to the Inferflow format f would
// cost, without changing w. Rows that are not whole blocks are an error.
func QuantError(w *model.Weight, f *quant.Format) (WeightError, error) {
	if w.Cols%f.Block != 0 {
		return WeightError{}, fmt.Errorf("eval: %s rows of %d are not whole %s blocks", w.Name, w.Cols, f.Name)
	}
	var a errAcc
	x, y := make([]float32, w.Cols), make([]float32, w.Cols)
	q := make([]byte, f.RowSize(w.Cols))
	for r := 0; r < w.Rows; r++ {
		ggml.DequantizeRow(w.Type, w.Row(r), x)
		f.QuantizeRow(x, q)
		f.DequantizeRow(q, y)
		a.add(x, y)
	}
	return a.result(w.Name, f.Name), nil
}

// Totals pools per-tensor errors into one, weighting by element count.
func Totals(es []WeightError) WeightError {
	t := WeightError{Name: "all"}
	var se, sw float64
	for _, e := range es {
		t.Elements += e.Elements
		se += e.RMS * e.RMS * float64(e.Elements)
		if e.RelRMS > 0 {
			sw += e.RMS * e.RMS * float64(e.Elements) / (e.RelRMS * e.RelRMS)
		}
		t.Max = max(t.Max, e.Max)
	}
	if t.Elements > 0 {
		t.RMS = math.Sqrt(se / float64(t.Elements))
	}
	if sw > 0 {
		t.RelRMS = math.Sqrt(se / sw)
	}
	return t
}
