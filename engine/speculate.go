package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"flowchat/engine/model"
	"flowchat/engine/sample"
)

// Speculative decoding (Inferflow's section 8; Leviathan et al., Chen et
// al.): a drafter proposes up to K tokens, the target scores its next
// token and all of them in one forward pass (a segment of K+1 rows with
// logits for every row, batched with the other queries' rows), and the
// sampler keeps the longest acceptable prefix plus one token of its own:
// the correction after a rejection or the bonus token after a full
// acceptance. Both caches roll back to the kept length: the target's by
// its block table (State.Truncate), the draft model's likewise.
//
// Strict acceptance (sample.AcceptStrict) keeps the target's distribution
// exactly, and with greedy decoding the text is the plain text (the K+1
// rows go through the prompt path, which is batch-invariant with the
// decode path below 512 keys; beyond that the decode step's split
// attention orders its sums differently, so a near-tie can resolve the
// other way). Inferflow's flexible acceptance (top-k, top-p pools) accepts
// more and is no longer exact.
//
// K adapts per query, by Inferflow's formula 9 with the query's own
// measurements: the first decode steps run plain to time a plain step;
// every drafting step then updates the acceptance α (kept drafts over
// kept drafts plus the rejection, the geometric model's estimate), the
// drafting time per token and the cost of a verification row, and the
// next K is the one with the highest expected speed-up E(K)·t_plain /
// (K·t_draft + t_target(K)), E(K) = (1 − α^(K+1))/(1 − α). When no K
// gains 3%, drafting pauses. Probing is paid from a credit: every plain
// step earns 2% of its time, every drafting step spends what it lost
// against plain steps (its pass, its drafting and its draft model's
// catch-up, less the tokens it emitted at the plain rate), and a probe
// starts only when the credit covers its estimated cost (the catch-up
// the draft needs at its measured prefill rate, K drafts and K
// verification rows) and the pause has lasted at least 16 steps. So
// whatever the drafter, drafting that does
// not pay costs at most ~2% of plain decoding plus the first probe, and
// the first probe is kept small: at most 2 drafts from a draft model
// restarted on the last 4 tokens (firstWindow), instead of the prompt.
// Catching up is not counted as drafting time (t_draft) in the cost
// model, only in the probes' cost.
//
// A query starts from what the last finished query with the same drafter
// and settings measured (specPrior): its acceptance, drafting, catch-up
// and verification costs, and its verdict. Where that verdict was to
// pause, the new query starts paused too, and its first probe waits for
// the credit like any other, so a drafter that does not pay costs its
// unpaid first probe once per scheduler, not once per reply; where
// drafting paid, the query drafts at that K after its two timing steps.
// The plain step is always timed afresh (it grows with the context).

// SpecOptions turn on speculative decoding for a query.
type SpecOptions struct {
	Draft  Drafter // where drafts come from: NGram or a DraftModel
	K      int     // draft length (default 5): adaptive K ranges over 1…2K (at most 16), starting at min(K, 2); FixedK drafts K every step
	Accept sample.Acceptance
	// FixedK drafts K tokens every step, with no plain fallback (for
	// measuring formula 9's terms).
	FixedK bool
}

// Drafter is a source of drafts; it makes one drafter per query.
type Drafter interface {
	// Name says what drafts, for statistics ("ngram", "draft model X").
	Name() string
	newSeq(s *Scheduler, p sample.Params) (seqDrafter, error)
}

// seqDrafter drafts for one sequence.
type seqDrafter interface {
	// draft proposes up to k tokens to follow ctx (the sequence's tokens,
	// the last of them not yet evaluated by the target) into out, and the
	// distribution each was drawn from into dists; it returns how many.
	draft(ctx []int32, k int, out []int32, dists []sample.Dist) (int, error)
	release()
}

// catcher is a drafter that evaluates the tokens it missed before it
// drafts (a draft model; n-gram drafting has nothing to catch up).
type catcher interface {
	// behind is how many tokens the next draft would evaluate to catch up
	// with a sequence of n tokens.
	behind(n int) int
	// lastCatch is what the last draft caught up: tokens, and the time of
	// that pass (which also drew its first draft).
	lastCatch() (int, time.Duration)
	// setWindow bounds a restart's catch-up to the last w tokens.
	setWindow(w int)
}

