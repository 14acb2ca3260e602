package sample

import (
	"math"
	"math/rand/v2"
	"slices"
)

// ExplainLimit is how many candidates Explain lists per stage.
const ExplainLimit = 32

// Explanation is one step of the chain seen stage by stage, for the GUI and
// `--explain-sampling` (one JSON object per token).
type Explanation struct {
	Decoding string        `json:"decoding"`
	Step     int           `json:"step"`   // Sample calls so far in this sequence
	Chosen   int32         `json:"chosen"` // the token the next Sample returns
	Stages   []StageReport `json:"stages"`
}

// StageReport is what one stage did: how many candidates went in and came
// out, and the most probable of those that went in.
type StageReport struct {
	Stage      string            `json:"stage"`
	In         int               `json:"in"`
	Out        int               `json:"out"`
	Candidates []CandidateReport `json:"candidates"` // the ExplainLimit most probable entering, most probable first
}

// CandidateReport is one token at one stage. Probabilities are softmax over
// the candidates alive at that point (renormalized after truncation).
type CandidateReport struct {
	Token   int32   `json:"token"`
	Logit   float32 `json:"logit"`           // after the stage (before it, when removed)
	PBefore float32 `json:"p_before"`        // entering the stage
	P       float32 `json:"p"`               // leaving the stage; 0 when removed
	Kept    bool    `json:"kept"`            // false: this stage removed the token
	Score   float32 `json:"score,omitempty"` // FSD's (1-alpha)*P_LM - alpha*P_anti
}

// RemovedBy names the stage that removed tok, or "" when tok was never
// listed as removed (it survived, or ranked below the listed candidates).
func (e Explanation) RemovedBy(tok int32) string {
	for _, st := range e.Stages {
		for _, c := range st.Candidates {
			if c.Token == tok && !c.Kept {
				return st.Stage
			}
		}
	}
	return ""
}

// Explain runs the chain on logits as the next Sample would and reports
// every stage. It allocates, and it does not advance the sampler: the PRNG
// and mirostat state run on copies, so Chosen is what the next Sample with
// the same logits returns.
func (s *Sampler) Explain(logits []float32) Explanation {
	s.checkLen(logits)
	st := s.st
	rng := rand.New(&st.pcg)
	tr := &tracer{limit: ExplainLimit, exp: Explanation{Decoding: s.p.Decoding, Step: s.st.step}}
	tr.exp.Chosen = s.run(logits, &st, rng, tr)
	return tr.exp
}

// tracer collects StageReports; every method is a no-op on a nil tracer,
// which is how Sample runs.
type tracer struct {
	limit  int
	exp    Explanation
	before []cand
}

// restart drops the stages recorded so far: the step is being rerun
// behind the grammar mask.
func (t *tracer) restart() {
	if t != nil {
		t.exp.Stages = t.exp.Stages[:0]
	}
}

// snap remembers the candidates entering a stage.
func (t *tracer) snap(c *cands) {
	if t == nil {
		return
	}
	t.before = append(t.before[:0], c.data...)
}

// record compares the snapshot with the candidates leaving the stage.
func (t *tracer) record(name string, c *cands, scored bool) {
	if t == nil {
		return
	}
	in := withProbs(t.before)
	out := withProbs(c.data)
	after := make(map[int32]cand, len(out))
	for _, x := range out {
		after[x.id] = x
	}
	slices.SortFunc(in, func(a, b cand) int {
		if a.p != b.p {
			if a.p > b.p {
				return -1
			}
			return 1
		}
		return int(a.id) - int(b.id)
	})
	rep := StageReport{Stage: name, In: len(in), Out: len(out)}
	for _, x := range in[:min(len(in), t.limit)] {
		rep.Candidates = append(rep.Candidates, report(x, after, scored))
	}
	t.exp.Stages = append(t.exp.Stages, rep)
}

func report(x cand, after map[int32]cand, scored bool) CandidateReport {
	r := CandidateReport{Token: x.id, Logit: x.logit, PBefore: x.p}
	if y, ok := after[x.id]; ok {
		r.Kept, r.Logit, r.P = true, y.logit, y.p
		if scored {
			r.Score = y.aux
		}
	}
	return r
}

// chosen records the final stage (the draw, greedy or mirostat).
func (t *tracer) chosen(name string, c *cands) {
	if t == nil {
		return
	}
	t.record(name, c, false)
}

// withProbs copies xs with p = softmax of their logits, order kept; aux
// (FSD's score) is kept too.
func withProbs(xs []cand) []cand {
	out := slices.Clone(xs)
	tmp := cands{data: out}
	maxL, sum := tmp.normalizer()
	for i := range out {
		if math.IsInf(float64(maxL), -1) {
			out[i].p = 1 / float32(len(out))
			continue
		}
		out[i].p = prob(out[i].logit, maxL, sum)
	}
	return out
}
