package tokenizer

// bpeBigram is a candidate merge of two adjacent symbols whose texts form
// a ranked merge pair; text is the concatenation when it was queued.
type bpeBigram struct {
	left, right int
	rank        int32
	text        string
}

// bpeFirst orders BPE bigrams: lowest rank first, then the leftmost.
func bpeFirst(a, b *bpeBigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// encodeBPE is llama.cpp's llm_tokenizer_bpe_session::tokenize: split into
// words by the pre-tokenizer, merge within each word by rank.
func (t *Tokenizer) encodeBPE(text string, out []int32) []int32 {
	for _, w := range t.pre.words(text, true) {
		out = t.encodeWord(w, out)
	}
	return out
}

func (t *Tokenizer) encodeWord(w string, out []int32) []int32 {
	if w == "" {
		return out
	}
	if _, ok := t.toID[w]; ok && t.ignoreMerges {
		return t.bpeSymbol(w, out)
	}
	syms := splitSymbols(w, nil)
	q := &queue[bpeBigram]{less: bpeFirst}
	for i := 1; i < len(syms); i++ {
		t.bpeBigram(q, w, syms, i-1, i)
	}
	for q.len() > 0 {
		b := q.pop()
		l, r := syms[b.left], syms[b.right]
		if l.n == 0 || r.n == 0 || l.start+l.n != r.start || w[l.start:r.start+r.n] != b.text {
			continue
		}
		mergeRight(syms, b.left, b.right)
		t.bpeBigram(q, w, syms, syms[b.left].prev, b.left)
		t.bpeBigram(q, w, syms, b.left, syms[b.left].next)
	}
	for i := 0; i != -1; i = syms[i].next {
		out = t.bpeSymbol(w[syms[i].start:syms[i].start+syms[i].n], out)
	}
	return out
}

func (t *Tokenizer) bpeBigram(q *queue[bpeBigram], w string, syms []symbol, l, r int) {
	if l < 0 || r < 0 {
		return
	}
	a := w[syms[l].start : syms[l].start+syms[l].n]
	b := w[syms[r].start : syms[r].start+syms[r].n]
	rank, ok := t.ranks[[2]string{a, b}]
	if !ok {
		return
	}
	q.push(bpeBigram{left: l, right: r, rank: rank, text: w[syms[l].start : syms[r].start+syms[r].n]})
}

// bpeSymbol emits a final symbol: its token, or the tokens of its single
// bytes (bytes that are not tokens are dropped, as in llama.cpp).
func (t *Tokenizer) bpeSymbol(s string, out []int32) []int32 {
	if id, ok := t.toID[s]; ok {
		return append(out, id)
	}
	for i := 0; i < len(s); i++ {
		if id, ok := t.toID[s[i:i+1]]; ok {
			out = append(out, id)
		}
	}
	return out
}
