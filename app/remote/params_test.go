package remote

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"flowchat/app/remote/remotetest"
	"flowchat/engine/sample"
)

// allOn sets every slider away from its default and its "off" value, so
// each one shows in the request of a dialect that honours it.
func allOn() sample.Params {
	p := sample.DefaultParams()
	p.Temperature, p.TopK, p.TopP, p.MinP, p.TypicalP, p.TFSZ, p.MinKeep = 0.7, 33, 0.9, 0.07, 0.8, 0.95, 2
	p.Mirostat, p.MirostatTau, p.MirostatEta = 2, 4.5, 0.2
	p.RepeatPenalty, p.RepeatLastN, p.PresencePenalty, p.FrequencyPenalty = 1.15, 128, 0.3, 0.4
	p.Seed = 42
	p.LogitBias = map[int32]float32{15043: 1.5, 29871: float32(math.Inf(-1))}
	p.DRYMultiplier, p.DRYBase, p.DRYAllowedLength, p.DRYPenaltyLastN = 0.8, 1.5, 3, 256
	p.DRYSequenceBreakers = []string{"\n"}
	p.XTCProbability, p.XTCThreshold = 0.5, 0.15
	p.Order = []string{"penalties", "top_k", "top_p", "min_p", "temperature"}
	return p
}

// sliders change one parameter each (tau, eta and the DRY and XTC
// settings ride with their sampler).
var sliders = map[string]func(*sample.Params){
	pTemperature: func(p *sample.Params) { p.Temperature = 1.3 },
	pTopK:        func(p *sample.Params) { p.TopK = 7 },
	pTopP:        func(p *sample.Params) { p.TopP = 0.5 },
	pMinP:        func(p *sample.Params) { p.MinP = 0.2 },
	pTypicalP:    func(p *sample.Params) { p.TypicalP = 0.5 },
	pTFSZ:        func(p *sample.Params) { p.TFSZ = 0.5 },
	pMinKeep:     func(p *sample.Params) { p.MinKeep = 5 },
	pMirostat:    func(p *sample.Params) { p.MirostatTau = 3 },
	pRepeat:      func(p *sample.Params) { p.RepeatPenalty = 1.3 },
	pRepeatLastN: func(p *sample.Params) { p.RepeatLastN = 32 },
	pPresence:    func(p *sample.Params) { p.PresencePenalty = -0.5 },
	pFrequency:   func(p *sample.Params) { p.FrequencyPenalty = 1 },
	pSeed:        func(p *sample.Params) { p.Seed = 7 },
	pLogitBias:   func(p *sample.Params) { p.LogitBias = map[int32]float32{5: -3} },
	pDRY:         func(p *sample.Params) { p.DRYBase = 2 },
	pXTC:         func(p *sample.Params) { p.XTCThreshold = 0.3 },
	pDecoding:    func(p *sample.Params) { p.Decoding = sample.DecodingFSD },
	pOrder:       func(p *sample.Params) { p.Order = []string{"temperature", "top_k"} },
}

// sent runs a chat against a stand-in of kind k with dialect d and
// returns the request body the stand-in accepted.
func sent(t *testing.T, k remotetest.Kind, p sample.Params) map[string]any {
	t.Helper()
	s := remotetest.New(k)
	defer s.Close()
	c := newClient(t, s.URL, "")
	req := Request{Model: "test-model", Messages: []Message{{Role: "user", Content: "hi"}}, Sampling: p, MaxTokens: 64}
	if _, err := c.Chat(context.Background(), req, func(Piece) {}); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return s.LastBody()
}

var kinds = map[Dialect]remotetest.Kind{Generic: remotetest.OpenAI, VLLM: remotetest.VLLM,
	LlamaCpp: remotetest.LlamaCpp, Ollama: remotetest.Ollama, Flowchat: remotetest.Flowchat}

// TestEverySliderReachesOrIsReported moves each slider in turn on every
// dialect: the request the stand-in accepts must change exactly when the
// dialect does not list the slider as unsupported.
func TestEverySliderReachesOrIsReported(t *testing.T) {
	if len(sliders) != len(Params) {
		t.Fatalf("%d sliders tested, %d parameters", len(sliders), len(Params))
	}
	for d, k := range kinds {
		base := sent(t, k, allOn())
		for name, move := range sliders {
			p := allOn()
			move(&p)
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			changed := !reflect.DeepEqual(sent(t, k, p), base)
			_, unsupported := Support(d)[name]
			if changed == unsupported {
				t.Errorf("%s: moving %s changed the request: %v; listed unsupported: %v", d, name, changed, unsupported)
			}
		}
	}
}

