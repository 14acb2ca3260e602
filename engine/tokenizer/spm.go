package tokenizer

// symbol is one piece of the text being merged: bytes [start, start+n) of
// the text, linked to its live neighbours (-1 at the ends). n == 0 marks a
// symbol merged into its left neighbour.
type symbol struct {
	start, n   int
	prev, next int
}

// splitSymbols cuts text at UTF-8 lead bytes (unvalidated, as llama.cpp).
func splitSymbols(text string, syms []symbol) []symbol {
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		next := len(syms) + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, symbol{start: off, n: n, prev: len(syms) - 1, next: next})
		off += n
	}
	return syms
}

// mergeRight merges symbol r into its left neighbour l.
func mergeRight(syms []symbol, l, r int) {
	syms[l].n += syms[r].n
	syms[r].n = 0
	syms[l].next = syms[r].next
	if syms[r].next >= 0 {
		syms[syms[r].next].prev = l
	}
}

// spmBigram is a candidate merge of two adjacent symbols whose
// concatenation (size bytes) is a token with the given score.
type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// spmFirst orders SPM bigrams: highest score first, then the leftmost.
func spmFirst(a, b *spmBigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

// encodeSPM is llama.cpp's llm_tokenizer_spm_session::tokenize on escaped
// text: greedy merges of adjacent symbols by token score, then byte
// fallback for symbols that are not tokens.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	syms := splitSymbols(text, nil)
	q := &queue[spmBigram]{less: spmFirst}
	for i := 1; i < len(syms); i++ {
		t.spmBigram(q, text, syms, i-1, i)
	}
	for q.len() > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		mergeRight(syms, b.left, b.right)
		t.spmBigram(q, text, syms, syms[b.left].prev, b.left)
		t.spmBigram(q, text, syms, b.left, syms[b.left].next)
	}
	for i := 0; i != -1 && len(syms) > 0; i = syms[i].next {
		out = t.spmSymbol(text[syms[i].start:syms[i].start+syms[i].n], out)
	}
	return out
}

func (t *Tokenizer) spmBigram(q *queue[spmBigram], text string, syms []symbol, l, r int) {
	if l < 0 || r < 0 {
		return
	}
	s := text[syms[l].start : syms[l].start+syms[l].n+syms[r].n]
	id, ok := t.toID[s]
	if !ok {
		return
	}
	q.push(spmBigram{left: l, right: r, score: t.scores[id], size: len(s)})
}

// spmSymbol emits a final symbol: its token, or one byte token per byte.
func (t *Tokenizer) spmSymbol(s string, out []int32) []int32 {
	if id, ok := t.toID[s]; ok {
		return append(out, id)
	}
	for i := 0; i < len(s); i++ {
		if id := t.byteToken(s[i]); id != noToken {
			out = append(out, id)
		}
	}
	return out
}

// byteToken is llama.cpp's byte_to_token for SPM/UGM: "<0xXX>", else the
// byte itself as a token. Where llama.cpp would throw (neither exists) the
// unknown token stands in.
func (t *Tokenizer) byteToken(b byte) int32 {
	const hex = "0123456789ABCDEF"
	if id, ok := t.toID[string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})]; ok {
		return id
	}
	if id, ok := t.toID[string([]byte{b})]; ok {
		return id
	}
	return t.unk
}