// maxDraft bounds K: a verification segment has at most maxDraft+1 rows.
const maxDraft = 16

func (o *SpecOptions) check(p sample.Params) error {
	if o.Draft == nil {
		return errors.New("speculative decoding needs a drafter")
	}
	if o.K == 0 {
		o.K = 5
	}
	if o.K < 1 || o.K > maxDraft {
		return fmt.Errorf("draft length %d must be within 1…%d", o.K, maxDraft)
	}
	if err := o.Accept.Check(); err != nil {
		return err
	}
	return p.SpeculationError()
}

// specState is a query's speculation.
type specState struct {
	opt       SpecOptions
	d         seqDrafter
	toks      []int32 // this step's segment: the next token, then the drafts
	dists     []sample.Dist
	n         int           // drafts in this step's segment
	kept      int           // of them, kept so far in the walk
	walk      bool          // a walk with drafts is in progress and not yet booked
	draftTime time.Duration // drafting (a draft model's catch-up left out)
	draftAll  time.Duration // all of it
	catchN    int           // tokens the draft caught up (its first pass; ≤ 1: none)
	ctl       specCtl
	disabled  string // why drafting stopped for good (a drafter error)
}

func newSpecState(o SpecOptions, prior *specCtl) *specState {
	kmax := min(2*o.K, maxDraft)
	if o.FixedK {
		kmax = o.K
	}
	ctl := newSpecCtl(firstK(o), kmax, o.FixedK)
	if prior != nil && !o.FixedK {
		ctl = prior.resumed()
	}
	return &specState{opt: o, toks: make([]int32, kmax+1), dists: make([]sample.Dist, kmax), ctl: ctl}
}

// specKey names a drafter and the settings its measurements depend on:
// the key of a scheduler's priors.
func specKey(o SpecOptions) string {
	_ = o.check(sample.Params{}) // the defaults filled in, as AddQuery does
	return fmt.Sprintf("%s|%d|%v", o.Draft.Name(), o.K, o.Accept)
}

// specPrior is the controller a new query with o starts from: the last
// finished one's with the same drafter and settings, nil for none.
func (s *Scheduler) specPrior(o SpecOptions) *specCtl {
	if o.FixedK || o.Draft == nil {
		return nil
	}
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if c, ok := s.priors[specKey(o)]; ok {
		return &c
	}
	return nil
}

// keepPrior stores a finished query's controller for the next query with
// its drafter, once it has measured a drafting step.
func (s *Scheduler) keepPrior(sp *specState) {
	if sp.opt.FixedK || sp.opt.Draft == nil || sp.ctl.tVerify.n == 0 || sp.disabled != "" {
		return
	}
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if s.priors == nil {
		s.priors = map[string]specCtl{}
	}
	s.priors[specKey(sp.opt)] = sp.ctl
}

// firstK is the first probe's draft length: K itself when fixed, else at
// most 2, so that a drafter that turns out useless costs little; the cost
// model picks the length after that step.
func firstK(o SpecOptions) int {
	if o.FixedK {
		return o.K
	}
	return min(o.K, 2)
}

// speculate drafts for q's decode step within budget rows and returns the
// segment's tokens (q.next and the drafts), their room reserved; nil when
// there is no room even for q.next (q is then finished).
func (s *Scheduler) speculate(q *query, budget int) []int32 {
	sp := q.spec
	sp.n, sp.draftTime, sp.draftAll, sp.catchN = 0, 0, 0, 0
	sp.toks[0] = q.next
	catch := 0
	if c, ok := sp.d.(catcher); ok {
		catch = c.behind(len(q.tokens) + 1)
	} else if _, ok := sp.opt.Draft.(*DraftModel); ok && sp.d == nil {
		catch = min(len(q.tokens)+1, maxCatchUp) // a draft model not started yet is behind by everything
	}
	k, window := sp.ctl.want(catch)
	k = min(k, budget-1, q.Ctx-q.seq.Pos()-2)
	if q.MaxTokens > 0 {
		k = min(k, q.MaxTokens-q.st.GenTokens-1)
	}
	if k > 0 && sp.disabled == "" {
		if sp.d == nil {
			d, err := sp.opt.Draft.newSeq(s, q.Sampling)
			if err != nil {
				sp.disabled = err.Error()
				k = 0
			}
			sp.d = d
		}
	}
	if k > 0 && sp.d != nil {
		if c, ok := sp.d.(catcher); ok {
			c.setWindow(window)
		}
		t0 := time.Now()
		n, err := sp.d.draft(append(q.tokens, q.next), k, sp.toks[1:1+k], sp.dists[:k])
		sp.draftAll = time.Since(t0)
		sp.draftTime = sp.draftAll
		if c, ok := sp.d.(catcher); ok {
			var ct time.Duration
			if sp.catchN, ct = c.lastCatch(); sp.catchN > 1 {
				sp.draftTime -= ct // catching up is not drafting
			}
		}
		if err != nil {
			sp.disabled = err.Error()
			n = 0
		}
		if n > 0 && q.seq.Reserve(1+n) == nil {
			sp.n = n
		}
	}
	if sp.n == 0 && !s.room(q) {
		return nil
	}
	return sp.toks[:1+sp.n]
}

