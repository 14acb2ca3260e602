package tokenizer

import (
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// cptFlags mirrors llama.cpp's unicode_cpt_flags: one general-category bit
// (or undefined for unassigned code points) plus the White_Space property.
// A zero value means "outside the segment" in the splitters, exactly as
// llama.cpp's default-constructed flags do.
type cptFlags uint16

const (
	fUndefined cptFlags = 1 << iota
	fNumber
	fLetter
	fSeparator
	fAccent
	fPunct
	fSymbol
	fControl
	fWhitespace
)

const fCategories cptFlags = 0xFF

// maxCodepoint bounds valid code points; larger values are "undefined".
const maxCodepoint = 0x110000

// replacementChar is what llama.cpp substitutes for an undecodable byte.
const replacementChar = 0xFFFD

var asciiFlags = func() (t [128]cptFlags) {
	for r := range t {
		t[r] = computeFlags(rune(r))
	}
	return t
}()

// flagsOf returns the flags of code point r.
func flagsOf(r rune) cptFlags {
	if r >= 0 && r < 128 {
		return asciiFlags[r]
	}
	return computeFlags(r)
}

func computeFlags(r rune) cptFlags {
	if r < 0 || r >= maxCodepoint {
		return fUndefined
	}
	f := categoryFlag(r)
	if unicode.Is(unicode.White_Space, r) {
		f |= fWhitespace
	}
	return f
}

func categoryFlag(r rune) cptFlags {
	switch {
	case unicode.IsLetter(r):
		return fLetter
	case unicode.Is(unicode.N, r):
		return fNumber
	case unicode.Is(unicode.P, r):
		return fPunct
	case unicode.Is(unicode.M, r):
		return fAccent
	case unicode.Is(unicode.S, r):
		return fSymbol
	case unicode.Is(unicode.Z, r):
		return fSeparator
	case unicode.Is(unicode.C, r): // Cc, Cf, Co, Cs; unassigned Cn is not in unicode.C
		return fControl
	}
	return fUndefined
}

// utf8Len is llama.cpp's unicode_len_utf8: the sequence length announced by
// a lead byte, without validation (continuation bytes count as 1).
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// decodeCpt is llama.cpp's unicode_cpt_from_utf8: it checks lead and
// continuation bits only (overlong forms and surrogates pass). ok is false
// where llama.cpp throws; callers then consume one byte as U+FFFD.
func decodeCpt(s string, i int) (r rune, size int, ok bool) {
	b := s[i]
	switch {
	case b&0x80 == 0:
		return rune(b), 1, true
	case b&0x40 == 0:
		return 0, 0, false
	case b&0x20 == 0:
		return decodeTail(s, i, 2, rune(b&0x1F))
	case b&0x10 == 0:
		return decodeTail(s, i, 3, rune(b&0x0F))
	case b&0x08 == 0:
		return decodeTail(s, i, 4, rune(b&0x07))
	}
	return 0, 0, false
}

func decodeTail(s string, i, n int, r rune) (rune, int, bool) {
	if i+n > len(s) {
		return 0, 0, false
	}
	for k := 1; k < n; k++ {
		c := s[i+k]
		if c&0xC0 != 0x80 {
			return 0, 0, false
		}
		r = r<<6 | rune(c&0x3F)
	}
	return r, n, true
}

// codepoints is llama.cpp's unicode_cpts_from_utf8: undecodable bytes become
// U+FFFD one byte at a time. Values past U+10FFFF (F5..F7 leads), which
// llama.cpp cannot re-encode and aborts on, are replaced the same way.
func codepoints(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n, ok := decodeCpt(s, i)
		if !ok || r >= maxCodepoint {
			out = append(out, replacementChar)
			i++
			continue
		}
		out = append(out, r)
		i += n
	}
	return out
}

// appendCpt is llama.cpp's unicode_cpt_to_utf8, which (unlike utf8.AppendRune)
// encodes surrogate code points as their three raw bytes.
func appendCpt(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	}
	return append(b, 0xF0|byte(r>>18), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
}

// byteToRune is GPT-2's bytes_to_unicode table: printable Latin-1 bytes map
// to themselves, the other 68 bytes to U+0100.. in byte order.
var byteToRune, runeToByte = func() (fwd [256]rune, rev map[rune]byte) {
	rev = make(map[rune]byte, 256)
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			fwd[b] = rune(b)
		} else {
			fwd[b] = 256 + n
			n++
		}
		rev[fwd[b]] = byte(b)
	}
	return fwd, rev
}()

// nfdFirst is llama.cpp's unicode_cpts_normalize_nfd: each code point is
// replaced by the first code point of its canonical decomposition (so "é"
// becomes "e" and the accent is dropped, not appended).
func nfdFirst(r rune) rune {
	if r < 0xC0 || r >= maxCodepoint || (r >= 0xD800 && r < 0xE000) {
		return r
	}
	for _, d := range norm.NFD.String(string(r)) {
		return d
	}
	return r
}

// isSpaceC is C's isspace in the "C" locale, used for LSTRIP/RSTRIP.
func isSpaceC(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}
