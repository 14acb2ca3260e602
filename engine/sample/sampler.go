package sample

import (
	"fmt"
	"math/rand/v2"
)

// Sampler chooses the tokens of one sequence. It owns the per-sequence
// state (PRNG, mirostat's mu, the accepted tokens) and reuses its buffers,
// so Sample allocates nothing once warm. Not safe for concurrent use.
type Sampler struct {
	p       Params
	nVocab  int
	order   []stageID // Params.Order without the stages its settings turn off
	seed    uint64
	biases  []bias
	dryP    dryParams
	fsdP    fsdParams
	vocab   Vocab
	brkToks [][]int32
	gram    *grammarStage // nil without Params.Grammar

	c    cands
	hist history
	dry  dryState
	fsd  fsdState

	st  state      // everything Explain must not advance
	rng *rand.Rand // draws from st.pcg

	qbuf []float32 // Verify's dense draft distribution, zero between calls
}

// state is the part of a Sampler that a step advances; Explain runs on a
// copy so that it reports the very token the next Sample returns.
type state struct {
	pcg  rand.PCG
	mu   float32 // mirostat's surprise bound, bits; starts at 2*tau
	step int     // Sample calls since New or Reset
}

// Option configures New.
type Option func(*Sampler)

// WithVocab lets DRY map Params.DRYSequenceBreakers onto tokens (see Vocab
// and Tokenizer). Without it, or WithBreakerTokens, DRY runs without breakers.
func WithVocab(v Vocab) Option { return func(s *Sampler) { s.vocab = v } }

// WithBreakerTokens gives DRY's sequence breakers as token sequences (head
// token first), for callers that tokenized them already. It replaces the
// breakers a Vocab would derive from Params.DRYSequenceBreakers.
func WithBreakerTokens(seqs [][]int32) Option {
	return func(s *Sampler) { s.brkToks = seqs }
}