// verify walks q's verification rows (lg: one row of logits per segment
// token): each draft is kept or replaced by the acceptance rule, the
// first replacement ends the walk, a full acceptance earns the bonus
// token; the cache then drops the rejected drafts. It returns the tokens
// emitted.
func (s *Scheduler) verify(q *query, lg []float32) int64 {
	sp, V := q.spec, s.m.Net.NVocab
	n := sp.n
	sp.walk, sp.kept = n > 0, 0
	var gen int64
	for i := 0; i <= n && !q.done(); i++ {
		row := lg[i*V : (i+1)*V]
		if q.OnLogits != nil {
			q.OnLogits(row)
		}
		if q.OnExplain != nil {
			q.OnExplain(q.sm.Explain(row))
		}
		var tok int32
		ok := false
		if i < n {
			tok, ok = q.sm.Verify(row, sp.toks[1+i], &sp.dists[i], sp.opt.Accept)
		} else {
			tok = q.sm.Sample(row)
		}
		if ok {
			sp.kept++
		}
		if s.emit(q, tok, false) { // may end q: finish books the walk first
			gen++
		}
		if !ok {
			break
		}
	}
	acc := sp.kept
	if drop := n - acc; drop > 0 && q.seq != nil {
		q.seq.Truncate(q.seq.Pos() - drop)
		q.tokens = q.tokens[:len(q.tokens)-drop]
	}
	sp.ctl.update(n, acc, int(gen), s.stepTime, sp.draftTime, sp.draftAll, sp.catchN)
	if sp.ctl.tPlain.n > 0 {
		q.st.PlainTPS = 1 / sp.ctl.tPlain.v // a plain step emits one token
	}
	s.bookWalk(q)
	if !q.done() && q.seq.Pos() >= q.Ctx && !s.shift(q) {
		s.finish(q, "context", nil)
	}
	return gen
}

// bookWalk books the verification walk in progress (once): the query's
// and the scheduler's counters and OnSpec. finish calls it too, so a
// query that ends inside its walk reports the walk before its statistics
// go to its handle.
func (s *Scheduler) bookWalk(q *query) {
	sp := q.spec
	if sp == nil || !sp.walk {
		return
	}
	sp.walk = false
	n, acc := sp.n, sp.kept
	q.st.SpecSteps++
	q.st.Drafted += n
	q.st.DraftAccepted += acc
	q.st.DraftTime += sp.draftTime
	q.st.VerifyTime += s.stepTime
	s.statsMu.Lock()
	s.stats.Drafted += int64(n)
	s.stats.DraftAccepted += int64(acc)
	s.statsMu.Unlock()
	if q.OnSpec != nil {
		q.OnSpec(n, acc)
	}
}

// specCtl chooses a query's draft length from Inferflow's formula 9 with
// its own measurements, and pauses drafting while no length pays, paying
// probes from a credit (see the top of this file).
type specCtl struct {
	k, kmax int
	fixed   bool
	off     int     // plain steps left in a pause
	pause   int     // the last pause's length (0: drafting pays)
	credit  float64 // seconds of probing the plain steps have paid for

	kept, tried rate // per drafting step: drafts kept, and kept + the rejection
	tPlain      rate // seconds of a plain step
	tDraft      rate // seconds per drafted token (catch-up left out)
	tCatch      rate // seconds per token a draft model caught up
	tVerify     rate // seconds of a verification step
	nVerify     rate // drafts per verification step
}

