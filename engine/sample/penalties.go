package sample

import "fmt"

// history is the sequence Accept recorded (prompt and generated tokens) and
// the token counts inside the repetition-penalty window.
type history struct {
	toks   []int32  // whole sequence, oldest first
	counts []int32  // [nVocab] occurrences inside the last `window` tokens
	window int      // repeat_last_n; -1 = whole sequence, 0 = none
	mark   []uint32 // [nVocab] dedupe stamps for walking the window
	stamp  uint32
}

func newHistory(nVocab, window int) history {
	return history{toks: make([]int32, 0, 1024), counts: make([]int32, nVocab), window: window, mark: make([]uint32, nVocab)}
}

func (h *history) accept(tok int32) {
	h.toks = append(h.toks, tok)
	if h.window == 0 {
		return
	}
	h.counts[tok]++
	if h.window > 0 && len(h.toks) > h.window {
		h.counts[h.toks[len(h.toks)-1-h.window]]--
	}
}

func (h *history) reset() {
	h.toks = h.toks[:0]
	clear(h.counts)
}

// recent returns the penalty window: the last `window` tokens.
func (h *history) recent() []int32 {
	if h.window < 0 || len(h.toks) <= h.window {
		return h.toks
	}
	return h.toks[len(h.toks)-h.window:]
}

// nextStamp returns a fresh dedupe stamp, clearing the marks on wrap-around.
func (h *history) nextStamp() uint32 {
	h.stamp++
	if h.stamp == 0 {
		clear(h.mark)
		h.stamp = 1
	}
	return h.stamp
}

// penalties applies llama.cpp's repetition penalty (divide a positive logit,
// multiply a non-positive one, as CTRL's paper only divided) and OpenAI's
// frequency and presence penalties to every token counted in the window.
func penalties(c *cands, h *history, nVocab int, rep, freq, pres float32) {
	if h.window == 0 || (rep == 1 && freq == 0 && pres == 0) {
		return
	}
	win := h.recent()
	if c.identity(nVocab) && len(win) < len(c.data) {
		stamp := h.nextStamp()
		for _, tok := range win {
			if h.mark[tok] != stamp {
				h.mark[tok] = stamp
				penalize(&c.data[tok], h.counts[tok], rep, freq, pres)
			}
		}
	} else {
		for i := range c.data {
			if n := h.counts[c.data[i].id]; n > 0 {
				penalize(&c.data[i], n, rep, freq, pres)
			}
		}
	}
	c.sorted = false
}

func penalize(x *cand, count int32, rep, freq, pres float32) {
	if x.logit <= 0 {
		x.logit *= rep
	} else {
		x.logit /= rep
	}
	x.logit -= float32(count)*freq + pres
}

// bias is one logit_bias entry, checked against the vocabulary at New.
type bias struct {
	tok int32
	add float32
}

func makeBiases(m map[int32]float32, nVocab int) ([]bias, error) {
	out := make([]bias, 0, len(m))
	for tok, b := range m {
		if tok < 0 || int(tok) >= nVocab {
			return nil, fmt.Errorf("%w: logit_bias token %d outside the vocabulary [0, %d)", ErrInvalidParams, tok, nVocab)
		}
		out = append(out, bias{tok, b})
	}
	return out, nil
}

// logitBias adds the biases; it runs first, on the freshly loaded buffer
// where candidate i is token i.
func logitBias(c *cands, biases []bias) {
	for _, b := range biases {
		c.data[b.tok].logit += b.add
	}
}
