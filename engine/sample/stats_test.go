package sample

import (
	"math"
	"testing"
)

// gammaQ is the regularized upper incomplete gamma function Q(a, x)
// (Numerical Recipes' series and Lentz continued fraction).
func gammaQ(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, del, ap := 1/a, 1/a, a
		for range 1000 {
			ap++
			del *= x / ap
			sum += del
			if math.Abs(del) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return 1 - sum*front
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return front * h
}

// chi2PValue is P(X >= x) for X chi-square with df degrees of freedom.
func chi2PValue(x float64, df int) float64 { return gammaQ(float64(df)/2, x/2) }

func TestChi2PValue(t *testing.T) {
	// Textbook 5% and 0.1% critical values.
	for _, c := range []struct {
		x    float64
		df   int
		want float64
	}{{3.841, 1, 0.05}, {5.991, 2, 0.05}, {11.070, 5, 0.05}, {16.266, 3, 0.001}, {29.588, 10, 0.001}} {
		if got := chi2PValue(c.x, c.df); math.Abs(got-c.want) > 2e-4 {
			t.Errorf("chi2 p(%g, %d) = %g, want %g", c.x, c.df, got, c.want)
		}
	}
}

// TestSamplingFrequencies draws 20,000 tokens per configuration with a
// fixed seed: no token outside the expected kept set is ever drawn, and the
// frequencies fit the expected renormalized distribution (chi-square,
// p > 0.001).
func TestSamplingFrequencies(t *testing.T) {
	p8 := []float64{0.3, 0.2, 0.15, 0.12, 0.08, 0.06, 0.05, 0.04}
	p5 := []float64{0.4, 0.3, 0.2, 0.06, 0.04}
	p4 := []float64{0.5, 0.3, 0.15, 0.05}
	only := func(ps []float64, keep ...int) []float64 { // renormalize over keep
		out := make([]float64, len(ps))
		var sum float64
		for _, k := range keep {
			sum += ps[k]
		}
		for _, k := range keep {
			out[k] = ps[k] / sum
		}
		return out
	}
	xtcHalf := make([]float64, 8) // XTC acts on half of the steps
	for i, w := range only(p8, 3, 4, 5, 6, 7) {
		xtcHalf[i] = 0.5*p8[i] + 0.5*w
	}
	squared := make([]float64, 8) // temperature 0.5 squares the probabilities
	var sq float64
	for _, p := range p8 {
		sq += p * p
	}
	for i, p := range p8 {
		squared[i] = p * p / sq
	}
	cases := []struct {
		name  string
		probs []float64
		set   func(*Params)
		want  []float64
	}{
		{"dist", p8, func(p *Params) {}, p8},
		{"top_k 3", p8, func(p *Params) { p.Order, p.TopK = []string{"top_k"}, 3 }, only(p8, 0, 1, 2)},
		{"top_p 0.7", p8, func(p *Params) { p.Order, p.TopP = []string{"top_p"}, 0.7 }, only(p8, 0, 1, 2, 3)},
		{"min_p 0.3", p8, func(p *Params) { p.Order, p.MinP = []string{"min_p"}, 0.3 }, only(p8, 0, 1, 2, 3)},
		{"typical 0.9", p4, func(p *Params) { p.Order, p.TypicalP = []string{"typical_p"}, 0.9 }, only(p4, 0, 1, 2)},
		{"tfs 0.95", p5, func(p *Params) { p.Order, p.TFSZ = []string{"tfs_z"}, 0.95 }, only(p5, 0, 1)},
		{"xtc always", p8, func(p *Params) { p.Order, p.XTCProbability, p.XTCThreshold = []string{"xtc"}, 1, 0.1 }, only(p8, 3, 4, 5, 6, 7)},
		{"xtc half", p8, func(p *Params) { p.Order, p.XTCProbability, p.XTCThreshold = []string{"xtc"}, 0.5, 0.1 }, xtcHalf},
		{"temperature 0.5", p8, func(p *Params) { p.Order, p.Temperature = []string{"temperature"}, 0.5 }, squared},
		{"default chain", p8, func(p *Params) { p.Order = nil }, nil}, // min_p 0.05*0.3 keeps all, top_p 0.95 cuts 0.04
	}
	cases[len(cases)-1].want = only(p8, 0, 1, 2, 3, 4, 5, 6)
	const draws = 20000
	for i, c := range cases {
		p := DefaultParams()
		p.Order, p.Seed, p.Temperature = []string{}, uint64(100+i), 1
		c.set(&p)
		s := mustNew(t, p, len(c.probs))
		logits := logitsOf(c.probs...)
		counts := make([]int, len(c.probs))
		for range draws {
			counts[s.Sample(logits)]++
		}
		var chi2 float64
		df := -1
		for tok, w := range c.want {
			if w == 0 {
				if counts[tok] != 0 {
					t.Errorf("%s: token %d drawn %d times, outside the kept set", c.name, tok, counts[tok])
				}
				continue
			}
			e := w * draws
			chi2 += (float64(counts[tok]) - e) * (float64(counts[tok]) - e) / e
			df++
		}
		pv := 1.0
		if df > 0 {
			pv = chi2PValue(chi2, df)
		}
		t.Logf("%-16s chi2 %.2f df %d p %.3f counts %v", c.name, chi2, df, pv, counts)
		if pv <= 0.001 {
			t.Errorf("%s: frequencies %v do not fit %v (chi2 %.2f, df %d, p %.4g)", c.name, counts, c.want, chi2, df, pv)
		}
	}
}
