package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestGreedy(t *testing.T) {
	cases := []struct {
		logits []float32
		want   int32
	}{
		{[]float32{1, 3, 2, 3}, 1}, // tie: lowest index
		{[]float32{-5, -1, -7}, 1},
		{[]float32{0}, 0},
		{[]float32{float32(math.Inf(-1)), -1e30}, 1},
		{nil, -1},
	}
	for _, c := range cases {
		if got := Greedy(c.logits); got != c.want {
			t.Errorf("Greedy(%v) = %d, want %d", c.logits, got, c.want)
		}
	}
}

func TestTopK(t *testing.T) {
	c := loaded([]float32{1, 3, 2, 3, 0})
	topK(c, 2) // the tie at 3 keeps both
	expectSurvivors(t, c, map[int32]float64{1: 1, 3: 1})
	if c.data[0].id != 1 || c.data[1].id != 3 {
		t.Errorf("order %v: want descending logit, lower id first on ties", c.data)
	}
	c = loaded([]float32{1, 3, 2, 3, 0})
	topK(c, 3) // e^3, e^3, e^2 renormalized
	expectSurvivors(t, c, map[int32]float64{1: math.E * math.E * math.E, 3: math.E * math.E * math.E, 2: math.E * math.E})
	c = loaded([]float32{1, 2})
	topK(c, 0) // off
	expectSurvivors(t, c, map[int32]float64{0: math.E, 1: math.E * math.E})
}

// TestSelectTopMatchesSort is the differential test of the heap selection
// against a full sort, on random data with many ties.
func TestSelectTopMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(300)
		l := make([]float32, n)
		for i := range l {
			l[i] = float32(r.IntN(20)) // many ties
		}
		k := 1 + r.IntN(n)
		a, b := loaded(l), loaded(l)
		a.selectTop(k)
		b.sort()
		b.truncate(k)
		for i := range a.data {
			if a.data[i].id != b.data[i].id {
				t.Fatalf("n=%d k=%d: position %d has %d, sort gives %d", n, k, i, a.data[i].id, b.data[i].id)
			}
		}
	}
}

// TestRadixSortMatchesComparison checks the radix sort against the
// comparison sort on id-ordered data with ties, signed zeros and infinities.
func TestRadixSortMatchesComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.Inf(1)), -1e-40, 1e-40, math.MaxFloat32, -math.MaxFloat32}
	for trial := 0; trial < 100; trial++ {
		n := radixMin + r.IntN(3000)
		l := make([]float32, n)
		for i := range l {
			switch r.IntN(4) {
			case 0:
				l[i] = special[r.IntN(len(special))]
			case 1:
				l[i] = float32(r.IntN(10) - 5) // ties
			default:
				l[i] = float32(r.NormFloat64() * 10)
			}
		}
		a, b := loaded(l), loaded(l)
		a.sort() // radix: id order, n >= radixMin
		slices.SortFunc(b.data, cmpCand)
		for i := range a.data {
			if a.data[i].id != b.data[i].id {
				t.Fatalf("n=%d position %d: radix %d (%g), comparison %d (%g)", n, i, a.data[i].id, a.data[i].logit, b.data[i].id, b.data[i].logit)
			}
		}
	}
}

func TestTopP(t *testing.T) {
	// sorted: 0.4 (1), 0.3 (2), 0.2 (3), 0.1 (0); cumulative 0.4 0.7 0.9 1.0
	ps := []float64{0.1, 0.4, 0.3, 0.2}
	c := loaded(logitsOf(ps...))
	topP(c, 0.75, 1)
	expectSurvivors(t, c, map[int32]float64{1: 0.4, 2: 0.3, 3: 0.2})
	c = loaded(logitsOf(ps...))
	topP(c, 0.35, 1)
	expectSurvivors(t, c, map[int32]float64{1: 1})
	c = loaded(logitsOf(ps...))
	topP(c, 0.35, 3) // min_keep wins
	expectSurvivors(t, c, map[int32]float64{1: 0.4, 2: 0.3, 3: 0.2})
	c = loaded(logitsOf(ps...))
	topP(c, 1, 1)
	expectSurvivors(t, c, map[int32]float64{0: 0.1, 1: 0.4, 2: 0.3, 3: 0.2})
}