// New validates p and builds a sampler for logits of nVocab entries.
func New(p Params, nVocab int, opts ...Option) (*Sampler, error) {
	if p.Decoding == "" {
		p.Decoding = DecodingSample
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if nVocab <= 0 {
		return nil, fmt.Errorf("%w: vocabulary size %d", ErrInvalidParams, nVocab)
	}
	s := &Sampler{p: p, nVocab: nVocab}
	for _, o := range opts {
		o(s)
	}
	order, err := parseOrder(p.Order)
	if err != nil {
		return nil, err
	}
	for _, id := range order {
		if p.active(id) {
			s.order = append(s.order, id)
		}
	}
	if s.biases, err = makeBiases(p.LogitBias, nVocab); err != nil {
		return nil, err
	}
	brk, err := s.makeBreakers()
	if err != nil {
		return nil, err
	}
	s.dryP = dryParams{multiplier: p.DRYMultiplier, base: p.DRYBase, allowed: p.DRYAllowedLength, lastN: p.DRYPenaltyLastN}
	// More candidates than tokens would only size the scratch.
	s.fsdP = fsdParams{alpha: p.FSDAlpha, beta: p.FSDBeta, k: min(max(p.FSDK, 1), nVocab), n: max(p.FSDN, 1)}
	s.c = newCands(nVocab)
	s.hist = newHistory(nVocab, p.RepeatLastN)
	s.dry = newDRYState(nVocab, brk)
	s.fsd = newFSDState(s.fsdP)
	if p.Grammar != "" {
		if s.gram, err = newGrammarStage(p.Grammar, s.vocab, nVocab); err != nil {
			return nil, err
		}
	}
	s.seed = p.Seed
	if s.seed == SeedRandom {
		s.seed = rand.Uint64()
	}
	s.Reset()
	return s, nil
}

func (s *Sampler) makeBreakers() (breakers, error) {
	if s.brkToks != nil {
		b := breakers{}
		for i, seq := range s.brkToks {
			if len(seq) == 0 {
				return nil, fmt.Errorf("%w: breaker token sequence %d is empty", ErrInvalidParams, i)
			}
			for _, t := range seq {
				if t < 0 || int(t) >= s.nVocab {
					return nil, fmt.Errorf("%w: breaker token %d outside the vocabulary [0, %d)", ErrInvalidParams, t, s.nVocab)
				}
			}
			b.add(seq[0], seq[1:min(len(seq), dryMaxTailTokens+1)])
		}
		return b, nil
	}
	if s.vocab == nil || s.p.DRYMultiplier == 0 {
		return breakers{}, nil
	}
	return buildBreakers(s.p.DRYSequenceBreakers, s.vocab, s.nVocab), nil
}

// Reset forgets the sequence: accepted tokens, mirostat state, step count,
// grammar state, and reseeds the PRNG, so a Reset sampler replays the same
// generation.
func (s *Sampler) Reset() {
	s.hist.reset()
	if s.gram != nil {
		s.gram.st, s.gram.pending = s.gram.start, false
	}
	s.st = state{pcg: *rand.NewPCG(s.seed, s.seed^0x9e3779b97f4a7c15), mu: 2 * s.p.MirostatTau}
	s.rng = rand.New(&s.st.pcg)
}

// Seed is the seed in use (the drawn one when Params.Seed was SeedRandom).
func (s *Sampler) Seed() uint64 { return s.seed }

// Params returns the settings the sampler was built with.
func (s *Sampler) Params() Params { return s.p }

// Mu is mirostat's current surprise bound in bits (2*tau before any step).
func (s *Sampler) Mu() float32 { return s.st.mu }

// Accept records one token of the sequence (prompt tokens too) for the
// penalties, DRY and FSD. Sample does not call it: the caller accepts the
// token it keeps. The grammar advances only over generated tokens: those
// accepted after a Sample (prompt tokens come before the first). A token
// outside the vocabulary is a programming error.
func (s *Sampler) Accept(tok int32) {
	if tok < 0 || int(tok) >= s.nVocab {
		panic(fmt.Sprintf("sample: Accept(%d) outside the vocabulary [0, %d)", tok, s.nVocab))
	}
	s.hist.accept(tok)
	if s.gram != nil && s.gram.pending {
		s.gram.advance(tok)
		s.gram.pending = false
	}
}

// Sample chooses the next token from logits ([nVocab], not modified) and
// advances the sampler's state (PRNG, mirostat, step).
func (s *Sampler) Sample(logits []float32) int32 {
	s.checkLen(logits)
	tok := s.run(logits, &s.st, s.rng, nil)
	s.st.step++
	if s.gram != nil {
		s.gram.pending = true
	}
	return tok
}

func (s *Sampler) checkLen(logits []float32) {
	if len(logits) != s.nVocab {
		panic(fmt.Sprintf("sample: %d logits for a vocabulary of %d", len(logits), s.nVocab))
	}
}

// run is one step; tr is nil except under Explain. With a grammar, the
// unconstrained chain's token is kept when the grammar takes it;
// otherwise the step is rerun from the same state (rng draws from st.pcg,
// so restoring st rewinds it) with the grammar mask first.
func (s *Sampler) run(logits []float32, st *state, rng *rand.Rand, tr *tracer) int32 {
	if s.gram == nil {
		return s.chain(logits, st, rng, tr, false)
	}
	saved := *st
	if tok := s.chain(logits, st, rng, tr, false); s.gram.accepts(tok) {
		return tok
	}
	*st = saved
	tr.restart()
	return s.chain(logits, st, rng, tr, true)
}

// chain is one step of the chain, behind the grammar mask when masked.
func (s *Sampler) chain(logits []float32, st *state, rng *rand.Rand, tr *tracer, masked bool) int32 {
	c := &s.c
	c.load(logits)
	if len(s.biases) > 0 {
		tr.snap(c)
		logitBias(c, s.biases)
		tr.record("logit_bias", c, false)
	}
	if masked {
		tr.snap(c)
		s.gram.mask(c)
		tr.record("grammar", c, false)
	}
	switch s.decodingFor(st, rng) {
	case DecodingGreedy:
		s.modifiers(c, tr)
		return s.pickGreedy(c, tr)
	case DecodingFSD:
		s.modifiers(c, tr)
		return s.pickFSD(c, tr)
	}
	return s.sampleChain(c, st, rng, tr)
}

// decodingFor resolves random-fsd for this step: during the first
// FSDRandomSteps steps a fair coin picks sampling or FSD (Inferflow's
// RandomizedFSD), afterwards FSD.
func (s *Sampler) decodingFor(st *state, rng *rand.Rand) string {
	if s.p.Decoding != DecodingRandomFSD {
		return s.p.Decoding
	}
	if st.step >= s.p.FSDRandomSteps || rng.Float32() >= 0.5 {
		return DecodingFSD
	}
	return DecodingSample
}

// modifiers runs the stages that change logits without truncating
// (penalties, DRY), in the configured order; greedy and FSD use only these.
func (s *Sampler) modifiers(c *cands, tr *tracer) {
	for _, id := range s.order {
		if id == stPenalties || id == stDRY {
			s.stage(id, c, nil, tr)
		}
	}
}

func (s *Sampler) sampleChain(c *cands, st *state, rng *rand.Rand, tr *tracer) int32 {
	for _, id := range s.order {
		if s.p.Mirostat != 0 && truncating(id) {
			continue // mirostat does its own truncation (llama.cpp: temp + mirostat)
		}
		s.stage(id, c, rng, tr)
	}
	tr.snap(c)
	var i int
	var name string
	switch s.p.Mirostat {
	case 1:
		i, name = mirostatV1(c, rng, s.p.MirostatTau, s.p.MirostatEta, s.nVocab, &st.mu), "mirostat_v1"
	case 2:
		i, name = mirostatV2(c, rng, s.p.MirostatTau, s.p.MirostatEta, &st.mu), "mirostat_v2"
	default:
		c.softmax()
		i, name = draw(c, rng), "dist"
	}
	tr.chosen(name, c)
	return c.data[i].id
}

// active reports whether a stage can change anything under p; inactive
// stages are left out of the chain (and of explanations).
func (p *Params) active(id stageID) bool {
	switch id {
	case stPenalties:
		return p.RepeatLastN != 0 && (p.RepeatPenalty != 1 || p.FrequencyPenalty != 0 || p.PresencePenalty != 0)
	case stDRY:
		return p.DRYMultiplier != 0 && p.DRYBase >= 1 && p.DRYPenaltyLastN != 0
	case stTopK:
		return p.TopK > 0
	case stTFS:
		return p.TFSZ < 1
	case stTypical:
		return p.TypicalP < 1
	case stTopP:
		return p.TopP < 1
	case stMinP:
		return p.MinP > 0
	case stXTC:
		return p.XTCProbability > 0 && p.XTCThreshold <= 0.5
	}
	return p.Temperature != 1
}

func truncating(id stageID) bool { return id != stPenalties && id != stDRY && id != stTemperature }

// stage runs one stage with tracing around it.
func (s *Sampler) stage(id stageID, c *cands, rng *rand.Rand, tr *tracer) {
	tr.snap(c)
	p := &s.p
	keep := max(p.MinKeep, 1) // a chain that empties itself has nothing to draw
	switch id {
	case stPenalties:
		penalties(c, &s.hist, s.nVocab, p.RepeatPenalty, p.FrequencyPenalty, p.PresencePenalty)
	case stDRY:
		dry(c, s.hist.toks, &s.dry, s.dryP)
	case stTopK:
		topK(c, p.TopK)
	case stTFS:
		tailFree(c, p.TFSZ, keep)
	case stTypical:
		typical(c, p.TypicalP, keep)
	case stTopP:
		topP(c, p.TopP, keep)
	case stMinP:
		minP(c, p.MinP, keep)
	case stXTC:
		xtc(c, p.XTCProbability, p.XTCThreshold, keep, rng)
	case stTemperature:
		temperature(c, p.Temperature)
	}
	tr.record(id.String(), c, false)
}

func (s *Sampler) pickGreedy(c *cands, tr *tracer) int32 {
	tr.snap(c)
	best := 0
	for i := range c.data {
		if better(c.data[i], c.data[best]) {
			best = i
		}
	}
	tok := c.data[best].id
	if tr != nil {
		c.softmax()
		tr.chosen("greedy", c)
	}
	return tok
}

func (s *Sampler) pickFSD(c *cands, tr *tracer) int32 {
	tr.snap(c)
	i := fsd(c, s.hist.toks, s.fsdP, &s.fsd)
	tok := c.data[i].id
	tr.record("fsd", c, true)
	return tok
}
