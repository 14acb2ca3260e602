package sample

import (
	"errors"
	"fmt"
	"math"

	"flowchat/engine/grammar"
)

// ErrInvalidParams is wrapped by every error Validate and New return for a
// setting outside its range.
var ErrInvalidParams = errors.New("sample: invalid parameters")

// SeedRandom asks New to draw a seed from the operating system's entropy
// (llama.cpp's LLAMA_DEFAULT_SEED plays the same role). Sampler.Seed reports
// the seed actually used, so a run can still be replayed.
const SeedRandom = ^uint64(0)

// Decoding strategies: how the final token is chosen.
const (
	DecodingGreedy    = "greedy"     // argmax after logit bias, penalties and DRY
	DecodingSample    = "sample"     // the stage chain (Order), then a draw (or mirostat)
	DecodingFSD       = "fsd"        // Frustratingly Simple Decoding, deterministic
	DecodingRandomFSD = "random-fsd" // FSD mixed with sampling for the first FSDRandomSteps steps
)

// Stage names accepted in Params.Order (llama.cpp's names; dashes also accepted).
const (
	StagePenalties   = "penalties"
	StageDRY         = "dry"
	StageTopK        = "top_k"
	StageTFS         = "tfs_z"
	StageTypical     = "typical_p"
	StageTopP        = "top_p"
	StageMinP        = "min_p"
	StageXTC         = "xtc"
	StageTemperature = "temperature"
)

// Params are the decoding settings of one sequence. JSON names follow the
// OpenAI API where it has the setting and llama.cpp's server otherwise.
// A zero or neutral value disables a stage (top_k 0, top_p 1, min_p 0,
// typical_p 1, tfs_z 1, repeat_penalty 1, dry_multiplier 0, xtc_probability 0).
//
// The zero Params is not valid (top_p 0): start from DefaultParams and
// overwrite, e.g. json.Unmarshal a request into DefaultParams().
type Params struct {
	Temperature float32 `json:"temperature"` // 0 = keep only the most probable token
	TopK        int     `json:"top_k"`       // 0 = off
	TopP        float32 `json:"top_p"`       // (0, 1]; 1 = off
	MinP        float32 `json:"min_p"`       // [0, 1]; relative to the most probable token
	TypicalP    float32 `json:"typical_p"`   // (0, 1]; 1 = off
	TFSZ        float32 `json:"tfs_z"`       // (0, 1]; 1 = off
	MinKeep     int     `json:"min_keep"`    // truncating stages keep at least this many

	Mirostat    int     `json:"mirostat"`     // 0 off, 1 or 2 (replaces the truncating stages)
	MirostatTau float32 `json:"mirostat_tau"` // target surprise, bits
	MirostatEta float32 `json:"mirostat_eta"` // learning rate

	RepeatPenalty    float32 `json:"repeat_penalty"`    // > 0; 1 = off
	RepeatLastN      int     `json:"repeat_last_n"`     // window in tokens; -1 = whole sequence, 0 = off
	PresencePenalty  float32 `json:"presence_penalty"`  // [-2, 2]
	FrequencyPenalty float32 `json:"frequency_penalty"` // [-2, 2]

	Seed      uint64            `json:"seed"`       // SeedRandom = pick one
	LogitBias map[int32]float32 `json:"logit_bias"` // added to the logits; -Inf bans a token

	DRYMultiplier       float32  `json:"dry_multiplier"`        // 0 = off
	DRYBase             float32  `json:"dry_base"`              // >= 1
	DRYAllowedLength    int      `json:"dry_allowed_length"`    // repeats up to this length are free
	DRYPenaltyLastN     int      `json:"dry_penalty_last_n"`    // -1 = whole sequence
	DRYSequenceBreakers []string `json:"dry_sequence_breakers"` // texts that end a repeat (need a Vocab)

	XTCProbability float32 `json:"xtc_probability"` // chance per token that XTC acts; 0 = off
	XTCThreshold   float32 `json:"xtc_threshold"`   // tokens at least this probable are "top choices"

	Decoding       string  `json:"decoding"`         // greedy | sample | fsd | random-fsd
	FSDAlpha       float32 `json:"fsd_alpha"`        // weight of the anti-LM, [0, 1]
	FSDK           int     `json:"fsd_k"`            // candidates scored per step
	FSDN           int     `json:"fsd_n"`            // n-gram order of the anti-LM
	FSDBeta        float32 `json:"fsd_beta"`         // back-off discount between n-gram orders, (0, 1]
	FSDRandomSteps int     `json:"fsd_random_steps"` // random-fsd: steps where a coin picks sampling or FSD

	Order []string `json:"samplers"` // stage order; nil = DefaultOrder

	// Grammar is a GBNF grammar (llama-server's "grammar") that output
	// must follow; "" = none. It needs a Vocab with end-of-generation
	// tokens (EOGVocab).
	Grammar string `json:"grammar,omitempty"`
}