func TestMinP(t *testing.T) {
	ps := []float64{0.15, 0.5, 0.1, 0.25}
	// threshold 0.25 * 0.5 = 0.125: 0.1 goes
	c := loaded(logitsOf(ps...))
	minP(c, 0.25, 1)
	expectSurvivors(t, c, map[int32]float64{0: 0.15, 1: 0.5, 3: 0.25})
	if c.sorted || c.data[0].id != 0 {
		t.Errorf("unsorted path should keep token order, got %v", c.data)
	}
	// the same on an already sorted buffer (the sorted path)
	c = loaded(logitsOf(ps...))
	c.sort()
	minP(c, 0.25, 1)
	expectSurvivors(t, c, map[int32]float64{0: 0.15, 1: 0.5, 3: 0.25})
	// only the top passes 0.9, min_keep 2 falls back to the sorted path
	c = loaded(logitsOf(ps...))
	minP(c, 0.9, 2)
	expectSurvivors(t, c, map[int32]float64{1: 0.5, 3: 0.25})
}

func TestTypical(t *testing.T) {
	// H = -sum p ln p = 1.142122; |-ln p - H| = 0.449, 0.062, 0.755, 1.854:
	// typicality order 1, 0, 2, 3; mass 0.3, 0.8 > 0.5 stops after two.
	ps := []float64{0.5, 0.3, 0.15, 0.05}
	c := loaded(logitsOf(ps...))
	typical(c, 0.5, 1)
	expectSurvivors(t, c, map[int32]float64{0: 0.5, 1: 0.3})
	if c.data[0].id != 1 {
		t.Errorf("most typical token first: got %v", c.data)
	}
	c = loaded(logitsOf(ps...))
	typical(c, 0.25, 1) // 0.3 > 0.25 at the first token
	expectSurvivors(t, c, map[int32]float64{1: 1})
	c = loaded(logitsOf(ps...))
	typical(c, 0.9, 1) // 0.3, 0.8, 0.95 > 0.9
	expectSurvivors(t, c, map[int32]float64{0: 0.5, 1: 0.3, 2: 0.15})
}

func TestTailFree(t *testing.T) {
	// first differences 0.1 0.1 0.14 0.02, second 0 -0.04 0.12, |.| normalized
	// 0 0.25 0.75; cumulative 0 0.25 1.0.
	ps := []float64{0.4, 0.3, 0.2, 0.06, 0.04}
	c := loaded(logitsOf(ps...))
	tailFree(c, 0.95, 1) // passes z at i = 2: keep 2
	expectSurvivors(t, c, map[int32]float64{0: 0.4, 1: 0.3})
	c = loaded(logitsOf(ps...))
	tailFree(c, 0.2, 1) // passes z at i = 1: keep 1
	expectSurvivors(t, c, map[int32]float64{0: 1})
	c = loaded(logitsOf(ps...))
	tailFree(c, 0.2, 2) // min_keep 2: the first i >= 2 where cum > z is 2
	expectSurvivors(t, c, map[int32]float64{0: 0.4, 1: 0.3})
}

func TestTemperature(t *testing.T) {
	c := loaded([]float32{1, 2, 3})
	temperature(c, 0.5) // softmax(2, 4, 6)
	expectSurvivors(t, c, map[int32]float64{0: math.Exp(2), 1: math.Exp(4), 2: math.Exp(6)})
	c = loaded([]float32{1, 2, 3})
	temperature(c, 2) // softmax(0.5, 1, 1.5)
	expectSurvivors(t, c, map[int32]float64{0: math.Exp(0.5), 1: math.Exp(1), 2: math.Exp(1.5)})
	c = loaded([]float32{1, 3, 2, 3})
	temperature(c, 0) // greedy, lowest id on ties
	expectSurvivors(t, c, map[int32]float64{1: 1})
}

