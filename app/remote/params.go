package remote

import (
	"math"
	"slices"
	"strconv"

	"flowchat/engine/sample"
)

// Unsupported is a sampling parameter a dialect cannot honour, and why.
type Unsupported struct {
	Param  string // sample.Params' JSON name, as the sampling panel names it
	Reason string
}

// Parameter names, as sample.Params' JSON tags spell them.
const (
	pTemperature = "temperature"
	pTopK        = "top_k"
	pTopP        = "top_p"
	pMinP        = "min_p"
	pTypicalP    = "typical_p"
	pTFSZ        = "tfs_z"
	pMinKeep     = "min_keep"
	pMirostat    = "mirostat"
	pRepeat      = "repeat_penalty"
	pRepeatLastN = "repeat_last_n"
	pPresence    = "presence_penalty"
	pFrequency   = "frequency_penalty"
	pSeed        = "seed"
	pLogitBias   = "logit_bias"
	pDRY         = "dry_multiplier"
	pXTC         = "xtc_probability"
	pDecoding    = "decoding"
	pOrder       = "samplers"
)

// Params lists every parameter name Support and Map talk about, in the
// sampling panel's order. mirostat stands for its tau and eta too, DRY
// and XTC for their other settings.
var Params = []string{pTemperature, pTopK, pTopP, pMinP, pTypicalP, pTFSZ, pMinKeep, pMirostat,
	pRepeat, pRepeatLastN, pPresence, pFrequency, pSeed, pLogitBias, pDRY, pXTC, pDecoding, pOrder}

const (
	whyOpenAI = "the OpenAI API has no such field"
	whyFSD    = "FSD needs the model's logits, which only flowchat's own engine runs"
)

// unsupported is each dialect's table of parameters it cannot honour.
// Sources: OpenAI's chat completions reference; vLLM's "extra parameters"
// of its OpenAI-compatible server (SamplingParams); llama.cpp's
// tools/server/README.md (tfs_z was removed from llama.cpp in late 2024);
// Ollama's docs/api.md and modelfile.md "options".
var unsupported = map[Dialect]map[string]string{
	Generic: {
		pTopK: whyOpenAI, pMinP: whyOpenAI, pTypicalP: whyOpenAI, pTFSZ: whyOpenAI, pMinKeep: whyOpenAI,
		pMirostat: whyOpenAI, pRepeat: whyOpenAI, pRepeatLastN: whyOpenAI, pDRY: whyOpenAI,
		pXTC: whyOpenAI, pDecoding: whyFSD, pOrder: "OpenAI servers apply their samplers in a fixed order",
	},
	VLLM: {
		pTypicalP: "vLLM has no locally typical sampling", pTFSZ: "vLLM has no tail-free sampling",
		pMinKeep: "vLLM has no min_keep", pMirostat: "vLLM has no mirostat",
		pRepeatLastN: "vLLM's repetition_penalty covers the whole sequence (only -1 is honoured)",
		pDRY:         "vLLM has no DRY sampler", pXTC: "vLLM has no XTC sampler", pDecoding: whyFSD,
		pOrder: "vLLM applies its samplers in a fixed order",
	},
	LlamaCpp: {
		pTFSZ:     "llama.cpp removed tail-free sampling",
		pDecoding: whyFSD,
	},
	Ollama: {
		pTFSZ: "Ollama no longer has tail-free sampling", pMinKeep: "Ollama has no min_keep",
		pLogitBias: "Ollama's API has no logit bias", pDRY: "Ollama has no DRY sampler",
		pXTC: "Ollama has no XTC sampler", pDecoding: whyFSD,
		pOrder: "Ollama applies its samplers in a fixed order",
	},
	Flowchat: {},
}

// Support returns, for every parameter a dialect cannot honour, the
// reason; the GUI disables those sliders and shows it.
func Support(d Dialect) map[string]string {
	m, ok := unsupported[d]
	if !ok {
		m = unsupported[Generic]
	}
	return m
}

// active reports which parameters of p differ from their "off" value, so
// that dropping them changes the reply.
func active(p sample.Params) map[string]bool {
	fsd := p.Decoding == sample.DecodingFSD || p.Decoding == sample.DecodingRandomFSD
	return map[string]bool{
		pTopK: p.TopK > 0, pMinP: p.MinP > 0, pTypicalP: p.TypicalP < 1, pTFSZ: p.TFSZ < 1,
		pMinKeep: p.MinKeep > 0, pMirostat: p.Mirostat != 0, pRepeat: p.RepeatPenalty != 1,
		pRepeatLastN: p.RepeatPenalty != 1 && p.RepeatLastN != -1,
		pLogitBias:   len(p.LogitBias) > 0, pDRY: p.DRYMultiplier > 0, pXTC: p.XTCProbability > 0,
		pDecoding: fsd, pOrder: p.Order != nil && !slices.Equal(p.Order, sample.DefaultOrder),
	}
}

// Dropped lists the parameters of p that are in use but that dialect d
// cannot honour: the request goes without them.
func Dropped(d Dialect, p sample.Params) []Unsupported {
	on := active(p)
	table := Support(d)
	var out []Unsupported
	for _, name := range Params {
		if why, ok := table[name]; ok && on[name] {
			out = append(out, Unsupported{Param: name, Reason: why})
		}
	}
	return out
}

// temperature is what the server is sent: greedy decoding is temperature
// 0, which every dialect treats as argmax.
func temperature(p sample.Params) float32 {
	if p.Decoding == sample.DecodingGreedy {
		return 0
	}
	return p.Temperature
}

