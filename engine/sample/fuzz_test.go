package sample

import (
	"encoding/json"
	"testing"
)

// FuzzParamsJSON feeds request bodies (outside input) through the path a
// server takes: decode over DefaultParams, New, then a few steps. Whatever
// New accepts must sample without panicking and return a token in range.
func FuzzParamsJSON(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"temperature":0,"top_k":1}`,
		`{"top_p":0.5,"min_p":0.2,"typical_p":0.3,"tfs_z":0.5,"min_keep":100}`,
		`{"mirostat":2,"mirostat_tau":0.01,"mirostat_eta":1}`,
		`{"mirostat":1,"mirostat_tau":30}`,
		`{"repeat_penalty":0.01,"repeat_last_n":-1,"presence_penalty":2,"frequency_penalty":-2}`,
		`{"logit_bias":{"0":-1e30,"5":1e30}}`,
		`{"dry_multiplier":5,"dry_base":100,"dry_allowed_length":0,"dry_penalty_last_n":3}`,
		`{"xtc_probability":1,"xtc_threshold":0}`,
		`{"decoding":"fsd","fsd_k":1000000,"fsd_n":1}`,
		`{"decoding":"random-fsd","fsd_random_steps":3,"samplers":["xtc","temperature"]}`,
		`{"samplers":[]}`,
	} {
		f.Add([]byte(s))
	}
	const nVocab = 64
	logits := randLogits(nVocab, 9)
	f.Fuzz(func(t *testing.T, body []byte) {
		p := DefaultParams()
		p.Seed = 1
		if json.Unmarshal(body, &p) != nil {
			return
		}
		s, err := New(p, nVocab, WithBreakerTokens([][]int32{{3}, {4, 5}}))
		if err != nil {
			return
		}
		for i := 0; i < 6; i++ {
			s.Explain(logits)
			tok := s.Sample(logits)
			if tok < 0 || tok >= nVocab {
				t.Fatalf("token %d out of range with %s", tok, body)
			}
			s.Accept(tok)
		}
	})
}
