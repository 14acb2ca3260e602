package eval

import (
	"context"
	"math"
	"os"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/quant"
)

// TestLabOrdering runs the Lab on TinyStories-656K: the base level must
// be exact, Q8 close to it, divergence must grow as bits shrink, and Q3H
// must beat Q3 at the same 4 bits per weight (the paper's claim).
func TestLabOrdering(t *testing.T) {
	base := fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")
	text, err := os.ReadFile(fixtures.Path(t, "text/tinystories_eval.txt"))
	if err != nil {
		t.Fatal(err)
	}
	levels := []string{"F32", "Q8", "Q4", "Q3H", "Q3", "Q2"}
	rep, err := RunLab(context.Background(), base, LabOptions{Levels: levels, Text: string(text), MaxChunks: 4, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]LevelResult{}
	for _, l := range rep.Levels {
		by[l.Level] = l
		t.Logf("%-4s %-10s %5.2f bits/weight  PPL %8.3f  KLD %.5f  top-1 %5.1f%%  weight rel. RMS %.4f", l.Level, l.Types, l.BitsPerWeight, l.PPL, l.KLD, 100*l.Top1, l.WeightRelRMS)
	}
	if f := by["F32"]; f.KLD > 1e-6 || f.Top1 != 1 || math.Abs(f.PPL-rep.BasePPL) > 1e-9 || f.BitsPerWeight != 32 {
		t.Errorf("F32 level is not the base: %+v", f)
	}
	if q := by["Q8"]; q.KLD > 0.002 || math.Abs(q.PPL-rep.BasePPL)/rep.BasePPL > 0.005 {
		t.Errorf("Q8 is not close to full precision: PPL %.4f (base %.4f), KLD %g", q.PPL, rep.BasePPL, q.KLD)
	}
	for i := 1; i+1 < len(levels); i++ {
		a, b := by[levels[i]], by[levels[i+1]]
		if !(a.KLD < b.KLD) || !(a.WeightRelRMS < b.WeightRelRMS) {
			t.Errorf("%s (KLD %g, weight error %g) is not better than %s (KLD %g, weight error %g)", a.Level, a.KLD, a.WeightRelRMS, b.Level, b.KLD, b.WeightRelRMS)
		}
	}
	for name, bits := range map[string]float64{"Q8": 9, "Q4": 5, "Q3H": 4, "Q3": 4, "Q2": 3} {
		if by[name].BitsPerWeight != bits {
			t.Errorf("%s: %.3f bits/weight, want %g (every matrix converted)", name, by[name].BitsPerWeight, bits)
		}
	}
}

// TestWeightErrorsAgree checks CompareWeights on a re-quantized model
// against QuantError, which quantizes one tensor on its own.
func TestWeightErrorsAgree(t *testing.T) {
	base := load656K(t, "F32")
	f := quant.ForType(quant.Q3H_B64)
	m, qr, err := LoadLevel(base.Path, "Q3H", LabOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if qr.BitsPerWeight() != 4 {
		t.Fatalf("Q3H: %.3f bits/weight", qr.BitsPerWeight())
	}
	es, err := CompareWeights(base.Net, m.Net)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range base.Net.Weights() {
		want, err := QuantError(w, f)
		if err != nil {
			t.Fatal(err)
		}
		if es[i].Name != want.Name || es[i].RMS != want.RMS || es[i].Max != want.Max || es[i].Elements != want.Elements {
			t.Fatalf("%s: CompareWeights %+v, QuantError %+v", w.Name, es[i], want)
		}
		if want.Max == 0 || want.RelRMS > 0.2 {
			t.Errorf("%s: implausible Q3H error %+v", w.Name, want)
		}
	}
}