// DefaultOrder is llama.cpp's default chain, with tail-free sampling at its
// historical place after top-k (a no-op at tfs_z = 1).
var DefaultOrder = []string{StagePenalties, StageDRY, StageTopK, StageTFS, StageTypical, StageTopP, StageMinP, StageXTC, StageTemperature}

// DefaultParams are llama.cpp's defaults (common_params_sampling, b4748) and
// Inferflow's FSD defaults (k 6, alpha 0.5, n 3, beta 0.9, 10 random steps).
func DefaultParams() Params {
	return Params{
		Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, TypicalP: 1, TFSZ: 1, MinKeep: 0,
		Mirostat: 0, MirostatTau: 5, MirostatEta: 0.1,
		RepeatPenalty: 1, RepeatLastN: 64,
		Seed:          SeedRandom,
		DRYMultiplier: 0, DRYBase: 1.75, DRYAllowedLength: 2, DRYPenaltyLastN: -1,
		DRYSequenceBreakers: []string{"\n", ":", "\"", "*"},
		XTCProbability:      0, XTCThreshold: 0.1,
		Decoding: DecodingSample, FSDAlpha: 0.5, FSDK: 6, FSDN: 3, FSDBeta: 0.9, FSDRandomSteps: 10,
	}
}

// Validate reports every setting outside its range, joined, each wrapping
// ErrInvalidParams.
func (p Params) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidParams}, args...)...))
	}
	p.validateTruncation(bad)
	p.validatePenalties(bad)
	p.validateExtras(bad)
	p.validateDecoding(bad)
	if _, err := parseOrder(p.Order); err != nil {
		errs = append(errs, err)
	}
	if p.Grammar != "" {
		if _, err := grammar.Parse(p.Grammar); err != nil {
			bad("%v", err)
		}
	}
	return errors.Join(errs...)
}

type complaint func(format string, args ...any)

func finite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// in reports whether lo <= x <= hi with NaN outside every range.
func in(x, lo, hi float32) bool { return x >= lo && x <= hi }

func (p Params) validateTruncation(bad complaint) {
	if !finite(p.Temperature) || p.Temperature < 0 {
		bad("temperature = %g must be >= 0 (0 = greedy)", p.Temperature)
	}
	if p.TopK < 0 {
		bad("top_k = %d must be >= 0 (0 = off)", p.TopK)
	}
	if !(p.TopP > 0 && p.TopP <= 1) {
		bad("top_p = %g outside (0, 1]", p.TopP)
	}
	if !in(p.MinP, 0, 1) {
		bad("min_p = %g outside [0, 1]", p.MinP)
	}
	if !(p.TypicalP > 0 && p.TypicalP <= 1) {
		bad("typical_p = %g outside (0, 1]", p.TypicalP)
	}
	if !(p.TFSZ > 0 && p.TFSZ <= 1) {
		bad("tfs_z = %g outside (0, 1]", p.TFSZ)
	}
	if p.MinKeep < 0 {
		bad("min_keep = %d must be >= 0", p.MinKeep)
	}
	if p.Mirostat < 0 || p.Mirostat > 2 {
		bad("mirostat = %d must be 0, 1 or 2", p.Mirostat)
	}
	if p.Mirostat != 0 && !(finite(p.MirostatTau) && p.MirostatTau > 0) {
		bad("mirostat_tau = %g must be > 0", p.MirostatTau)
	}
	if p.Mirostat != 0 && !(finite(p.MirostatEta) && p.MirostatEta > 0) {
		bad("mirostat_eta = %g must be > 0", p.MirostatEta)
	}
}

