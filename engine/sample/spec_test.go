package sample

import (
	"testing"
)

// TestVerifyFlexible: top-k and top-p acceptance keep a drafted token
// exactly when it lies in the target's pool, for sampling and greedy.
func TestVerifyFlexible(t *testing.T) {
	logits := []float32{0, 3, 1, 2, -1} // probability order: 1, 3, 2, 0, 4
	for _, dec := range []string{DecodingSample, DecodingGreedy} {
		p := DefaultParams()
		p.TopK, p.TopP, p.MinP, p.Temperature, p.Decoding, p.Seed = 0, 1, 0, 1, dec, 7
		s, err := New(p, len(logits))
		if err != nil {
			t.Fatal(err)
		}
		for d, inTop2 := range map[int32]bool{1: true, 3: true, 2: false, 0: false, 4: false} {
			tok, ok := s.Verify(logits, d, nil, Acceptance{Rule: AcceptTopK, TopK: 2})
			if ok != inTop2 || (ok && tok != d) {
				t.Errorf("%s top-2: draft %d gave (%d, %v), want kept=%v", dec, d, tok, ok, inTop2)
			}
		}
		// softmax: token 1 holds 0.64, token 3 0.24: a pool of 0.8 is {1, 3}
		for d, in := range map[int32]bool{1: true, 3: true, 2: false} {
			if _, ok := s.Verify(logits, d, nil, Acceptance{Rule: AcceptTopP, TopP: 0.8}); ok != in {
				t.Errorf("%s top-p 0.8: draft %d kept=%v, want %v", dec, d, ok, in)
			}
		}
		// greedy with strict: kept exactly when it is the argmax
		if dec == DecodingGreedy {
			if tok, ok := s.Verify(logits, 3, nil, Acceptance{}); ok || tok != 1 {
				t.Errorf("greedy strict: draft 3 gave (%d, %v)", tok, ok)
			}
			if tok, ok := s.Verify(logits, 1, nil, Acceptance{}); !ok || tok != 1 {
				t.Errorf("greedy strict: draft 1 gave (%d, %v)", tok, ok)
			}
		}
	}
}

// TestVerifyStrictMatchesTarget: drafts from one sampler's distribution q,
// verified against another's p, give p's distribution (χ² at α = 0.001
// over 20,000 draws; 5 tokens, so every bin is large).
func TestVerifyStrictMatchesTarget(t *testing.T) {
	pl := []float32{0, 3, 1, 2, -1}
	ql := []float32{2, 0, 2, 1, 1}
	pp := DefaultParams()
	pp.TopK, pp.TopP, pp.MinP, pp.Temperature, pp.Seed = 0, 1, 0, 1, 1
	qp := pp
	qp.Seed = 2
	target, _ := New(pp, 5)
	draft, _ := New(qp, 5)
	var want Dist
	ref, _ := New(pp, 5)
	ref.Draft(pl, &want)
	const N = 20000
	counts := make([]float64, 5)
	var q Dist
	for range N {
		d := draft.Draft(ql, &q)
		tok, _ := target.Verify(pl, d, &q, Acceptance{})
		counts[tok]++
	}
	var chi float64
	for i, id := range want.IDs {
		exp := float64(want.P[i]) * N
		chi += (counts[id] - exp) * (counts[id] - exp) / exp
	}
	if chi > 18.47 { // χ²(4) at 0.999
		t.Errorf("χ² = %.1f: counts %v, want %v·%d", chi, counts, want, N)
	}
}
