package sample

import (
	"math/rand/v2"
	"testing"
)

func randLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	return l
}

func TestSmokeDefaultChain(t *testing.T) {
	p := DefaultParams()
	p.Seed = 42
	s, err := New(p, 32000)
	if err != nil {
		t.Fatal(err)
	}
	l := randLogits(32000, 1)
	e := s.Explain(l)
	tok := s.Sample(l)
	if tok != e.Chosen {
		t.Fatalf("explain chose %d, sample %d", e.Chosen, tok)
	}
	for _, st := range e.Stages {
		t.Logf("%s %d->%d", st.Stage, st.In, st.Out)
	}
	allocs := testing.AllocsPerRun(100, func() { s.Accept(s.Sample(l)) })
	t.Log("allocs", allocs)
}
