package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// buildPieces caches every token's bytes as llama_token_to_piece renders
// them with special = true.
func (t *Tokenizer) buildPieces() {
	t.pieces = make([][]byte, len(t.tokens))
	for i := range t.tokens {
		t.pieces[i] = t.renderPiece(int32(i))
	}
}

func (t *Tokenizer) renderPiece(id int32) []byte {
	s, a := t.tokens[id], t.attrs[id]
	switch {
	case a&(attrUnknown|attrControl|attrUserDefined) != 0:
		return []byte(s)
	case a&attrNormal != 0 && t.kind == kindBPE && !t.escapeWS:
		return decodeByteLevel(s)
	case a&attrNormal != 0:
		return []byte(strings.ReplaceAll(s, "\u2581", " "))
	case a&attrByte != 0:
		if b, ok := parseByteToken(s); ok {
			return []byte{b}
		}
	}
	return nil
}

// parseByteToken reads "<0xXX>" as llama.cpp's token_to_byte does.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(s[3])
	lo, ok2 := hexVal(s[4])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeByteLevel is llama_decode_text: each code point of a byte-level BPE
// token maps back to one byte; code points outside the table are written
// as llama.cpp does ("[UNK_BYTE_0x" + hex + whole token + "]").
func decodeByteLevel(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range codepoints(s) {
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
			continue
		}
		out = append(out, "[UNK_BYTE_0x"...)
		for _, c := range appendCpt(nil, r) {
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		out = append(out, s...)
		out = append(out, ']')
	}
	return out
}

// Piece is llama_token_to_piece(id, special = true): the token's bytes,
// control and unknown tokens rendered as their text. Out-of-range ids give
// nil. The slice is shared; callers must not modify it.
func (t *Tokenizer) Piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.pieces) {
		return nil
	}
	return t.pieces[id]
}

// piece is token_to_piece with special = false: control and unknown tokens
// render as nothing.
func (t *Tokenizer) piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.pieces) || t.attrs[id]&(attrUnknown|attrControl) != 0 {
		return nil
	}
	return t.pieces[id]
}

// Decode is llama_detokenize(ids, remove_special = false, unparse_special =
// false): pieces concatenated, control tokens dropped, the first piece's
// leading space dropped when the model adds a space prefix, and BPE
// clean-up of spaces before punctuation where the model asks for it. The
// bytes are returned as they are, valid UTF-8 or not.
func (t *Tokenizer) Decode(ids []int32) string {
	var b []byte
	for i, id := range ids {
		p := t.piece(id)
		if i == 0 && t.addSpacePrefix && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		b = append(b, p...)
	}
	if t.cleanSpaces {
		b = cleanSpaces(b)
	}
	return string(b)
}

