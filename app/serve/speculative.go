package serve

import (
	"flowchat/engine"
	"flowchat/engine/sample"
	"time"
)

// specRequest is a request's "speculative" field: speculative decoding
// for this request (engine/speculate.go). Absent, the request takes the
// server's default (serve --draft-model, --draft-quant or --draft ngram),
// which steps aside for sampling settings it cannot verify (mirostat).
//
//	"speculative": {"draft": "ngram" | "model" | "none", "n": 5,
//	                "accept": "strict" | "top-k" | "top-p", "top_k": 5, "top_p": 0.9}
//
// "model" is the server's draft model (or lower-bit self-draft); "none"
// turns the default off. n is the starting draft length (adaptive within
// 1…2n, at most 16).
type specRequest struct {
	Draft  string  `json:"draft"`
	N      int     `json:"n"`
	Accept string  `json:"accept"`
	TopK   int     `json:"top_k"`
	TopP   float32 `json:"top_p"`
}

// specFor turns r into the generation's speculation: the options (nil:
// the default) and whether the default is turned off; bad fields go to pr.
func (s *Server) specFor(r *specRequest, p sample.Params, pr *problems) (*engine.SpecOptions, bool) {
	if r == nil {
		return nil, false
	}
	def := s.cfg.Model.Speculation()
	o := engine.SpecOptions{K: r.N, Accept: sample.Acceptance{Rule: r.Accept, TopK: r.TopK, TopP: r.TopP}}
	switch r.Draft {
	case "none":
		return nil, true
	case "ngram":
		o.Draft = engine.NGram{}
	case "model", "":
		if def == nil {
			pr.add("speculative.draft", "this server has no draft model: start it with --draft-model FILE or --draft-quant TYPE, or ask for \"ngram\"")
			return nil, false
		}
		if _, ngram := def.Draft.(engine.NGram); r.Draft == "model" && ngram {
			pr.add("speculative.draft", "this server drafts with n-grams and has no draft model (start it with --draft-model FILE or --draft-quant TYPE)")
			return nil, false
		}
		o.Draft = def.Draft
		if r.N == 0 {
			o.K = def.K
		}
	default:
		pr.add("speculative.draft", "draft %q: want \"ngram\", \"model\" or \"none\"", r.Draft)
		return nil, false
	}
	if o.K == 0 {
		o.K = 5
	}
	if o.K < 1 || o.K > 16 {
		pr.add("speculative.n", "n = %d outside [1, 16]", r.N)
	}
	if err := o.Accept.Check(); err != nil {
		pr.add("speculative.accept", "%v", err)
	}
	if err := p.SpeculationError(); err != nil {
		pr.add("speculative", "%v", err)
	}
	return &o, false
}

// add counts one generation: its prompt (the tokens evaluated, not those
// the prefix cache served), its tokens and its drafts.
func (t *timings) add(st engine.Stats) {
	t.PromptN += st.PromptTokens
	t.PromptMS += ms(st.PromptTime)
	t.PredictedN += st.GenTokens
	t.PredictedMS += ms(st.GenTime)
	t.DraftN += st.Drafted
	t.DraftNAccepted += st.DraftAccepted
	t.PromptPerTokenMS, t.PromptPerSecond = per(t.PromptN, t.PromptMS)
	t.PredictedPerTokenMS, t.PredictedPerSecond = per(t.PredictedN, t.PredictedMS)
}

// timingsOf is one generation's timings.
func timingsOf(st engine.Stats) *timings {
	var t timings
	t.add(st)
	return &t
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// per is milliseconds per token and tokens per second (0 without tokens
// or time).
func per(n int, msec float64) (float64, float64) {
	if n == 0 || msec <= 0 {
		return 0, 0
	}
	return msec / float64(n), 1e3 * float64(n) / msec
}