// openAIFields are the standard chat-completions fields every dialect on
// /v1/chat/completions gets.
func openAIFields(p sample.Params, maxTokens int) map[string]any {
	f := map[string]any{
		"temperature": temperature(p), "top_p": p.TopP,
		"presence_penalty": p.PresencePenalty, "frequency_penalty": p.FrequencyPenalty,
	}
	if p.Seed != sample.SeedRandom {
		f["seed"] = int64(p.Seed & math.MaxInt64)
	}
	if maxTokens > 0 {
		f["max_tokens"] = maxTokens
	}
	if len(p.LogitBias) > 0 {
		f["logit_bias"] = openAIBias(p.LogitBias)
	}
	return f
}

// openAIBias is OpenAI's logit_bias: token IDs as strings, biases clamped
// to [-100, 100] (-100 bans a token in practice, as -Inf does here).
func openAIBias(b map[int32]float32) map[string]float32 {
	out := make(map[string]float32, len(b))
	for id, v := range b {
		out[strconv.Itoa(int(id))] = float32(math.Max(-100, math.Min(100, float64(v))))
	}
	return out
}

// vllmFields are vLLM's extra sampling parameters. vLLM's top_k uses -1
// (or 0) for "off" and its repetition_penalty is the same multiplicative
// penalty as llama.cpp's, over the whole sequence.
func vllmFields(f map[string]any, p sample.Params) {
	f["top_k"] = p.TopK
	if p.TopK <= 0 {
		f["top_k"] = -1
	}
	f["min_p"] = p.MinP
	f["repetition_penalty"] = p.RepeatPenalty
}

// llamaOrder maps flowchat's stage names to llama-server's "samplers"
// names; tail-free sampling has none.
var llamaOrder = map[string]string{
	sample.StagePenalties: "penalties", sample.StageDRY: "dry", sample.StageTopK: "top_k",
	sample.StageTypical: "typ_p", sample.StageTopP: "top_p", sample.StageMinP: "min_p",
	sample.StageXTC: "xtc", sample.StageTemperature: "temperature",
}

// llamaFields are llama-server's own names, the same as flowchat's.
func llamaFields(f map[string]any, p sample.Params) {
	for k, v := range map[string]any{
		"top_k": p.TopK, "min_p": p.MinP, "typical_p": p.TypicalP, "min_keep": p.MinKeep,
		"mirostat": p.Mirostat, "mirostat_tau": p.MirostatTau, "mirostat_eta": p.MirostatEta,
		"repeat_penalty": p.RepeatPenalty, "repeat_last_n": p.RepeatLastN,
		"dry_multiplier": p.DRYMultiplier, "dry_base": p.DRYBase,
		"dry_allowed_length": p.DRYAllowedLength, "dry_penalty_last_n": p.DRYPenaltyLastN,
		"xtc_probability": p.XTCProbability, "xtc_threshold": p.XTCThreshold,
	} {
		f[k] = v
	}
	if p.DRYSequenceBreakers != nil {
		f["dry_sequence_breakers"] = p.DRYSequenceBreakers
	}
	if len(p.LogitBias) > 0 {
		f["logit_bias"] = llamaBias(p.LogitBias)
	}
	if p.Order != nil {
		var names []string
		for _, s := range p.Order {
			if n, ok := llamaOrder[s]; ok {
				names = append(names, n)
			}
		}
		f["samplers"] = names
	}
}

// llamaBias is llama-server's native logit_bias: [[id, bias]] pairs, with
// false banning a token.
func llamaBias(b map[int32]float32) [][2]any {
	ids := make([]int32, 0, len(b))
	for id := range b {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([][2]any, len(ids))
	for i, id := range ids {
		out[i] = [2]any{id, b[id]}
		if math.IsInf(float64(b[id]), -1) {
			out[i][1] = false
		}
	}
	return out
}

// flowchatFields are every parameter under sample.Params' own JSON
// names: a flowchat server runs the same sampler chain as the local
// engine, so nothing is lost (and greedy text equals a local run).
func flowchatFields(f map[string]any, p sample.Params) {
	llamaFields(f, p)
	f["tfs_z"] = p.TFSZ
	f["decoding"] = p.Decoding
	f["fsd_alpha"], f["fsd_k"], f["fsd_n"] = p.FSDAlpha, p.FSDK, p.FSDN
	f["fsd_beta"], f["fsd_random_steps"] = p.FSDBeta, p.FSDRandomSteps
	if p.Order != nil {
		f["samplers"] = p.Order
	}
	if len(p.LogitBias) > 0 {
		f["logit_bias"] = openAIBias(p.LogitBias)
	}
}

// ollamaOptions are the "options" of Ollama's native /api/chat.
func ollamaOptions(p sample.Params, maxTokens int) map[string]any {
	o := map[string]any{
		"temperature": temperature(p), "top_k": p.TopK, "top_p": p.TopP, "min_p": p.MinP,
		"typical_p": p.TypicalP, "repeat_penalty": p.RepeatPenalty, "repeat_last_n": p.RepeatLastN,
		"presence_penalty": p.PresencePenalty, "frequency_penalty": p.FrequencyPenalty,
		"mirostat": p.Mirostat, "mirostat_tau": p.MirostatTau, "mirostat_eta": p.MirostatEta,
	}
	if p.Seed != sample.SeedRandom {
		o["seed"] = int64(p.Seed & math.MaxInt64)
	}
	if maxTokens > 0 {
		o["num_predict"] = maxTokens
	}
	return o
}
