// Package presets holds the sampling settings the GUI edits and stores: a
// Params struct that mirrors engine/sample.Params field for field (same
// JSON names, so the app converts between them with encoding/json and the
// ui package never imports the engine), and the built-in presets.
package presets

// SeedRandom is sample.SeedRandom: pick a new seed for every reply.
const SeedRandom = ^uint64(0)

// Decoding strategies, as engine/sample names them.
const (
	DecodingGreedy    = "greedy"
	DecodingSample    = "sample"
	DecodingFSD       = "fsd"
	DecodingRandomFSD = "random-fsd"
)

// Params are one sequence's decoding settings plus the reply length. Every
// field but MaxTokens has the JSON name of its engine/sample.Params twin;
// a test in this package checks that the two stay in step.
type Params struct {
	Temperature float32 `json:"temperature"`
	TopK        int     `json:"top_k"`
	TopP        float32 `json:"top_p"`
	MinP        float32 `json:"min_p"`
	TypicalP    float32 `json:"typical_p"`
	TFSZ        float32 `json:"tfs_z"`
	MinKeep     int     `json:"min_keep"`

	Mirostat    int     `json:"mirostat"`
	MirostatTau float32 `json:"mirostat_tau"`
	MirostatEta float32 `json:"mirostat_eta"`

	RepeatPenalty    float32 `json:"repeat_penalty"`
	RepeatLastN      int     `json:"repeat_last_n"`
	PresencePenalty  float32 `json:"presence_penalty"`
	FrequencyPenalty float32 `json:"frequency_penalty"`

	Seed      uint64            `json:"seed"`
	LogitBias map[int32]float32 `json:"logit_bias"`

	DRYMultiplier       float32  `json:"dry_multiplier"`
	DRYBase             float32  `json:"dry_base"`
	DRYAllowedLength    int      `json:"dry_allowed_length"`
	DRYPenaltyLastN     int      `json:"dry_penalty_last_n"`
	DRYSequenceBreakers []string `json:"dry_sequence_breakers"`

	XTCProbability float32 `json:"xtc_probability"`
	XTCThreshold   float32 `json:"xtc_threshold"`

	Decoding       string  `json:"decoding"`
	FSDAlpha       float32 `json:"fsd_alpha"`
	FSDK           int     `json:"fsd_k"`
	FSDN           int     `json:"fsd_n"`
	FSDBeta        float32 `json:"fsd_beta"`
	FSDRandomSteps int     `json:"fsd_random_steps"`

	Order []string `json:"samplers"`

	// Grammar is a GBNF grammar the output must follow ("": none).
	Grammar string `json:"grammar,omitempty"`

	// MaxTokens bounds a reply, in tokens; 0 = until the model ends it or
	// the context is full. Not part of sample.Params.
	MaxTokens int `json:"max_tokens"`
}

// DefaultMaxTokens is the reply length the GUI starts with, on a context
// of at least 4 × as many tokens (see MaxTokensFor).
const DefaultMaxTokens = 1024

// MaxTokensFor is the default reply length on a context of ctx tokens:
// DefaultMaxTokens, but at most a quarter of the context, so that one
// reply never fills it and a conversation has room to go on.
func MaxTokensFor(ctx int) int { return max(1, min(DefaultMaxTokens, ctx/4)) }

// FitContext returns p for a context of ctx tokens: the default reply
// length, or one the context cannot hold at all, becomes MaxTokensFor(ctx);
// any other choice (0 = no limit included) is kept.
func (p Params) FitContext(ctx int) Params {
	if ctx > 0 && (p.MaxTokens == DefaultMaxTokens || p.MaxTokens >= ctx) {
		p.MaxTokens = min(p.MaxTokens, MaxTokensFor(ctx))
	}
	return p
}

// Default returns engine/sample.DefaultParams (llama.cpp's defaults) with
// the GUI's reply length.
func Default() Params {
	return Params{
		Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, TypicalP: 1, TFSZ: 1,
		MirostatTau: 5, MirostatEta: 0.1,
		RepeatPenalty: 1, RepeatLastN: 64,
		Seed:    SeedRandom,
		DRYBase: 1.75, DRYAllowedLength: 2, DRYPenaltyLastN: -1,
		DRYSequenceBreakers: []string{"\n", ":", "\"", "*"},
		XTCThreshold:        0.1,
		Decoding:            DecodingSample, FSDAlpha: 0.5, FSDK: 6, FSDN: 3, FSDBeta: 0.9, FSDRandomSteps: 10,
		MaxTokens: DefaultMaxTokens,
	}
}

// Clone returns a deep copy: maps and slices are not shared.
func (p Params) Clone() Params {
	if p.LogitBias != nil {
		m := make(map[int32]float32, len(p.LogitBias))
		for k, v := range p.LogitBias {
			m[k] = v
		}
		p.LogitBias = m
	}
	p.DRYSequenceBreakers = append([]string(nil), p.DRYSequenceBreakers...)
	if p.Order != nil {
		p.Order = append([]string{}, p.Order...)
	}
	return p
}

// Preset is a named set of Params.
type Preset struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Params      Params `json:"params"`
	Builtin     bool   `json:"-"`
}

// Builtin returns the presets that ship with the app, freshly allocated.
// The first is the default.
func Builtin() []Preset {
	mk := func(name, desc string, edit func(*Params)) Preset {
		p := Default()
		edit(&p)
		return Preset{Name: name, Description: desc, Params: p, Builtin: true}
	}
	return []Preset{
		mk("Balanced", "llama.cpp's defaults: top-k 40, top-p 0.95, min-p 0.05, temperature 0.8.", func(*Params) {}),
		mk("Precise", "Low temperature for facts and code; mild repetition penalty.", func(p *Params) {
			p.Temperature, p.TopP, p.RepeatPenalty = 0.2, 0.9, 1.05
		}),
		mk("Creative", "Hotter, wide candidate set; XTC skips the most obvious choice now and then.", func(p *Params) {
			p.Temperature, p.TopK, p.TopP, p.MinP = 1.1, 0, 1, 0.05
			p.XTCProbability, p.XTCThreshold = 0.5, 0.1
		}),
		mk("Deterministic", "Always the most probable token: the same prompt gives the same reply.", func(p *Params) {
			p.Decoding = DecodingGreedy
		}),
		mk("Mirostat 2", "Keeps surprise near tau bits per token instead of truncating by rank or mass.", func(p *Params) {
			p.Mirostat, p.TopK = 2, 0
		}),
		mk("No repetition (DRY)", "DRY penalises extending text the model already wrote; for long stories and roleplay.", func(p *Params) {
			p.Temperature, p.DRYMultiplier = 1.0, 0.8
		}),
		mk("FSD", "Frustratingly Simple Decoding: deterministic, penalises n-grams the reply already used.", func(p *Params) {
			p.Decoding = DecodingFSD
		}),
		mk("Random FSD", "FSD mixed with sampling for the first steps: varied openings, coherent rest.", func(p *Params) {
			p.Decoding = DecodingRandomFSD
		}),
	}
}

// Find returns the preset named name among ps.
func Find(ps []Preset, name string) (Preset, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
