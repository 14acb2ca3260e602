package sample

import (
	"errors"
	"fmt"
	"math"
)

// Speculative decoding (Leviathan et al. 2023, Chen et al. 2023;
// Inferflow's section 8): a drafter proposes tokens, the target model
// scores them in one pass, and the sampler decides at each verified
// position whether to keep the drafted token. Draft is the drafter's side
// (a draw that also reports the distribution it came from), Verify the
// target's.
//
// Strict acceptance keeps the target's distribution exactly: a token d
// drawn from the draft's q is kept with probability min(1, p(d)/q(d)); on
// a rejection the token is drawn from norm(max(0, p − q)). The result is
// distributed as p whatever q is, so the draft may use any sampler. p is
// the whole chain's distribution at that position (penalties, DRY,
// truncation, temperature), computed with the sampler's state as it is
// then: the caller Accepts each kept token before verifying the next.
//
// Inferflow's flexible acceptance trades exactness for acceptance rate: a
// drafted token is kept when it lies in the target's top-k or top-p pool
// (ranked by the chain's final probabilities; for greedy and FSD, by the
// softmax of the logits after penalties and DRY), and on a rejection the
// token is a plain draw from p (greedy and FSD: their choice). Text under it is no longer distributed as the target's.

// Acceptance rules.
const (
	AcceptStrict = "strict"
	AcceptTopK   = "top-k"
	AcceptTopP   = "top-p"
)

// Acceptance chooses how Verify decides about a drafted token.
type Acceptance struct {
	Rule string  // AcceptStrict (default), AcceptTopK or AcceptTopP
	TopK int     // top-k: the pool's size (default 5)
	TopP float32 // top-p: the pool's mass (default 0.9)
}

// Check validates a and fills its defaults.
func (a *Acceptance) Check() error {
	switch a.Rule {
	case "", AcceptStrict:
		a.Rule = AcceptStrict
	case AcceptTopK:
		if a.TopK == 0 {
			a.TopK = 5
		}
		if a.TopK < 1 {
			return fmt.Errorf("%w: spec top-k %d must be at least 1", ErrInvalidParams, a.TopK)
		}
	case AcceptTopP:
		if a.TopP == 0 {
			a.TopP = 0.9
		}
		if !(a.TopP > 0 && a.TopP <= 1) {
			return fmt.Errorf("%w: spec top-p %g must be in (0, 1]", ErrInvalidParams, a.TopP)
		}
	default:
		return fmt.Errorf("%w: acceptance rule %q (want strict, top-k or top-p)", ErrInvalidParams, a.Rule)
	}
	return nil
}

// SpeculationError says why p cannot be verified speculatively, or nil.
// Mirostat's truncation and random-fsd's coin depend on the draw before
// them in a way the acceptance rule cannot replay.
func (p Params) SpeculationError() error {
	switch {
	case p.Mirostat != 0:
		return errors.New("speculative decoding does not support mirostat (its surprise bound moves with each draw); turn one of them off")
	case p.Decoding == DecodingRandomFSD:
		return errors.New("speculative decoding does not support random-fsd; use fsd, greedy or sampling")
	}
	return nil
}

// Dist is a distribution over tokens: IDs with probabilities P (positive,
// summing to about 1). A deterministic drafter's Dist is one token with
// probability 1.
type Dist struct {
	IDs []int32
	P   []float32
}

// Point makes d the certainty of tok.
func (d *Dist) Point(tok int32) {
	d.IDs, d.P = append(d.IDs[:0], tok), append(d.P[:0], 1)
}

// Prob is d's probability of tok.
func (d *Dist) Prob(tok int32) float32 {
	for i, id := range d.IDs {
		if id == tok {
			return d.P[i]
		}
	}
	return 0
}

// Draft runs the chain on logits, draws a token as Sample does, and writes
// the distribution it was drawn from into d (a point for greedy and FSD).
// Like Sample it advances the sampler's state but does not Accept.
func (s *Sampler) Draft(logits []float32, d *Dist) int32 {
	s.checkLen(logits)
	defer func() { s.st.step++ }()
	if det, tok := s.target(logits); det {
		d.Point(tok)
		return tok
	}
	c := &s.c
	d.IDs, d.P = d.IDs[:0], d.P[:0]
	for _, x := range c.data {
		if x.p > 0 {
			d.IDs, d.P = append(d.IDs, x.id), append(d.P, x.p)
		}
	}
	return c.data[draw(c, s.rng)].id
}

