package tokenizer

import "strings"

// fragment is raw text, or a special token already matched (tok >= 0).
type fragment struct {
	tok  int32
	text string
}

// Encode tokenizes text as llama_tokenize does. addSpecial adds BOS/EOS
// (CLS/SEP for WordPiece) as the model's flags say; parseSpecial lets
// control tokens written in the text match as themselves (user-defined
// tokens always do).
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	var frags []fragment
	if text != "" {
		frags = t.partition(text, parseSpecial)
	}
	switch t.kind {
	case kindSPM:
		return t.encodeFragmentsSPM(frags, addSpecial)
	case kindWPM:
		return t.encodeFragmentsWPM(frags, addSpecial)
	}
	var out []int32
	if addSpecial && t.addBOS && t.bos != noToken {
		out = append(out, t.bos)
	}
	for _, f := range frags {
		switch {
		case f.tok >= 0:
			out = append(out, f.tok)
		case t.kind == kindUGM:
			out = t.ugm.encode(t, f.text, out)
		default:
			out = t.encodeBPE(t.escape(f.text), out)
		}
	}
	if addSpecial && t.addEOS && t.eos != noToken {
		out = append(out, t.eos)
	}
	return out
}

// escape replaces spaces with U+2581 where the vocabulary stores them so.
func (t *Tokenizer) escape(s string) string {
	if !t.escapeWS {
		return s
	}
	return strings.ReplaceAll(s, " ", "\u2581")
}

func (t *Tokenizer) encodeFragmentsSPM(frags []fragment, addSpecial bool) []int32 {
	var out []int32
	if addSpecial && t.addBOS && t.bos != noToken {
		out = append(out, t.bos)
	}
	prevSpecial := true // the first fragment gets the space prefix too
	for _, f := range frags {
		if f.tok >= 0 {
			out = append(out, f.tok)
			prevSpecial = true
			continue
		}
		s := f.text
		if t.addSpacePrefix && prevSpecial {
			s = " " + s
		}
		out = t.encodeSPM(strings.ReplaceAll(s, " ", "\u2581"), out)
		prevSpecial = false
	}
	if addSpecial && t.addEOS && t.eos != noToken {
		out = append(out, t.eos)
	}
	return out
}

func (t *Tokenizer) encodeFragmentsWPM(frags []fragment, addSpecial bool) []int32 {
	var out []int32
	if addSpecial && t.bos != noToken {
		out = append(out, t.bos)
	}
	for _, f := range frags {
		if f.tok >= 0 {
			out = append(out, f.tok)
			continue
		}
		out = t.encodeWPM(f.text, out)
	}
	if addSpecial && t.sep != noToken {
		out = append(out, t.sep)
	}
	return out
}

// partition is llama.cpp's tokenizer_st_partition: every special token, in
// the cache's order (longest first), splits the raw fragments around its
// occurrences. Control and unknown tokens take part only with parseSpecial.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{tok: -1, text: text}}
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		frags = splitOnToken(frags, id, t.tokens[id], a)
	}
	return frags
}

func splitOnToken(frags []fragment, id int32, tok string, a attr) []fragment {
	out := make([]fragment, 0, len(frags))
	for _, f := range frags {
		if f.tok >= 0 || !strings.Contains(f.text, tok) {
			out = append(out, f)
			continue
		}
		rest := f.text
		for {
			i := strings.Index(rest, tok)
			if i < 0 {
				if rest != "" {
					out = append(out, fragment{tok: -1, text: rest})
				}
				break
			}
			left := rest[:i]
			if a&attrLStrip != 0 {
				left = strings.TrimRightFunc(left, isSpaceRune)
			}
			if left != "" {
				out = append(out, fragment{tok: -1, text: left})
			}
			out = append(out, fragment{tok: id})
			rest = rest[i+len(tok):]
			if a&attrRStrip != 0 {
				rest = strings.TrimLeftFunc(rest, isSpaceRune)
			}
		}
	}
	return out
}

func isSpaceRune(r rune) bool { return r < 0x80 && isSpaceC(byte(r)) }
