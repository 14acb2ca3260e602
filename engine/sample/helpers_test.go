package sample

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// logitsOf returns ln(p): softmax of the result is p exactly (up to float32).
func logitsOf(ps ...float64) []float32 {
	l := make([]float32, len(ps))
	for i, p := range ps {
		l[i] = float32(math.Log(p))
	}
	return l
}

func loaded(logits []float32) *cands {
	c := newCands(len(logits))
	c.load(logits)
	return &c
}

func randLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	return l
}

// expectSurvivors checks that exactly the tokens of want are alive and that
// their renormalized probabilities (softmax over the survivors' logits) are
// want[tok] / sum(want) to 1e-6.
func expectSurvivors(t *testing.T, c *cands, want map[int32]float64) {
	t.Helper()
	got := withProbs(c.data)
	var ids []int32
	for _, x := range got {
		ids = append(ids, x.id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var wantIDs []int32
	var sum float64
	for id, w := range want {
		wantIDs = append(wantIDs, id)
		sum += w
	}
	sort.Slice(wantIDs, func(i, j int) bool { return wantIDs[i] < wantIDs[j] })
	if len(ids) != len(wantIDs) {
		t.Fatalf("survivors %v, want %v", ids, wantIDs)
	}
	for i := range ids {
		if ids[i] != wantIDs[i] {
			t.Fatalf("survivors %v, want %v", ids, wantIDs)
		}
	}
	for _, x := range got {
		if w := want[x.id] / sum; math.Abs(float64(x.p)-w) > 1e-6 {
			t.Errorf("token %d: p = %.9f, want %.9f", x.id, x.p, w)
		}
	}
}