func newSpecCtl(k, kmax int, fixed bool) specCtl {
	return specCtl{k: k, kmax: kmax, fixed: fixed, kept: rate{slow: true}, tried: rate{slow: true}}
}

// resumed is c for a new query: the drafter's measurements and c's
// verdict kept, the plain step to be timed again, no credit; a paused
// verdict starts with a pause of minPause steps and probes only when
// the credit pays for it.
func (c specCtl) resumed() specCtl {
	r := c
	r.tPlain = rate{}
	r.credit = 0
	r.off = 0
	if r.pause > 0 {
		r.pause, r.off = minPause, minPause
	}
	return r
}

// rate is an exponentially weighted mean: of the last ~4 values, or ~10
// with slow (the acceptance counts: one step's outcome is noisy).
type rate struct {
	v    float64
	n    int
	slow bool
}

func (r *rate) add(x float64) {
	w := 0.25
	if r.slow {
		w = 0.1
	}
	if r.n == 0 {
		r.v = x
	} else {
		r.v += w * (x - r.v)
	}
	r.n++
}

// want is the draft length for the next step (0: a plain step) and the
// catch-up window of a draft model; catch is how many tokens the drafter
// would evaluate to catch up first. A probe after a pause waits until the
// credit pays for it; with a draft model far behind, it restarts the
// draft on as many of the last tokens as the credit pays for (at least
// firstWindow) rather than wait for the whole window.
func (c *specCtl) want(catch int) (k, window int) {
	switch {
	case c.fixed:
		return c.k, maxCatchUp
	case c.tPlain.n < 2: // measure the plain step first
		return 0, 0
	case c.off > 0:
		c.off--
		return 0, 0
	case c.tVerify.n == 0: // the first probe
		return c.k, firstWindow
	case c.pause == 0: // drafting pays
		return c.k, maxCatchUp
	}
	perTok := c.tCatch.v
	if c.tCatch.n == 0 {
		perTok = c.tDraft.v
	}
	fixed := float64(c.k) * (c.tDraft.v + c.perRow())
	w := catch
	if catch > firstWindow && perTok > 0 {
		w = int(min(max((c.credit-fixed)/perTok, firstWindow), float64(catch)))
	}
	if float64(w)*perTok+fixed > c.credit {
		return 0, 0
	}
	return c.k, max(w, firstWindow)
}

// perRow is the measured cost of one more row in a verification pass.
func (c *specCtl) perRow() float64 {
	return max(0, c.tVerify.v-c.tPlain.v) / max(c.nVerify.v, 1)
}

// update books a step that drafted n tokens, of which acc were kept, and
// emitted tokens: its forward pass took step; drafting took draft
// (drafting proper, for the cost model) and all (with the catch-up of
// catchN tokens, for what the step cost).
func (c *specCtl) update(n, acc, emitted int, step, draft, all time.Duration, catchN int) {
	if step <= 0 || emitted == 0 {
		return
	}
	if n == 0 {
		c.tPlain.add(step.Seconds())
		if c.pause > 0 {
			c.credit += probeShare * step.Seconds()
		}
		return
	}
	rej := 0
	if acc < n {
		rej = 1
	}
	c.kept.add(float64(acc))
	c.tried.add(float64(acc + rej))
	drafts := n // the drafts draft timed: the catch-up pass drew the first
	if catchN > 1 {
		drafts--
		c.tCatch.add((all - draft).Seconds() / float64(catchN))
	}
	if drafts > 0 {
		c.tDraft.add(draft.Seconds() / float64(drafts))
	}
	c.tVerify.add(step.Seconds())
	c.nVerify.add(float64(n))
	if c.fixed || c.tPlain.n == 0 {
		return
	}
	c.credit -= step.Seconds() + all.Seconds() - float64(emitted)*c.tPlain.v
	if k := c.best(); k > 0 {
		c.k, c.pause = k, 0
		// Drafting pays: what it gains is credit for later probes, up to
		// a pause's worth.
		c.credit = min(c.credit, probeShare*minPause*c.tPlain.v)
		return
	}
	c.pause = minPause
	c.k, c.off = 1, c.pause
	c.credit = min(c.credit, 0) // a failed probe is paid for by the pause that follows it
}

