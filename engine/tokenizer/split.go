package tokenizer

import "unicode"

// outOfRange is what a segment cursor reads past either end.
const outOfRange = -1

// segment is a cursor over one segment [ini, end) of the code points, with
// the bookkeeping of llama.cpp's hand-written splitters: words are emitted
// by their end position and out collects their lengths.
type segment struct {
	cpts     []rune
	ini, end int
	prev     int
	out      []int
}

func (s *segment) cpt(p int) rune {
	if p >= s.ini && p < s.end {
		return s.cpts[p]
	}
	return outOfRange
}

func (s *segment) flags(p int) cptFlags {
	if p >= s.ini && p < s.end {
		return flagsOf(s.cpts[p])
	}
	return 0
}

// add emits the word ending at end and returns its length.
func (s *segment) add(end int) int {
	n := end - s.prev
	if n > 0 {
		s.out = append(s.out, n)
	}
	s.prev = end
	return n
}

// eachSegment runs step over every segment; step consumes from pos and
// returns the new position.
func eachSegment(cpts []rune, offsets []int, step func(s *segment, pos int) int) []int {
	s := &segment{cpts: cpts, out: make([]int, 0, len(offsets))}
	start := 0
	for _, off := range offsets {
		s.ini, s.end, s.prev = start, start+off, start
		start += off
		for pos := s.ini; pos < s.end; {
			pos = step(s, pos)
		}
	}
	return s.out
}

// splitGPT2 is llama.cpp's unicode_regex_split_custom_gpt2:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
func splitGPT2(cpts []rune, offsets []int) []int {
	return eachSegment(cpts, offsets, gpt2Step)
}

func gpt2Step(s *segment, pos int) int {
	c := s.cpt(pos)
	if n, ok := contraction(s, pos, false); ok {
		return pos + s.add(pos+n)
	}
	f2 := s.flags(pos)
	if c == ' ' {
		f2 = s.flags(pos + 1)
	}
	for _, class := range []func(cptFlags) bool{isLetter, isNumber, isOther} {
		if class(f2) {
			if c == ' ' {
				pos++
			}
			for class(f2) {
				pos++
				f2 = s.flags(pos)
			}
			s.add(pos)
			return pos
		}
	}
	return whitespaceRun(s, pos, false)
}

func isLetter(f cptFlags) bool { return f&fLetter != 0 }
func isNumber(f cptFlags) bool { return f&fNumber != 0 }

// isOther is [^\s\p{L}\p{N}] for a code point inside the segment.
func isOther(f cptFlags) bool { return f&(fWhitespace|fLetter|fNumber) == 0 && f != 0 }

// contraction matches 's|'t|'re|'ve|'m|'ll|'d at pos (case-insensitively
// for LLaMA-3) and returns its length.
func contraction(s *segment, pos int, fold bool) (int, bool) {
	if s.cpt(pos) != '\'' || pos+1 >= s.end {
		return 0, false
	}
	lower := func(r rune) rune {
		if fold && r >= 0 {
			return unicode.ToLower(r)
		}
		return r
	}
	n := lower(s.cpt(pos + 1))
	if n == 's' || n == 't' || n == 'm' || n == 'd' {
		return 2, true
	}
	if pos+2 < s.end {
		nn := lower(s.cpt(pos + 2))
		if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
			return 3, true
		}
	}
	return 0, false
}

// whitespaceRun handles \s*[\r\n]+ (LLaMA-3 only), \s+(?!\S), \s+ and the
// no-match case (one code point).
func whitespaceRun(s *segment, pos int, newlines bool) int {
	n, lastRN := 0, 0
	for s.flags(pos+n)&fWhitespace != 0 {
		if c := s.cpt(pos + n); newlines && (c == '\r' || c == '\n') {
			lastRN = pos + n + 1
		}
		n++
	}
	switch {
	case lastRN > 0:
		pos = lastRN
	case n > 1 && s.cpt(pos+n) != outOfRange:
		pos += n - 1
	case n > 0:
		pos += n
	default:
		pos++
	}
	s.add(pos)
	return pos
}

// splitLlama3 is llama.cpp's unicode_regex_split_custom_llama3:
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(cpts []rune, offsets []int) []int {
	return eachSegment(cpts, offsets, llama3Step)
}

func llama3Step(s *segment, pos int) int {
	c, f := s.cpt(pos), s.flags(pos)
	if n, ok := contraction(s, pos, true); ok {
		return pos + s.add(pos+n)
	}
	if !(c == '\r' || c == '\n' || isNumber(f)) && (isLetter(f) || isLetter(s.flags(pos+1))) {
		pos++
		for isLetter(s.flags(pos)) {
			pos++
		}
		s.add(pos)
		return pos
	}
	if isNumber(f) {
		ini := pos
		for isNumber(s.flags(pos)) {
			pos++
			if pos-ini >= 3 {
				s.add(pos)
				ini = pos
			}
		}
		s.add(pos)
		return pos
	}
	f2 := f
	if c == ' ' {
		f2 = s.flags(pos + 1)
	}
	if f2&(fWhitespace|fLetter|fNumber) == 0 && f != 0 {
		if c == ' ' {
			pos++
		}
		for isOther(f2) {
			pos++
			f2 = s.flags(pos)
		}
		for c2 := s.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = s.cpt(pos) {
			pos++
		}
		s.add(pos)
		return pos
	}
	return whitespaceRun(s, pos, true)
}
