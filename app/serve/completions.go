package serve

import (
	"net/http"
	"time"
)

// completionCall is a validated /v1/completions request.
type completionCall struct {
	req     completionRequest
	prompts [][]int32
	texts   []string // each prompt as text, for echo
	job     job
	n       int
	id      string
	now     int64
}

// defaultCompletionTokens is OpenAI's max_tokens default for the legacy
// endpoint; chat has none.
const defaultCompletionTokens = 16

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	c, e := s.parseCompletion(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	if c.req.Stream {
		s.streamCompletion(w, r, c)
		return
	}
	s.completeCompletion(w, r, c)
}

func (s *Server) parseCompletion(w http.ResponseWriter, r *http.Request) (*completionCall, *apiError) {
	body, e := s.readBody(w, r)
	if e != nil {
		return nil, e
	}
	c := &completionCall{id: newID("cmpl-"), now: time.Now().Unix()}
	params, e := decodeRequest(body, &c.req, func(pr *problems) { checkCompletion(&c.req, pr) }, s.cfg.Model.Net.NVocab)
	if e != nil {
		return nil, e
	}
	if e := s.checkModel(c.req.Model); e != nil {
		return nil, e
	}
	if e := s.completionPrompts(c); e != nil {
		return nil, e
	}
	var pr problems
	spec, noSpec := s.specFor(c.req.Speculative, params, &pr)
	if e := pr.err(); e != nil {
		return nil, e
	}
	c.job = job{params: params, stops: c.req.Stop, topLogprobs: -1, ignoreEOS: c.req.IgnoreEOS, continuation: true,
		maxTokens: deref(c.req.MaxTokens, defaultCompletionTokens), spec: spec, noSpec: noSpec}
	if c.req.Logprobs != nil {
		c.job.topLogprobs = *c.req.Logprobs
	}
	c.n = deref(c.req.N, 1)
	return c, nil
}

// completionPrompts tokenizes text prompts as `flowchat run` does (BOS
// added, special tokens parsed) and checks token prompts against the
// vocabulary. With a suffix each prompt is the prefix of a
// fill-in-the-middle layout (fim.go), tokenized without BOS as
// llama-server's /infill tokenizes its prompt.
func (s *Server) completionPrompts(c *completionCall) *apiError {
	f, e := s.fimFor(&c.req)
	if e != nil {
		return e
	}
	tok := s.cfg.Model.Tok
	for _, t := range c.req.Prompt.texts {
		ids := tok.Encode(t, f == nil, true)
		if f != nil {
			ids = f.prompt(ids)
		}
		if len(ids) == 0 {
			return badRequest("prompt", "the prompt encodes to no tokens")
		}
		c.prompts, c.texts = append(c.prompts, ids), append(c.texts, t)
	}
	nv := int32(s.cfg.Model.Net.NVocab)
	for i, ids := range c.req.Prompt.tokens {
		if len(ids) == 0 {
			return badRequest("prompt", "prompt[%d] has no tokens", i)
		}
		for _, id := range ids {
			if id < 0 || id >= nv {
				return badRequest("prompt", "prompt[%d] has token %d outside the vocabulary [0, %d)", i, id, nv)
			}
		}
		text := tok.Decode(ids)
		if f != nil {
			ids = f.prompt(ids)
		}
		c.prompts, c.texts = append(c.prompts, ids), append(c.texts, text)
	}
	return nil
}

func (s *Server) completeCompletion(w http.ResponseWriter, r *http.Request, c *completionCall) {
	resp := completionResponse{ID: c.id, Object: "text_completion", Created: c.now, Model: s.cfg.ModelID}
	u := usage{PromptTokensDetails: &promptDetails{}}
	var tm timings
	for pi, prompt := range c.prompts {
		j := c.job
		j.prompt = prompt
		results, err := s.runChoices(r.Context(), j, c.n, choiceHooks{})
		if err != nil {
			writeError(w, runError(err))
			return
		}
		for i, res := range results {
			countCompletion(&u, len(prompt), res)
			tm.add(res.stats)
			text, off := res.text, 0
			if c.req.Echo {
				text, off = c.texts[pi]+text, len(c.texts[pi])
			}
			resp.Choices = append(resp.Choices, completionChoice{Index: pi*c.n + i, Text: text, FinishReason: &res.finish,
				Logprobs: legacyLps(c.job.topLogprobs, res.logprobs, off)})
		}
	}
	resp.Usage = &u
	resp.Timings = &tm
	writeJSON(w, http.StatusOK, resp)
}

// countCompletion adds one choice to usage; every choice's prompt counts,
// as each was evaluated (partly from the cache).
func countCompletion(u *usage, promptLen int, res result) {
	u.PromptTokens += promptLen
	u.CompletionTokens += res.stats.GenTokens
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.PromptTokensDetails.CachedTokens += res.stats.CachedTokens
}

// legacyLps converts to /v1/completions' logprobs, text offsets counted
// in bytes from the start of the choice's text (after any echo).
func legacyLps(top int, lps []tokenLogprob, offset int) *legacyLogprobs {
	if top < 0 {
		return nil
	}
	out := &legacyLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	for _, lp := range lps {
		out.Tokens = append(out.Tokens, lp.Token)
		out.TokenLogprobs = append(out.TokenLogprobs, lp.Logprob)
		alts := map[string]float64{}
		for _, t := range lp.TopLogprobs {
			alts[t.Token] = t.Logprob
		}
		out.TopLogprobs = append(out.TopLogprobs, alts)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(lp.Bytes)
	}
	return out
}

// streamCompletion streams each prompt's n choices, run at once and
// their chunks interleaved, each carrying its index (prompt × n + choice).
func (s *Server) streamCompletion(w http.ResponseWriter, r *http.Request, c *completionCall) {
	sw := newSSE(w)
	defer sw.close()
	base := completionResponse{ID: c.id, Object: "text_completion", Created: c.now, Model: s.cfg.ModelID}
	chunk := func(ch completionChoice) bool {
		b := base
		b.Choices = []completionChoice{ch}
		return sw.send(b)
	}
	u := usage{PromptTokensDetails: &promptDetails{}}
	for pi, prompt := range c.prompts {
		prep := func(i int, j *job) {
			idx := pi*c.n + i
			if c.req.Echo {
				chunk(completionChoice{Index: idx, Text: c.texts[pi]})
			}
			j.emit = func(text string, lps []tokenLogprob) bool {
				return chunk(completionChoice{Index: idx, Text: text, Logprobs: legacyLps(j.topLogprobs, lps, 0)})
			}
		}
		done := func(i int, res result) {
			b := base
			b.Choices, b.Timings = []completionChoice{{Index: pi*c.n + i, FinishReason: &res.finish}}, timingsOf(res.stats)
			sw.send(b)
		}
		j := c.job
		j.prompt = prompt
		results, err := s.runChoices(r.Context(), j, c.n, choiceHooks{prep: prep, done: done})
		if err != nil {
			sw.fail(runError(err))
			return
		}
		for _, res := range results {
			countCompletion(&u, len(prompt), res)
		}
	}
	if c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage {
		b := base
		b.Choices, b.Usage = []completionChoice{}, &u
		sw.send(b)
	}
	sw.done()
}