// Probing costs at most probeShare of the plain steps' time, and a pause
// lasts at least minPause plain steps.
const (
	probeShare = 0.02
	minPause   = 16
)

// firstWindow is the catch-up of a query's first probe with a draft
// model: the last few tokens, not the prompt, so that a draft that does
// not pay costs little before its rate is known.
const firstWindow = 4

// best is the draft length with the highest expected speed-up over plain
// decoding, 0 when none is above 1: formula 9, N/(E(K)) · (K·t_draft +
// t_target(K)) against N·t_plain, where E(K) = (1 − α^(K+1))/(1 − α) is
// the expected tokens of a step when each draft is kept with probability
// α, and t_target(K) grows from t_plain by the measured cost of a draft row.
func (c *specCtl) best() int {
	alpha := 0.0
	if c.tried.v > 0 {
		alpha = min(c.kept.v/c.tried.v, 0.999)
	}
	perRow := c.perRow()
	best, gain := 0, 1.0
	for k := 1; k <= c.kmax; k++ {
		e := (1 - math.Pow(alpha, float64(k+1))) / (1 - alpha)
		cost := float64(k)*c.tDraft.v + c.tPlain.v + float64(k)*perRow
		if g := e * c.tPlain.v / cost; g > gain*1.03 {
			best, gain = k, g
		}
	}
	return best
}

// NGram drafts by prompt lookup: the longest suffix of the sequence (Max
// tokens down to Min) that occurred before proposes the tokens that
// followed its latest occurrence. No model; strong on edits, code and
// quotes, where the reply repeats its context.
type NGram struct {
	Max, Min int // suffix lengths tried, longest first (defaults 4 and 2)
}

// Name implements Drafter.
func (g NGram) Name() string { return "ngram" }

func (g NGram) newSeq(*Scheduler, sample.Params) (seqDrafter, error) {
	if g.Max <= 0 {
		g.Max = 4
	}
	if g.Min <= 0 {
		g.Min = 2
	}
	g.Min = min(g.Min, g.Max)
	return &g, nil
}

func (g *NGram) draft(ctx []int32, k int, out []int32, dists []sample.Dist) (int, error) {
	for n := min(g.Max, len(ctx)-1); n >= g.Min; n-- {
		suf := ctx[len(ctx)-n:]
		for i := len(ctx) - n - 1; i >= 0; i-- {
			if ctx[i] != suf[0] || !slices.Equal(ctx[i:i+n], suf) {
				continue
			}
			// Copy what followed; past the end of ctx the copy reads its
			// own output, so a loop (a match that overlaps the suffix)
			// drafts k tokens, not just the rest of one period.
			for j := range k {
				if src := i + n + j; src < len(ctx) {
					out[j] = ctx[src]
				} else {
					out[j] = out[src-len(ctx)]
				}
				dists[j].Point(out[j])
			}
			return k, nil
		}
	}
	return 0, nil
}

func (g *NGram) release() {}

// DraftModel drafts with a smaller model of the same vocabulary (or a
// lower-bit copy of the target: self-speculation).
type DraftModel struct {
	M    *Model
	name string
}

// NewDraftModel checks that draft can draft for target (the same
// vocabulary, token by token) and makes it run on target's workers; the
// target's Close closes the draft too.
func NewDraftModel(target, draft *Model, label string) (*DraftModel, error) {
	if draft.Net.NVocab != target.Net.NVocab {
		return nil, fmt.Errorf("draft model %s has %d tokens in its output, the target %d: a draft model needs the target's vocabulary", label, draft.Net.NVocab, target.Net.NVocab)
	}
	if a, b := draft.Tok.VocabSize(), target.Tok.VocabSize(); a != b {
		return nil, fmt.Errorf("draft model %s has a vocabulary of %d tokens, the target %d", label, a, b)
	}
	for i := range int32(target.Tok.VocabSize()) {
		if a, b := draft.Tok.Token(i), target.Tok.Token(i); a != b {
			return nil, fmt.Errorf("draft model %s's token %d is %q, the target's is %q: a draft model needs the target's vocabulary", label, i, a, b)
		}
	}
	if draft.Net.Spec.Network.Type != "transformer.decoder_only" {
		return nil, fmt.Errorf("draft model %s is not a decoder-only network", label)
	}
	draft.Net.ShareWorkers(target.Net)
	target.owned = append(target.owned, draft)
	return &DraftModel{M: draft, name: "draft model " + label}, nil
}