func (p Params) validatePenalties(bad complaint) {
	if !finite(p.RepeatPenalty) || p.RepeatPenalty <= 0 {
		bad("repeat_penalty = %g must be > 0 (1 = off)", p.RepeatPenalty)
	}
	if p.RepeatLastN < -1 {
		bad("repeat_last_n = %d must be >= -1 (-1 = whole sequence)", p.RepeatLastN)
	}
	if !in(p.PresencePenalty, -2, 2) {
		bad("presence_penalty = %g outside [-2, 2]", p.PresencePenalty)
	}
	if !in(p.FrequencyPenalty, -2, 2) {
		bad("frequency_penalty = %g outside [-2, 2]", p.FrequencyPenalty)
	}
	for tok, b := range p.LogitBias {
		if tok < 0 {
			bad("logit_bias token %d is negative", tok)
		}
		if math.IsNaN(float64(b)) || math.IsInf(float64(b), 1) {
			bad("logit_bias[%d] = %g must be finite or -Inf", tok, b)
		}
	}
}

func (p Params) validateExtras(bad complaint) {
	if !finite(p.DRYMultiplier) || p.DRYMultiplier < 0 {
		bad("dry_multiplier = %g must be >= 0 (0 = off)", p.DRYMultiplier)
	}
	if p.DRYMultiplier > 0 && !(finite(p.DRYBase) && p.DRYBase >= 1) {
		bad("dry_base = %g must be >= 1", p.DRYBase)
	}
	if p.DRYAllowedLength < 0 {
		bad("dry_allowed_length = %d must be >= 0", p.DRYAllowedLength)
	}
	if p.DRYPenaltyLastN < -1 {
		bad("dry_penalty_last_n = %d must be >= -1 (-1 = whole sequence)", p.DRYPenaltyLastN)
	}
	for i, b := range p.DRYSequenceBreakers {
		if b == "" {
			bad("dry_sequence_breakers[%d] is empty", i)
		}
	}
	if !in(p.XTCProbability, 0, 1) {
		bad("xtc_probability = %g outside [0, 1]", p.XTCProbability)
	}
	if !in(p.XTCThreshold, 0, 1) {
		bad("xtc_threshold = %g outside [0, 1] (above 0.5 XTC never acts)", p.XTCThreshold)
	}
}

// maxFSDN bounds the anti-LM's order: its scratch is n*k counters and its
// scan n passes over the sequence per step.
const maxFSDN = 32

func (p Params) validateDecoding(bad complaint) {
	switch p.Decoding {
	case "", DecodingGreedy, DecodingSample, DecodingFSD, DecodingRandomFSD:
	default:
		bad("decoding = %q must be greedy, sample, fsd or random-fsd", p.Decoding)
	}
	if p.Decoding != DecodingFSD && p.Decoding != DecodingRandomFSD {
		return
	}
	if !in(p.FSDAlpha, 0, 1) {
		bad("fsd_alpha = %g outside [0, 1]", p.FSDAlpha)
	}
	if p.FSDK < 1 {
		bad("fsd_k = %d must be >= 1", p.FSDK)
	}
	if p.FSDN < 1 || p.FSDN > maxFSDN {
		bad("fsd_n = %d outside [1, %d]", p.FSDN, maxFSDN)
	}
	if !(p.FSDBeta > 0 && p.FSDBeta <= 1) {
		bad("fsd_beta = %g outside (0, 1]", p.FSDBeta)
	}
	if p.FSDRandomSteps < 0 {
		bad("fsd_random_steps = %d must be >= 0", p.FSDRandomSteps)
	}
}