// cleanSpaces is llama_detokenize's clean_up_tokenization_spaces, three
// in-place passes: " ?" " !" " ." " ," lose the space; a lone apostrophe
// between spaces loses both; " 's" " 'm" " 're" " 've" lose the space.
func cleanSpaces(t []byte) []byte {
	t = cleanPass(t, func(t []byte, i int) bool {
		x := t[i]
		return t[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')
	})
	t = cleanApostrophes(t)
	return cleanPass(t, func(t []byte, i int) bool {
		if t[i-1] != ' ' || t[i] != '\'' || i+1 >= len(t) {
			return false
		}
		switch x1 := t[i+1]; {
		case x1 == 's' || x1 == 'm':
			return true
		case x1 == 't' || x1 == 'd' || i+2 >= len(t):
			return false
		default:
			x2 := t[i+2]
			return (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')
		}
	})
}

// cleanPass copies t onto itself, dropping the byte before i wherever
// drop(t, i) holds; decisions read the pass's input, as in llama.cpp.
func cleanPass(t []byte, drop func(t []byte, i int) bool) []byte {
	if len(t) == 0 {
		return t
	}
	in := append([]byte(nil), t...)
	out := t[:1]
	for i := 1; i < len(in); i++ {
		if drop(in, i) {
			out = out[:len(out)-1]
		}
		out = append(out, in[i])
	}
	return out
}

func cleanApostrophes(t []byte) []byte {
	if len(t) == 0 {
		return t
	}
	in := append([]byte(nil), t...)
	out := t[:1]
	for i := 1; i < len(in); i++ {
		x := in[i]
		if x == '\'' && i+1 < len(in) && in[i-1] == ' ' && in[i+1] == ' ' {
			out = out[:len(out)-1]
			in[i+1] = 0 // llama.cpp writes a NUL over the next space and skips it
			out = append(out, x)
			i++
			continue
		}
		out = append(out, x)
	}
	return out
}

// Decoder turns a stream of token ids into text as Decode would, holding
// back bytes that later tokens may still change: an incomplete UTF-8
// sequence, and (where the model cleans spaces) a tail with a space or an
// apostrophe in its last three bytes. Each byte of invalid UTF-8 becomes
// one U+FFFD.
type Decoder struct {
	t       *Tokenizer
	started bool
	pending []byte
}

// NewDecoder returns a streaming decoder.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t} }

// Add appends token id and returns the text it completes: the new valid
// UTF-8 that no later token can change (possibly ""). The concatenation of
// every Add and the final Flush is Decode of the ids, with invalid bytes
// replaced.
func (d *Decoder) Add(id int32) string {
	p := d.t.piece(id)
	if !d.started && d.t.addSpacePrefix && len(p) > 0 && p[0] == ' ' {
		p = p[1:]
	}
	d.started = true
	d.pending = append(d.pending, p...)
	cut := d.stableLen()
	if cut == 0 {
		return ""
	}
	out := d.render(d.pending[:cut])
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return out
}

// Flush returns everything still held back and resets the decoder's
// buffer (a following Add continues the same stream).
func (d *Decoder) Flush() string {
	out := d.render(d.pending)
	d.pending = d.pending[:0]
	return out
}

func (d *Decoder) render(b []byte) string {
	if d.t.cleanSpaces {
		b = cleanSpaces(append([]byte(nil), b...))
	}
	return validUTF8(b)
}

// stableLen is the length of the pending prefix no later token can change.
func (d *Decoder) stableLen() int {
	n := len(d.pending) - incompleteTail(d.pending)
	if !d.t.cleanSpaces {
		return n
	}
	for ; n > 0; n-- {
		if !touchesCleanup(d.pending[:n]) {
			return n
		}
	}
	return 0
}

// touchesCleanup reports whether the last three bytes of b hold a space or
// an apostrophe, so that clean-up decisions may depend on what follows.
func touchesCleanup(b []byte) bool {
	for i := max(0, len(b)-3); i < len(b); i++ {
		if b[i] == ' ' || b[i] == '\'' {
			return true
		}
	}
	return false
}

// incompleteTail is the length of a trailing UTF-8 sequence that is valid
// so far but unfinished.
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 {
			tail := b[len(b)-k:]
			if need := seqLen(c); need > k && illFormedLen(tail) == k {
				return k
			}
			return 0
		}
	}
	return 0
}

// seqLen is the length a lead byte announces, 0 for a byte that cannot lead.
func seqLen(c byte) int {
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 2
	case c >= 0xE0 && c <= 0xEF:
		return 3
	case c >= 0xF0 && c <= 0xF4:
		return 4
	}
	return 0
}

// illFormedLen is the length of the maximal prefix of b that could start a
// well-formed sequence (at least 1).
func illFormedLen(b []byte) int {
	need := seqLen(b[0])
	if need == 0 {
		return 1
	}
	lo, hi := byte(0x80), byte(0xBF)
	switch b[0] {
	case 0xE0:
		lo = 0xA0
	case 0xED:
		hi = 0x9F
	case 0xF0:
		lo = 0x90
	case 0xF4:
		hi = 0x8F
	}
	n := 1
	for ; n < need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// validUTF8 replaces every byte that is not part of a well-formed sequence
// with U+FFFD (one per byte, as the reference texts were written).
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			n = 1
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}