// NewEarlyExitDraft drafts with the target's own first n layers and its
// output head (early exit, as LayerSkip and Draft & Verify do): no second
// copy of the weights; the draft's KV cache holds n layers.
func NewEarlyExitDraft(target *Model, n int) (*DraftModel, error) {
	net, err := target.Net.EarlyExit(n)
	if err != nil {
		return nil, err
	}
	m := &Model{Path: target.Path, Info: target.Info, Net: net, Tok: target.Tok, Template: target.Template, kvType: target.kvType}
	return &DraftModel{M: m, name: fmt.Sprintf("early exit after %d of %d layers", n, target.Net.NLayer)}, nil
}

// Name implements Drafter.
func (d *DraftModel) Name() string { return d.name }

// draftPool is a draft model's KV cache in one scheduler, shared by the
// queries drafting with it (with its own prefix cache: a chat's next turn
// drafts from the cached conversation).
type draftPool struct {
	m     *Model
	pool  *model.KVPool
	batch *model.Batch
}

func (s *Scheduler) draftPool(m *Model) (*draftPool, error) {
	if dp := s.drafts[m]; dp != nil {
		return dp, nil
	}
	// As many blocks as the target's pool, at most enough for every seat
	// to hold a 4096-token context: a draft that runs out restarts on a
	// window (modelDrafter.draft), so long contexts need not double the
	// KV memory.
	b := s.opt.BlockTokens
	blocks := min(s.pool.Blocks(), s.opt.MaxSeqs*((min(s.opt.Ctx, 4096)+b-1)/b+1))
	pool, err := m.Net.NewKVPool(model.PoolOptions{Blocks: blocks, BlockTokens: s.opt.BlockTokens, Ctx: s.opt.Ctx, KVType: m.kvType})
	if err != nil {
		return nil, fmt.Errorf("draft model's KV cache: %w", err)
	}
	dp := &draftPool{m: m, pool: pool, batch: pool.NewBatch(s.opt.StepTokens)}
	if s.drafts == nil {
		s.drafts = map[*Model]*draftPool{}
	}
	s.drafts[m] = dp
	return dp, nil
}

func (d *DraftModel) newSeq(s *Scheduler, p sample.Params) (seqDrafter, error) {
	dp, err := s.draftPool(d.M)
	if err != nil {
		return nil, err
	}
	sm, err := sample.New(draftParams(p), d.M.Net.NVocab)
	if err != nil {
		return nil, err
	}
	return &modelDrafter{dp: dp, seq: dp.pool.NewSeq(), sm: sm}, nil
}

// draftParams are the draft's sampler settings: the target's truncation
// and temperature, so that q resembles p, without the stages that need
// the sequence's history (which the draft would have to roll back);
// greedy for greedy and FSD targets; no grammar. Any q keeps strict
// acceptance exact.
func draftParams(p sample.Params) sample.Params {
	d := p
	if p.Decoding == sample.DecodingFSD {
		d.Decoding = sample.DecodingGreedy
	}
	d.RepeatPenalty, d.FrequencyPenalty, d.PresencePenalty = 1, 0, 0
	d.DRYMultiplier, d.XTCProbability = 0, 0
	d.Grammar = "" // drafts the grammar refuses are rejected by the target
	if p.Seed != sample.SeedRandom {
		d.Seed = p.Seed ^ 0xd7af7
	}
	return d
}

// maxCatchUp bounds what a draft model evaluates to catch up with its
// sequence: a draft that falls further behind (a long prompt, tokens
// generated while drafting was paused) restarts on the last maxCatchUp
// tokens. Its drafts then see less context, which lowers acceptance but
// never exactness (strict acceptance holds for any draft distribution),
// and a paused draft's return costs at most maxCatchUp draft rows.
const maxCatchUp = 32