// TestSliderFields checks the field names and values each dialect gets,
// from its documentation.
func TestSliderFields(t *testing.T) {
	std := map[string]any{"temperature": 0.7, "top_p": 0.9, "presence_penalty": 0.3, "frequency_penalty": 0.4,
		"seed": 42.0, "max_tokens": 64.0}
	llama := map[string]any{"top_k": 33.0, "min_p": 0.07, "typical_p": 0.8, "min_keep": 2.0, "mirostat": 2.0,
		"mirostat_tau": 4.5, "mirostat_eta": 0.2, "repeat_penalty": 1.15, "repeat_last_n": 128.0,
		"dry_multiplier": 0.8, "dry_base": 1.5, "dry_allowed_length": 3.0, "dry_penalty_last_n": 256.0,
		"dry_sequence_breakers": []any{"\n"}, "xtc_probability": 0.5, "xtc_threshold": 0.15,
		"samplers":   []any{"penalties", "top_k", "top_p", "min_p", "temperature"},
		"logit_bias": []any{[]any{15043.0, 1.5}, []any{29871.0, false}}}
	cases := map[Dialect]map[string]any{
		Generic: merge(std, map[string]any{"logit_bias": map[string]any{"15043": 1.5, "29871": -100.0}}),
		VLLM: merge(std, map[string]any{"top_k": 33.0, "min_p": 0.07, "repetition_penalty": 1.15,
			"logit_bias": map[string]any{"15043": 1.5, "29871": -100.0}}),
		LlamaCpp: merge(std, llama),
		Flowchat: merge(std, llama, map[string]any{"tfs_z": 0.95, "decoding": "sample", "fsd_k": 6.0,
			"logit_bias": map[string]any{"15043": 1.5, "29871": -100.0}}),
	}
	for d, want := range cases {
		got := sent(t, kinds[d], allOn())
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s: %s = %#v, want %#v", d, k, got[k], v)
			}
		}
		if got["stream"] != true || got["model"] != "test-model" {
			t.Errorf("%s: stream %v model %v", d, got["stream"], got["model"])
		}
	}
	got := sent(t, remotetest.Ollama, allOn())
	want := map[string]any{"temperature": 0.7, "top_k": 33.0, "top_p": 0.9, "min_p": 0.07, "typical_p": 0.8,
		"repeat_penalty": 1.15, "repeat_last_n": 128.0, "presence_penalty": 0.3, "frequency_penalty": 0.4,
		"mirostat": 2.0, "mirostat_tau": 4.5, "mirostat_eta": 0.2, "seed": 42.0, "num_predict": 64.0}
	if !reflect.DeepEqual(got["options"], want) {
		t.Errorf("ollama options = %v\nwant %v", got["options"], want)
	}
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestGreedyIsTemperatureZero: --greedy reaches every dialect as
// temperature 0, and an unset seed is not sent.
func TestGreedyIsTemperatureZero(t *testing.T) {
	p := sample.DefaultParams()
	p.Decoding = sample.DecodingGreedy
	for d, k := range kinds {
		b := sent(t, k, p)
		if d == Ollama {
			b = b["options"].(map[string]any)
		}
		if b["temperature"] != 0.0 {
			t.Errorf("%s: temperature %v, want 0", d, b["temperature"])
		}
		if _, ok := b["seed"]; ok {
			t.Errorf("%s: a random seed was sent as %v", d, b["seed"])
		}
	}
}

func TestDropped(t *testing.T) {
	got := func(d Dialect, p sample.Params) []string {
		var names []string
		for _, u := range Dropped(d, p) {
			if u.Reason == "" {
				t.Errorf("%s: %s dropped without a reason", d, u.Param)
			}
			names = append(names, u.Param)
		}
		return names
	}
	if n := got(Flowchat, allOn()); n != nil {
		t.Errorf("flowchat drops %v", n)
	}
	if n := got(VLLM, allOn()); !slices.Equal(n, []string{pTypicalP, pTFSZ, pMinKeep, pMirostat, pRepeatLastN, pDRY, pXTC, pOrder}) {
		t.Errorf("vllm drops %v", n)
	}
	if n := got(Ollama, allOn()); !slices.Equal(n, []string{pTFSZ, pMinKeep, pLogitBias, pDRY, pXTC, pOrder}) {
		t.Errorf("ollama drops %v", n)
	}
	// The defaults have top_k 40 and min_p 0.05 on, which a plain OpenAI
	// server cannot honour; the rest is off.
	if n := got(Generic, sample.DefaultParams()); !slices.Equal(n, []string{pTopK, pMinP}) {
		t.Errorf("openai drops %v of the defaults", n)
	}
}

// TestBodiesAreJSONNumbers guards the float32 → JSON step: 0.7 must reach
// the server as 0.7, not 0.699999988.
func TestBodiesAreJSONNumbers(t *testing.T) {
	b, _ := json.Marshal(openAIFields(allOn(), 0))
	var v map[string]any
	json.Unmarshal(b, &v)
	if v["temperature"] != 0.7 {
		t.Errorf("temperature encoded as %v", v["temperature"])
	}
}
