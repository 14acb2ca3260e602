package ui

import (
	"strconv"

	"flowchat/app/presets"
)

// paramSpec describes one numeric sampling setting for the panel: its
// range, step, and a sentence on what it does.
type paramSpec struct {
	key, label, help string
	min, max, step   float64
	integer          bool
	get              func(*presets.Params) float64
	set              func(*presets.Params, float64)
}

// paramGroup is a titled block of settings, with a note on when it is
// used at all.
type paramGroup struct {
	title, help string
	specs       []paramSpec
	// unused returns why the group has no effect under p, or "".
	unused func(p *presets.Params) string
	// skipped reports whether p's decoding does not run the stage at all:
	// its settings are then hidden, leaving the reason.
	skipped func(p *presets.Params) bool
}

func notSampled(p *presets.Params) bool { return notSampling(p) != "" }

func notFSD(p *presets.Params) bool {
	return p.Decoding != presets.DecodingFSD && p.Decoding != presets.DecodingRandomFSD
}

func f32Spec(key, label, help string, min, max, step float64, field func(*presets.Params) *float32) paramSpec {
	return paramSpec{key: key, label: label, help: help, min: min, max: max, step: step,
		get: func(p *presets.Params) float64 { return widen(*field(p)) },
		set: func(p *presets.Params, v float64) { *field(p) = float32(v) }}
}

// widen converts through the shortest decimal, so 0.35 stored as float32
// shows as 0.35 again rather than 0.3499999940395355.
func widen(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}

func intSpec(key, label, help string, min, max float64, field func(*presets.Params) *int) paramSpec {
	return paramSpec{key: key, label: label, help: help, min: min, max: max, step: 1, integer: true,
		get: func(p *presets.Params) float64 { return float64(*field(p)) },
		set: func(p *presets.Params, v float64) { *field(p) = int(v) }}
}

func notSampling(p *presets.Params) string {
	switch p.Decoding {
	case presets.DecodingGreedy:
		return "Not used: greedy decoding always takes the most probable token."
	case presets.DecodingFSD:
		return "Not used: FSD decoding chooses deterministically."
	}
	return ""
}

func truncationUnused(p *presets.Params) string {
	if s := notSampling(p); s != "" {
		return s
	}
	if p.Mirostat != 0 {
		return "Mostly unused: mirostat replaces top-k, tail-free, typical, top-p, min-p and XTC (temperature still applies)."
	}
	return ""
}

// replyGroup holds max tokens, shown above the stages' groups.
const replyGroup = "Reply"