// modelDrafter drafts one sequence with a draft model.
type modelDrafter struct {
	dp     *draftPool
	seq    *model.State
	toks   []int32 // what seq's cache holds
	sm     *sample.Sampler
	seg    [1]model.Segment
	one    [1]int32
	cuN    int           // tokens the last draft's first pass evaluated
	cu     time.Duration // and its time
	window int           // a restart's catch-up (0: maxCatchUp)
	off    int           // the draft's cache starts at ctx[off] (a restarted window)
}

func (d *modelDrafter) lastCatch() (int, time.Duration) { return d.cuN, d.cu }
func (d *modelDrafter) setWindow(w int)                 { d.window = w }

func (d *modelDrafter) win() int {
	if d.window > 0 {
		return d.window
	}
	return maxCatchUp
}

func (d *modelDrafter) behind(n int) int {
	if d.off >= n {
		return min(n, maxCatchUp)
	}
	return max(1, min(n-d.off-len(d.toks), maxCatchUp))
}

func (d *modelDrafter) draft(ctx []int32, k int, out []int32, dists []sample.Dist) (int, error) {
	if len(d.toks) == 0 && d.seq.Pos() == 0 {
		c := d.seq.AdoptPrefix(ctx)
		d.toks = append(d.toks[:0], ctx[:c]...)
	}
	if d.off >= len(ctx) { // the target's context shifted under the window
		d.off = 0
	}
	base := ctx[d.off:] // the draft's cache holds a prefix of base
	c := min(commonPrefix(d.toks, base), len(base)-1)
	if c < len(d.toks) {
		d.seq.Truncate(c)
		d.toks = d.toks[:c]
	}
	if w := d.win(); len(base)-c > w {
		// Far behind (a long prompt, a pause): restart the draft on the
		// last w tokens rather than evaluate everything it missed.
		d.seq.Release()
		d.seq, d.toks, c = d.dp.pool.NewSeq(), d.toks[:0], 0
		d.off = len(ctx) - w
		base = ctx[d.off:]
	}
	ctx = base
	feed := ctx[c:]
	err := d.seq.Reserve(len(feed) + k - 1)
	if err != nil && len(ctx) > maxCatchUp && (errors.Is(err, model.ErrNoKVBlocks) || errors.Is(err, model.ErrContextFull)) {
		// The draft's cache is full: restart on a window of the last tokens.
		d.seq.Release()
		d.seq, d.toks = d.dp.pool.NewSeq(), d.toks[:0]
		d.off += len(ctx) - maxCatchUp
		ctx = ctx[len(ctx)-maxCatchUp:]
		feed = ctx
		err = d.seq.Reserve(len(feed) + k - 1)
	}
	if err != nil {
		if errors.Is(err, model.ErrNoKVBlocks) || errors.Is(err, model.ErrContextFull) {
			return 0, nil // no room to draft: a plain step
		}
		return 0, err
	}
	n := 0
	d.cuN = len(feed)
	for n < k {
		t0 := time.Now()
		lg, err := d.forward(feed)
		if n == 0 {
			d.cu = time.Since(t0)
		}
		if err != nil {
			return n, err
		}
		tok := d.sm.Draft(lg, &dists[n])
		out[n] = tok
		n++
		if d.dp.m.Tok.IsEOG(tok) {
			break
		}
		d.one[0] = tok
		feed = d.one[:]
	}
	return n, nil
}

// forward evaluates feed on the draft's sequence in batches and returns
// the last row's logits.
func (d *modelDrafter) forward(feed []int32) ([]float32, error) {
	var lg []float32
	for len(feed) > 0 {
		m := min(len(feed), d.dp.batch.MaxRows())
		want := model.LogitsNone
		if m == len(feed) {
			want = model.LogitsLast
		}
		d.seg[0] = model.Segment{Seq: d.seq, Tokens: feed[:m], Logits: want, Prompt: len(feed) > 1}
		var err error
		if lg, err = d.dp.batch.Forward(d.seg[:]); err != nil {
			return nil, err
		}
		d.toks = append(d.toks, feed[:m]...)
		feed = feed[m:]
	}
	d.seq.Register(d.toks)
	return lg, nil
}

func (d *modelDrafter) release() { d.seq.Release() }
