package sample

import (
	"math"
	"strings"
)

// Vocab gives DRY the text of tokens, to find which tokens contain a
// sequence breaker. *tokenizer.Tokenizer implements it (and Tokenizer).
type Vocab interface {
	// Piece is llama_token_to_piece(id, special = true): the token's bytes.
	Piece(id int32) []byte
}

// Tokenizer is an optional extension of a Vocab. With it, a token that ends
// with the start of a breaker (" foo:" ending in the first bytes of ":\n")
// becomes the head of a multi-token breaker whose tail is the tokenized rest
// (Encode(rest, false, false), as llama.cpp does); without it only tokens
// containing a whole breaker break.
type Tokenizer interface {
	Encode(text string, addSpecial, parseSpecial bool) []int32
}

// DRY limits from llama.cpp: breakers are cut to 40 bytes and their token
// tails to 20 tokens, which keeps the restart scan linear.
const (
	dryMaxBreakerBytes = 40
	dryMaxTailTokens   = 20
	floatMaxLog        = 88.7228391 // ln(math.MaxFloat32)
)

// breakers maps a head token to the tails that complete a breaker with it
// (an empty tail: the head alone is a breaker).
type breakers map[int32][][]int32

func (b breakers) add(head int32, tail []int32) {
	for _, t := range b[head] {
		if slicesEqual(t, tail) {
			return
		}
	}
	b[head] = append(b[head], tail)
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// singleToken reports whether tok alone is a breaker; DRY never penalizes it.
func (b breakers) singleToken(tok int32) bool {
	for _, t := range b[tok] {
		if len(t) == 0 {
			return true
		}
	}
	return false
}

// buildBreakers is llama.cpp's get_overlapping_token_sequences over every
// token of the vocabulary, for each breaker text.
func buildBreakers(texts []string, v Vocab, nVocab int) breakers {
	b := breakers{}
	tk, _ := v.(Tokenizer)
	for _, text := range texts {
		if len(text) > dryMaxBreakerBytes {
			text = text[:dryMaxBreakerBytes]
		}
		for id := int32(0); int(id) < nVocab; id++ {
			addOverlaps(b, id, string(v.Piece(id)), text, tk)
		}
	}
	return b
}

// addOverlaps records token id as a breaker head if its text contains text,
// or ends with a prefix of text (then the tail is the tokenized remainder).
func addOverlaps(b breakers, id int32, word, text string, tk Tokenizer) {
	if strings.Contains(word, text) {
		b.add(id, nil)
		return
	}
	if tk == nil {
		return
	}
	for pos := strings.IndexByte(word, text[0]); pos >= 0; {
		rest := word[pos:]
		if strings.HasPrefix(text, rest) {
			tail := tk.Encode(text[len(rest):], false, false)
			if len(tail) > dryMaxTailTokens {
				tail = tail[:dryMaxTailTokens]
			}
			b.add(id, tail)
		}
		next := strings.IndexByte(word[pos+1:], text[0])
		if next < 0 {
			break
		}
		pos += 1 + next
	}
}

// dryState is DRY's scratch, sized once and reused.
type dryState struct {
	brk       breakers
	repeat    []int32 // [window] repeat length of the suffix ending at each position
	maxRepeat []int32 // [nVocab] longest repeat the token would extend; -1 = none
	touched   []int32 // tokens with maxRepeat >= 0, to clear them cheaply
}

func newDRYState(nVocab int, brk breakers) dryState {
	d := dryState{brk: brk, repeat: make([]int32, 0, 1024), maxRepeat: make([]int32, nVocab), touched: make([]int32, 0, 64)}
	for i := range d.maxRepeat {
		d.maxRepeat[i] = -1
	}
	return d
}

// dryParams are the DRY settings (see Params).
type dryParams struct {
	multiplier, base float32
	allowed, lastN   int
}

// dry is the "don't repeat yourself" penalty (p-e-w, text-generation-webui
// #5677) as llama.cpp ports koboldcpp: a token that would extend a repeat of
// the context's suffix longer than allowed loses multiplier*base^(len-allowed)
// from its logit. Repeats cannot reach back across a sequence breaker.
func dry(c *cands, toks []int32, d *dryState, p dryParams) {
	if p.multiplier == 0 || p.base < 1 || p.lastN == 0 {
		return
	}
	n := len(toks)
	if p.lastN > 0 {
		n = min(n, p.lastN)
	}
	if n <= p.allowed {
		return
	}
	last := toks[len(toks)-n:] // rat(i) = last[n-1-i]
	limit := d.restartLimit(last)
	if limit < p.allowed {
		return
	}
	d.suffixRepeats(last, limit)
	d.collect(last, p.allowed)
	d.apply(c, p, len(d.maxRepeat))
	c.sorted = false
}

// restartLimit is step 1: the distance back to the nearest breaker bounds
// how long a repeat can be.
func (d *dryState) restartLimit(last []int32) int {
	n := len(last)
	rat := func(i int) int32 { return last[n-1-i] }
	for i := 0; i < n; i++ {
		tails, ok := d.brk[rat(i)]
		if !ok {
			continue
		}
		longest := -1
		for _, tail := range tails {
			if len(tail) <= longest || len(tail) > i {
				continue
			}
			match := true
			for off, t := range tail {
				if t != rat(i-off-1) {
					match = false
					break
				}
			}
			if match {
				longest = len(tail)
			}
		}
		if longest >= 0 {
			return i - longest
		}
	}
	return n
}

// suffixRepeats is step 2, the Z-algorithm run backwards: repeat[n-1-k] is
// the length (capped at limit) of the longest common suffix of the context
// and the context cut k tokens short.
func (d *dryState) suffixRepeats(last []int32, limit int) {
	n := len(last)
	if cap(d.repeat) < n {
		d.repeat = make([]int32, n, 2*n) // the context grows a token a step: amortize
	}
	rep := d.repeat[:n]
	clear(rep)
	rat := func(i int) int32 { return last[n-1-i] }
	end := n - 1
	lt, rt := 0, 0
	for k := 1; k < n; k++ {
		if k > rt {
			m := 0
			for m+k < n && rat(m) == rat(m+k) {
				m++
			}
			rep[end-k] = int32(min(m, limit))
			if m > 0 {
				lt, rt = k, k+m-1
			}
			continue
		}
		p := k - lt
		right := rt - k + 1
		if int(rep[end-p]) < right {
			rep[end-k] = int32(min(int(rep[end-p]), limit))
			continue
		}
		i := rt + 1
		for i < n && rat(i) == rat(i-k) {
			i++
		}
		rep[end-k] = int32(min(i-k, limit))
		lt, rt = k, i-1
	}
	d.repeat = rep
}

// collect is step 3: the token after each repeat of the suffix would extend
// it; remember the longest repeat per such token. As in llama.cpp, with
// allowed = 0 a repeat of length 0 counts too.
func (d *dryState) collect(last []int32, allowed int) {
	for i := 0; i < len(last)-1; i++ {
		r := d.repeat[i]
		if int(r) < allowed {
			continue
		}
		tok := last[i+1]
		if d.maxRepeat[tok] < 0 {
			d.touched = append(d.touched, tok)
		}
		d.maxRepeat[tok] = max(d.maxRepeat[tok], r)
	}
}

// apply is step 4, then clears the per-step table.
func (d *dryState) apply(c *cands, p dryParams, nVocab int) {
	maxExp := 0
	if p.base > 1.000001 {
		maxExp = int(floatMaxLog / math.Log(float64(p.base)))
	}
	if c.identity(nVocab) {
		for _, tok := range d.touched {
			d.penalize(&c.data[tok], p, maxExp)
		}
	} else {
		for i := range c.data {
			d.penalize(&c.data[i], p, maxExp)
		}
	}
	for _, tok := range d.touched {
		d.maxRepeat[tok] = -1
	}
	d.touched = d.touched[:0]
}

func (d *dryState) penalize(x *cand, p dryParams, maxExp int) {
	r := d.maxRepeat[x.id]
	if r < 0 || d.brk.singleToken(x.id) {
		return
	}
	e := int(r) - p.allowed
	if maxExp > 0 && e > maxExp {
		e = maxExp
	}
	x.logit -= p.multiplier * float32(math.Pow(float64(p.base), float64(e)))
}
