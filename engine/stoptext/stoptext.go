// Package stoptext finds stop texts in streamed generated text: the
// server's stop strings and the end-of-text markers some models spell out
// of ordinary pieces (run, chat and the GUI). One implementation, so the
// CLI and the server hold back and cut text the same way.
package stoptext

import "strings"

// Matcher finds stop strings in streamed text. Text that could still be
// the start of a stop string is held back until the next piece decides it,
// so no part of a stop string is ever sent, even split across tokens.
type Matcher struct {
	Stops   []string
	pending string // held back: a suffix that some stop string starts with
	hit     bool   // a stop string was found; nothing more is emitted
}

// Hit reports whether a stop string was found.
func (s *Matcher) Hit() bool { return s.hit }

// Add takes the next piece and returns what may be sent now. Once a stop
// string is found it returns the text before it and then nothing.
func (s *Matcher) Add(piece string) string {
	if s.hit {
		return ""
	}
	text := s.pending + piece
	if i := s.firstStop(text); i >= 0 {
		s.hit, s.pending = true, ""
		return text[:i]
	}
	keep := s.partialSuffix(text)
	s.pending = text[len(text)-keep:]
	return text[:len(text)-keep]
}

// Flush releases the held-back text at the end of generation: it was no
// stop string after all.
func (s *Matcher) Flush() string {
	t := s.pending
	s.pending = ""
	return t
}

// firstStop is the earliest index at which any stop string occurs, or -1.
func (s *Matcher) firstStop(text string) int {
	best := -1
	for _, st := range s.Stops {
		if i := strings.Index(text, st); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// partialSuffix is the length of the longest suffix of text that is a
// proper prefix of a stop string. Pieces are whole UTF-8 characters, and
// a prefix of a valid string cannot start inside a character, so holding
// it back never splits one.
func (s *Matcher) partialSuffix(text string) int {
	best := 0
	for _, st := range s.Stops {
		for n := min(len(st)-1, len(text)); n > best; n-- {
			if strings.HasSuffix(text, st[:n]) {
				best = n
				break
			}
		}
	}
	return best
}
