package tokenizer

import "unicode"

// encodeWPM is llama.cpp b4748's WordPiece: normalise and split into words,
// then match each "▁word" greedily by longest token; a word with an
// unmatchable position becomes a single unknown token.
func (t *Tokenizer) encodeWPM(text string, out []int32) []int32 {
	for _, w := range wpmWords(text) {
		out = t.wpmWord("\u2581"+w, out)
	}
	return out
}

func (t *Tokenizer) wpmWord(w string, out []int32) []int32 {
	n0 := len(out)
	for i := 0; i < len(w); {
		j := min(len(w), i+t.maxTokenLen+1)
		for ; j > i; j-- {
			if id, ok := t.toID[w[i:j]]; ok {
				out = append(out, id)
				break
			}
		}
		if j == i {
			out = out[:n0]
			break
		}
		i = j
	}
	if len(out) == n0 && t.unk != noToken {
		out = append(out, t.unk)
	}
	return out
}

// wpmWords is b4748's preprocess: every code point is replaced by the first
// code point of its NFD form and lowercased; whitespace separates words;
// NUL, U+FFFD and control characters are dropped; punctuation, ASCII
// symbols and CJK ideographs are words of their own.
func wpmWords(text string) []string {
	words := []string{}
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range codepoints(text) {
		r = nfdFirst(r)
		f := flagsOf(r)
		if f&fWhitespace != 0 {
			flush()
			continue
		}
		if r == 0 || r == replacementChar || f&fControl != 0 {
			continue
		}
		lower := unicode.ToLower(r)
		if f&fPunct != 0 || (r < 0x7F && f&fSymbol != 0) || isChineseChar(r) {
			flush()
			words = append(words, string(appendCpt(nil, lower)))
			continue
		}
		cur = appendCpt(cur, lower)
	}
	flush()
	return words
}

func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) || // 0x2B820 in Unicode; HF's Rust code says 0x2B920
		(r >= 0x0F900 && r <= 0x0FAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}
