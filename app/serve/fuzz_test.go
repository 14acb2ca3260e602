package serve

import (
	"testing"
)

// FuzzDecodeRequest feeds arbitrary bodies to the chat and completions
// decoders: they must never panic, and every refusal must be a 4xx with
// a message.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"temperature":0.5,"stop":["a"],"logit_bias":{"3":-100}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"n":2,"seed":-4,"top_logprobs":2,"logprobs":true}`,
		`{"prompt":[[1,2],[3]],"echo":true,"logprobs":2,"max_tokens":3}`,
		`{"prompt":"x","top_k":3,"min_p":0.1,"samplers":["top_k","temperature"],"decoding":"fsd"}`,
		`{"stop":null,"prompt":null,"messages":null}`, `[`, `""`, `{"logit_bias":{"-1":1e400}}`,
	} {
		f.Add([]byte(s))
	}
	const nVocab = 512
	f.Fuzz(func(t *testing.T, body []byte) {
		var cr chatRequest
		_, e1 := decodeRequest(body, &cr, func(pr *problems) { checkChat(&cr, pr) }, nVocab)
		var pr completionRequest
		_, e2 := decodeRequest(body, &pr, func(p *problems) { checkCompletion(&pr, p) }, nVocab)
		for _, e := range []*apiError{e1, e2} {
			if e != nil && (e.Status < 400 || e.Status >= 500 || e.Message == "") {
				t.Fatalf("body %q: error %+v", body, e)
			}
		}
		if e1 == nil && len(cr.Messages) == 0 {
			t.Fatalf("body %q accepted with no messages", body)
		}
		if e2 == nil && pr.Prompt.len() == 0 {
			t.Fatalf("body %q accepted with no prompt", body)
		}
	})
}