func TestXTC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ps := []float64{0.4, 0.3, 0.2, 0.1}
	// 0.4, 0.3, 0.2 reach 0.15: all but the least probable of them go.
	c := loaded(logitsOf(ps...))
	xtc(c, 1, 0.15, 1, rng)
	expectSurvivors(t, c, map[int32]float64{2: 0.2, 3: 0.1})
	c = loaded(logitsOf(ps...))
	xtc(c, 1, 0.35, 1, rng) // only one top choice: nothing to exclude
	expectSurvivors(t, c, map[int32]float64{0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1})
	c = loaded(logitsOf(ps...))
	xtc(c, 1, 0.15, 3, rng) // min_keep 3 > 2 left: no-op
	expectSurvivors(t, c, map[int32]float64{0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1})
	c = loaded(logitsOf(ps...))
	xtc(c, 0, 0.15, 1, rng) // probability 0: off
	expectSurvivors(t, c, map[int32]float64{0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1})
	// probability 0.3: acts on about 30% of the steps
	acted := 0
	for i := 0; i < 10000; i++ {
		c = loaded(logitsOf(ps...))
		xtc(c, 0.3, 0.15, 1, rng)
		if len(c.data) == 2 {
			acted++
		}
	}
	if acted < 2800 || acted > 3200 {
		t.Errorf("xtc acted %d/10000 times at probability 0.3", acted)
	}
}

func TestPenalties(t *testing.T) {
	h := newHistory(4, 64)
	for _, tok := range []int32{0, 1, 0} {
		h.accept(tok)
	}
	c := loaded([]float32{2, -1, 0.5, 3})
	penalties(c, &h, 4, 2, 0.5, 0.25)
	// token 0: 2/2 - 2*0.5 - 0.25; token 1: -1*2 - 1*0.5 - 0.25
	want := []float32{2.0/2 - 1 - 0.25, -2 - 0.5 - 0.25, 0.5, 3}
	for i, w := range want {
		if c.data[i].logit != w {
			t.Errorf("token %d: logit %g, want %g", i, c.data[i].logit, w)
		}
	}
	// The same through the candidate walk (buffer not in token order).
	c = loaded([]float32{2, -1, 0.5, 3})
	c.sort()
	penalties(c, &h, 4, 2, 0.5, 0.25)
	for _, x := range c.data {
		if x.logit != want[x.id] {
			t.Errorf("sorted walk: token %d: logit %g, want %g", x.id, x.logit, want[x.id])
		}
	}
}

func TestPenaltyWindow(t *testing.T) {
	h := newHistory(4, 2)
	for _, tok := range []int32{0, 1, 2, 2} { // window: 2, 2
		h.accept(tok)
	}
	c := loaded([]float32{1, 1, 1, 1})
	penalties(c, &h, 4, 1, 1, 0)
	want := []float32{1, 1, -1, 1}
	for i, w := range want {
		if c.data[i].logit != w {
			t.Errorf("token %d: logit %g, want %g (only the last 2 tokens count)", i, c.data[i].logit, w)
		}
	}
	h = newHistory(4, -1) // whole sequence
	for _, tok := range []int32{0, 1, 2, 2} {
		h.accept(tok)
	}
	c = loaded([]float32{1, 1, 1, 1})
	penalties(c, &h, 4, 1, 1, 0)
	want = []float32{0, 0, -1, 1}
	for i, w := range want {
		if c.data[i].logit != w {
			t.Errorf("window -1: token %d: logit %g, want %g", i, c.data[i].logit, w)
		}
	}
}

func TestLogitBias(t *testing.T) {
	p := DefaultParams()
	p.Seed = 1
	p.LogitBias = map[int32]float32{0: float32(math.Inf(-1)), 2: 5}
	s, err := New(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Explain([]float32{10, 1, 0})
	st := e.Stages[0]
	if st.Stage != "logit_bias" || st.Out != 3 {
		t.Fatalf("first stage %+v", st)
	}
	for i := 0; i < 200; i++ {
		if tok := s.Sample([]float32{10, 1, 0}); tok == 0 {
			t.Fatal("banned token drawn")
		}
	}
	p.LogitBias = map[int32]float32{3: 1}
	if _, err := New(p, 3); err == nil {
		t.Error("bias for a token outside the vocabulary accepted")
	}
}