// target runs the chain on logits up to the draw. For greedy and FSD it
// returns (true, the chosen token) and leaves the candidates after the
// modifiers; for sampling it leaves the candidates with their final
// probabilities, sorted.
func (s *Sampler) target(logits []float32) (bool, int32) {
	if s.p.Mirostat != 0 || s.p.Decoding == DecodingRandomFSD {
		panic("sample: " + s.p.SpeculationError().Error())
	}
	if s.gram != nil {
		s.gram.pending = true // Accept advances the grammar over the kept token
		if s.p.Decoding != DecodingSample {
			// Greedy and FSD: exactly Sample's choice (the grammar's lazy
			// check, its mask only when the choice breaks the grammar).
			return true, s.run(logits, &s.st, s.rng, nil)
		}
	}
	c := &s.c
	c.load(logits)
	if len(s.biases) > 0 {
		logitBias(c, s.biases)
	}
	if s.gram != nil {
		// Sampling: the masked chain's distribution. (Sample checks its
		// draw lazily and masks only on a refusal; without truncating
		// stages the two distributions are the same.)
		s.gram.mask(c)
	}
	switch s.p.Decoding {
	case DecodingGreedy:
		s.modifiers(c, nil)
		return true, s.pickGreedy(c, nil)
	case DecodingFSD:
		s.modifiers(c, nil)
		return true, s.pickFSD(c, nil)
	}
	for _, id := range s.order {
		s.stage(id, c, s.rng, nil)
	}
	c.softmax()
	return false, -1
}

// Verify decides at one verified position about the drafted token d,
// which the drafter drew from q (nil: a point mass on d), under rule a.
// It returns the token to keep, and whether that is d; on a rejection the
// token is drawn as the rule says. It advances the sampler's state as
// Sample does; the caller Accepts the returned token.
func (s *Sampler) Verify(logits []float32, d int32, q *Dist, a Acceptance) (int32, bool) {
	s.checkLen(logits)
	defer func() { s.st.step++ }()
	if a.Rule == "" {
		a.Rule = AcceptStrict
	}
	det, pick := s.target(logits)
	c := &s.c
	if det {
		if a.Rule == AcceptStrict || pick == d {
			return pick, pick == d
		}
		// Rank d among the modified logits at temperature 1.
		if (s.gram == nil || s.gram.accepts(d)) && s.inPool(d, a, false) {
			return d, true
		}
		return pick, false
	}
	if a.Rule != AcceptStrict {
		if s.inPool(d, a, true) {
			return d, true
		}
		return c.data[draw(c, s.rng)].id, false
	}
	var pd float32
	for _, x := range c.data {
		if x.id == d {
			pd = x.p
			break
		}
	}
	qd := float32(1)
	if q != nil {
		qd = q.Prob(d)
	}
	// Accept with min(1, p/q). (A q that gave d no mass is a drafter bug;
	// treat it as a certainty, which only lowers acceptance.)
	if qd <= 0 {
		qd = 1
	}
	if float64(s.rng.Float32())*float64(qd) < float64(pd) {
		return d, true
	}
	// Rejected: draw from norm(max(0, p − q)), q spread over a dense
	// scratch so that each candidate finds its q in O(1).
	if s.qbuf == nil {
		s.qbuf = make([]float32, s.nVocab)
	}
	if q == nil {
		s.qbuf[d] = 1
	} else {
		for i, id := range q.IDs {
			if id >= 0 && int(id) < s.nVocab {
				s.qbuf[id] = q.P[i]
			}
		}
	}
	var total float64
	for i := range c.data {
		x := &c.data[i]
		x.p = max(0, x.p-s.qbuf[x.id])
		total += float64(x.p)
	}
	if q == nil {
		s.qbuf[d] = 0
	} else {
		for _, id := range q.IDs {
			if id >= 0 && int(id) < s.nVocab {
				s.qbuf[id] = 0
			}
		}
	}
	if total <= 0 || math.IsNaN(total) {
		// p ≤ q everywhere yet d was rejected: only rounding gets here.
		c.setProbs()
	}
	return c.data[draw(c, s.rng)].id, false
}

// inPool reports whether d lies in the target's top-k or top-p pool.
// probs says the candidates hold final probabilities already (sampling);
// else they hold modified logits (greedy, FSD), softmaxed here.
func (s *Sampler) inPool(d int32, a Acceptance, probs bool) bool {
	c := &s.c
	if !probs {
		c.softmax()
	}
	c.sort()
	var cum float32
	for i, x := range c.data {
		if x.id == d {
			switch a.Rule {
			case AcceptTopK:
				return i < a.TopK
			case AcceptTopP:
				return cum < a.TopP
			}
			return false
		}
		cum += x.p
	}
	return false
}
