package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"flowchat/engine/sample"
)

// samplingFlags maps the CLI's sampling flags (the parameter names with
// dashes) onto sample.Params.
type samplingFlags struct {
	p       sample.Params
	greedy  bool
	seed    string
	order   string
	bias    string
	explain bool
}

func (s *samplingFlags) register(fs *flag.FlagSet) {
	s.p = sample.DefaultParams()
	p := &s.p
	fs.BoolVar(&s.greedy, "greedy", false, "always take the most probable token (same as --decoding greedy)")
	fs.Var(f32(&p.Temperature), "temperature", "sampling temperature; 0 = greedy")
	fs.Var(f32(&p.Temperature), "temp", "shorthand for --temperature")
	fs.IntVar(&p.TopK, "top-k", p.TopK, "keep the k most probable tokens; 0 = off")
	fs.Var(f32(&p.TopP), "top-p", "nucleus sampling: keep the smallest set with this much probability; 1 = off")
	fs.Var(f32(&p.MinP), "min-p", "drop tokens less probable than min-p × the top token; 0 = off")
	fs.Var(f32(&p.TypicalP), "typical-p", "locally typical sampling; 1 = off")
	fs.Var(f32(&p.TFSZ), "tfs-z", "tail-free sampling; 1 = off")
	fs.IntVar(&p.Mirostat, "mirostat", p.Mirostat, "mirostat version 1 or 2; 0 = off")
	fs.Var(f32(&p.MirostatTau), "mirostat-tau", "mirostat target surprise")
	fs.Var(f32(&p.MirostatEta), "mirostat-eta", "mirostat learning rate")
	fs.Var(f32(&p.RepeatPenalty), "repeat-penalty", "penalize repeated tokens; 1 = off")
	fs.IntVar(&p.RepeatLastN, "repeat-last-n", p.RepeatLastN, "tokens considered by the penalties; -1 = all")
	fs.Var(f32(&p.PresencePenalty), "presence-penalty", "OpenAI presence penalty")
	fs.Var(f32(&p.FrequencyPenalty), "frequency-penalty", "OpenAI frequency penalty")
	fs.StringVar(&s.seed, "seed", "", "random seed making a generation reproducible (default: random)")
	fs.StringVar(&s.bias, "logit-bias", "", "token biases, e.g. 15043=+1,29871=-inf")
	fs.Var(f32(&p.DRYMultiplier), "dry-multiplier", "DRY repetition penalty strength; 0 = off")
	fs.Var(f32(&p.DRYBase), "dry-base", "DRY base")
	fs.IntVar(&p.DRYAllowedLength, "dry-allowed-length", p.DRYAllowedLength, "DRY: repeats up to this length are free")
	fs.IntVar(&p.DRYPenaltyLastN, "dry-penalty-last-n", p.DRYPenaltyLastN, "DRY window; -1 = all")
	fs.Var(f32(&p.XTCProbability), "xtc-probability", "XTC: chance to exclude top choices; 0 = off")
	fs.Var(f32(&p.XTCThreshold), "xtc-threshold", "XTC: probability that makes a token a top choice")
	fs.StringVar(&p.Decoding, "decoding", p.Decoding, "greedy | sample | fsd | random-fsd")
	fs.Var(f32(&p.FSDAlpha), "fsd-alpha", "FSD: weight of the anti-language-model")
	fs.IntVar(&p.FSDK, "fsd-k", p.FSDK, "FSD: candidates scored per step")
	fs.IntVar(&p.FSDN, "fsd-n", p.FSDN, "FSD: n-gram order of the anti-LM")
	fs.StringVar(&s.order, "samplers", "", "stage order, comma-separated (default: penalties,dry,top_k,typical_p,top_p,min_p,xtc,temperature)")
	fs.BoolVar(&s.explain, "explain-sampling", false, "print each step's candidates per stage as one JSON object per token to stderr")
}

// params returns the validated parameters.
func (s *samplingFlags) params() (sample.Params, error) {
	p := s.p
	if s.greedy {
		p.Decoding = "greedy"
	}
	if s.seed != "" {
		v, err := strconv.ParseUint(s.seed, 10, 64)
		if err != nil {
			return p, fmt.Errorf("--seed %q: want a non-negative integer", s.seed)
		}
		p.Seed = v
	}
	if s.order != "" {
		p.Order = strings.Split(s.order, ",")
	}
	if s.bias != "" {
		b, err := parseBias(s.bias)
		if err != nil {
			return p, err
		}
		p.LogitBias = b
	}
	return p, p.Validate()
}

func parseBias(s string) (map[int32]float32, error) {
	out := map[int32]float32{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		id, err1 := strconv.ParseInt(strings.TrimSpace(k), 10, 32)
		f, err2 := strconv.ParseFloat(strings.TrimSpace(v), 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("--logit-bias %q: want TOKEN=BIAS pairs like 15043=+1,29871=-inf", kv)
		}
		out[int32(id)] = float32(f)
	}
	return out, nil
}

// float32Value adapts a *float32 to flag.Value.
type float32Value struct{ p *float32 }

func f32(p *float32) float32Value { return float32Value{p} }

func (f float32Value) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*f.p), 'g', -1, 32)
}

func (f float32Value) Set(s string) error {
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return err
	}
	*f.p = float32(v)
	return nil
}