// paramGroups is the panel's content: the reply's length, then the
// stages in the order of the chain.
var paramGroups = []paramGroup{
	{title: replyGroup,
		help: "Length of a reply. The reply also stops when the model ends its turn or the context window is full.",
		specs: []paramSpec{
			intSpec("max_tokens", "Max tokens", "Longest reply in tokens. 0 = no limit.", 0, 8192, func(p *presets.Params) *int { return &p.MaxTokens }),
		}},
	{title: "Temperature & truncation", unused: truncationUnused, skipped: notSampled,
		help: "Stages run in order; each removes unlikely tokens or reshapes the rest. 0 (or 1 for the p settings) turns a stage off.",
		specs: []paramSpec{
			f32Spec("temperature", "Temperature", "Below 1 sharpens the distribution (safer, more repetitive); above 1 flattens it (more varied). 0 always takes the top token.", 0, 2, 0.05, func(p *presets.Params) *float32 { return &p.Temperature }),
			intSpec("top_k", "Top-k", "Keep only the k most probable tokens. 0 = off.", 0, 200, func(p *presets.Params) *int { return &p.TopK }),
			f32Spec("top_p", "Top-p (nucleus)", "Keep the smallest set of tokens whose probabilities add up to p. 1 = off.", 0.01, 1, 0.01, func(p *presets.Params) *float32 { return &p.TopP }),
			f32Spec("min_p", "Min-p", "Drop tokens less probable than min-p × the top token's probability. 0 = off.", 0, 1, 0.01, func(p *presets.Params) *float32 { return &p.MinP }),
			f32Spec("typical_p", "Typical-p", "Keep tokens whose surprise is close to the expected surprise. 1 = off.", 0.01, 1, 0.01, func(p *presets.Params) *float32 { return &p.TypicalP }),
			f32Spec("tfs_z", "Tail-free (z)", "Cut the tail where the sorted probabilities stop curving. 1 = off.", 0.01, 1, 0.01, func(p *presets.Params) *float32 { return &p.TFSZ }),
			intSpec("min_keep", "Min keep", "Truncating stages keep at least this many tokens.", 0, 100, func(p *presets.Params) *int { return &p.MinKeep }),
		}},
	{title: "Mirostat", unused: notSampling, skipped: notSampled,
		help: "Adapts truncation to keep the surprise of each token near a target, instead of fixed k or p.",
		specs: []paramSpec{
			intSpec("mirostat", "Mode", "0 = off, 1 = Mirostat, 2 = Mirostat 2.0.", 0, 2, func(p *presets.Params) *int { return &p.Mirostat }),
			f32Spec("mirostat_tau", "Tau", "Target surprise in bits: lower is more focused, higher more varied.", 0, 10, 0.1, func(p *presets.Params) *float32 { return &p.MirostatTau }),
			f32Spec("mirostat_eta", "Eta", "How fast it adapts to the target.", 0.001, 1, 0.01, func(p *presets.Params) *float32 { return &p.MirostatEta }),
		}},
	{title: "Repetition penalties",
		help: "Lower the logits of tokens already in the last N tokens.",
		specs: []paramSpec{
			f32Spec("repeat_penalty", "Repeat penalty", "Divide repeated tokens' logits by this (multiply when negative). 1 = off.", 0.5, 2, 0.01, func(p *presets.Params) *float32 { return &p.RepeatPenalty }),
			intSpec("repeat_last_n", "Window", "How many recent tokens the penalties look at. -1 = all, 0 = off.", -1, 2048, func(p *presets.Params) *int { return &p.RepeatLastN }),
			f32Spec("presence_penalty", "Presence penalty", "Subtract this once from every token already present (OpenAI style).", -2, 2, 0.05, func(p *presets.Params) *float32 { return &p.PresencePenalty }),
			f32Spec("frequency_penalty", "Frequency penalty", "Subtract this for each time a token appeared (OpenAI style).", -2, 2, 0.05, func(p *presets.Params) *float32 { return &p.FrequencyPenalty }),
		}},
	{title: "DRY (don't repeat yourself)",
		help: "Penalises the token that would extend a sequence already seen, more the longer the repeat.",
		specs: []paramSpec{
			f32Spec("dry_multiplier", "Multiplier", "Strength. 0 = off; 0.8 is a common choice.", 0, 5, 0.05, func(p *presets.Params) *float32 { return &p.DRYMultiplier }),
			f32Spec("dry_base", "Base", "Growth of the penalty with the repeat's length.", 1, 4, 0.05, func(p *presets.Params) *float32 { return &p.DRYBase }),
			intSpec("dry_allowed_length", "Allowed length", "Repeats up to this many tokens are free.", 0, 20, func(p *presets.Params) *int { return &p.DRYAllowedLength }),
			intSpec("dry_penalty_last_n", "Window", "How far back to look for repeats. -1 = whole conversation.", -1, 4096, func(p *presets.Params) *int { return &p.DRYPenaltyLastN }),
		}},
	{title: "XTC (exclude top choices)", unused: truncationUnused, skipped: notSampled,
		help: "With some probability, removes all but the least likely of the tokens above a threshold: less predictable wording.",
		specs: []paramSpec{
			f32Spec("xtc_probability", "Probability", "Chance per token that XTC acts. 0 = off.", 0, 1, 0.01, func(p *presets.Params) *float32 { return &p.XTCProbability }),
			f32Spec("xtc_threshold", "Threshold", "Tokens at least this probable count as top choices (above 0.5 XTC never acts).", 0, 1, 0.01, func(p *presets.Params) *float32 { return &p.XTCThreshold }),
		}},
	{title: "FSD (frustratingly simple decoding)", skipped: notFSD, unused: func(p *presets.Params) string {
		if notFSD(p) {
			return "Used only when Decoding is FSD or random FSD."
		}
		return ""
	},
		help: "Scores the top candidates by the model's probability minus an n-gram model of the reply so far, to avoid loops.",
		specs: []paramSpec{
			f32Spec("fsd_alpha", "Alpha", "Weight of the anti-repetition n-gram model.", 0, 1, 0.05, func(p *presets.Params) *float32 { return &p.FSDAlpha }),
			intSpec("fsd_k", "Candidates (k)", "How many top tokens are scored.", 1, 20, func(p *presets.Params) *int { return &p.FSDK }),
			intSpec("fsd_n", "N-gram order", "Length of the n-grams remembered.", 1, 8, func(p *presets.Params) *int { return &p.FSDN }),
			f32Spec("fsd_beta", "Back-off", "Discount between n-gram orders.", 0.05, 1, 0.05, func(p *presets.Params) *float32 { return &p.FSDBeta }),
			intSpec("fsd_random_steps", "Random steps", "Random FSD: first steps where a coin picks sampling or FSD.", 0, 100, func(p *presets.Params) *int { return &p.FSDRandomSteps }),
		}},
}

// decodingChoices are the Decoding select's entries, value → label.
var decodingChoices = []struct{ value, label, help string }{
	{presets.DecodingSample, "Sample", "Run the chain below, then draw a token by probability."},
	{presets.DecodingGreedy, "Greedy", "Always the most probable token (after penalties)."},
	{presets.DecodingFSD, "FSD", "Deterministic, penalising n-grams the reply already used."},
	{presets.DecodingRandomFSD, "Random FSD", "FSD mixed with sampling for the first steps."},
}
