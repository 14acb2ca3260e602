package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ugmModel is llama.cpp's unigram (T5) tokenizer state: the tokens Viterbi
// may use, the user-defined tokens that bypass normalisation, and the
// optional SentencePiece precompiled charsmap.
type ugmModel struct {
	matchable   map[string]int32 // normal, user-defined and unused tokens
	userDefined map[string]bool
	maxUserLen  int
	unkScore    float64
	xcda        []uint32 // XOR-compressed double array, little-endian entries
	repl        []byte   // NUL-terminated replacement strings
}

// unkPenalty is subtracted from the lowest normal score to score unknowns.
const unkPenalty = 10.0

func newUGM(t *Tokenizer, charsmap []byte) (*ugmModel, error) {
	u := &ugmModel{matchable: map[string]int32{}, userDefined: map[string]bool{}}
	minScore, maxScore := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for i, s := range t.tokens {
		a := t.attrs[i]
		if a&attrNormal != 0 {
			minScore, maxScore = min(minScore, t.scores[i]), max(maxScore, t.scores[i])
		}
		if a&(attrNormal|attrUserDefined|attrUnused) != 0 {
			u.matchable[s] = int32(i)
		}
		if a&attrUserDefined != 0 {
			u.userDefined[s] = true
			u.maxUserLen = max(u.maxUserLen, len(s))
		}
	}
	u.unkScore = float64(minScore - unkPenalty)
	if len(charsmap) > 0 {
		if err := u.loadCharsmap(charsmap); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (u *ugmModel) loadCharsmap(cm []byte) error {
	if len(cm) < 4 {
		return fmt.Errorf("%w: precompiled charsmap of %d bytes", ErrVocab, len(cm))
	}
	n := uint64(binary.LittleEndian.Uint32(cm))
	if n+4 >= uint64(len(cm)) || n%4 != 0 {
		return fmt.Errorf("%w: precompiled charsmap blob of %d bytes in %d", ErrVocab, n, len(cm))
	}
	u.xcda = make([]uint32, n/4)
	for i := range u.xcda {
		u.xcda[i] = binary.LittleEndian.Uint32(cm[4+4*i:])
	}
	u.repl = cm[4+n:]
	return nil
}

// best is the best tokenization of a prefix: its last token, where that
// token starts, and the total score.
type best struct {
	id    int32
	start int
	score float64
}

// encode is llama.cpp's llm_tokenizer_ugm_session::tokenize: Viterbi over
// the normalised text, consecutive unknowns merged into one.
func (u *ugmModel) encode(t *Tokenizer, text string, out []int32) []int32 {
	norm := u.normalize(t, text)
	if norm == "" {
		return out
	}
	res := make([]best, len(norm)+1)
	for i := range res {
		res[i] = best{id: t.unk, score: -math.MaxFloat64}
	}
	res[0].score = 0
	for off := 0; off < len(norm); {
		n := min(utf8Len(norm[off]), len(norm)-off)
		u.relax(t, norm, off, n, res)
		off += n
	}
	return appendBest(t, res, out)
}

// relax scores every matchable token starting at off, and the unknown
// token for the code point at off when no token covers exactly it.
func (u *ugmModel) relax(t *Tokenizer, norm string, off, n int, res []best) {
	cur := res[off].score
	single := false
	for end := off + 1; end <= len(norm) && end-off <= t.maxTokenLen; end++ {
		id, ok := u.matchable[norm[off:end]]
		if !ok {
			continue
		}
		single = single || end-off == n
		score := float64(t.scores[id])
		if t.attrs[id]&attrUserDefined != 0 {
			score = 0
		}
		if cur+score > res[end].score {
			res[end] = best{id: id, start: off, score: cur + score}
		}
	}
	if !single && cur+u.unkScore > res[off+n].score {
		res[off+n] = best{id: t.unk, start: off, score: cur + u.unkScore}
	}
}

func appendBest(t *Tokenizer, res []best, out []int32) []int32 {
	n0 := len(out)
	prevUnk := false
	for b := res[len(res)-1]; ; b = res[b.start] {
		isUnk := b.id == t.unk
		if !(prevUnk && isUnk) && b.id != noToken {
			out = append(out, b.id)
		}
		if b.start == 0 {
			break
		}
		prevUnk = isUnk
	}
	for i, j := n0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// normalize is llama.cpp's UGM normaliser: charsmap replacements, spaces
// escaped to U+2581, an optional leading space, and runs of spaces merged
// when remove_extra_whitespaces is set.
func (u *ugmModel) normalize(t *Tokenizer, in string) string {
	space := " "
	if t.escapeWS {
		space = "\u2581"
	}
	prepend := !t.treatWSAsSuffix && t.addSpacePrefix
	appendSp := t.treatWSAsSuffix && t.addSpacePrefix
	merge := t.removeExtraWS
	var b []byte
	prepended, inWord := false, false
	for off := 0; off < len(in); {
		piece, used := u.normalizePrefix(in, off)
		for i := 0; i < len(piece); i++ {
			c := piece[i]
			if c != ' ' {
				if !inWord {
					inWord = true
					if (prepend && !prepended) || merge {
						b = append(b, space...)
						prepended = true
					}
				}
				b = append(b, c)
				continue
			}
			inWord = false
			if !merge {
				b = append(b, space...)
			}
		}
		off += used
	}
	if appendSp {
		b = append(b, space...)
	}
	return string(b)
}

// normalizePrefix returns the normalised form of the input at off and how
// many input bytes it consumed.
func (u *ugmModel) normalizePrefix(in string, off int) (string, int) {
	for n := min(u.maxUserLen, len(in)-off); n > 0; n-- {
		if u.userDefined[in[off:off+n]] {
			return in[off : off+n], n
		}
	}
	if s, n, ok := u.charsmapMatch(in, off); ok {
		return s, n
	}
	if _, n, ok := decodeCpt(in, off); ok {
		return in[off : off+n], n
	}
	return "\uFFFD", 1
}

// charsmapMatch walks the XCDA for the longest input prefix with a
// replacement string. Malformed tables end the walk (llama.cpp throws).
func (u *ugmModel) charsmapMatch(in string, off int) (string, int, bool) {
	if len(u.xcda) == 0 {
		return "", 0, false
	}
	node, ok := u.base(0)
	bestLen, bestOff := 0, uint32(0)
	for p := off; ok && p < len(in) && in[p] != 0; p++ {
		c := uint32(in[p])
		node ^= c
		e, inRange := u.entry(node)
		if !inRange || e&(1<<31|0xFF) != c {
			break
		}
		leaf := e>>8&1 != 0
		var b uint32
		b, ok = u.base(node)
		node ^= b
		if leaf {
			v, inRange := u.entry(node)
			if !inRange {
				break
			}
			bestLen, bestOff = p-off+1, v&(1<<31-1)
		}
	}
	if bestLen == 0 || int(bestOff) >= len(u.repl) {
		return "", 0, false
	}
	r := u.repl[bestOff:]
	end := 0
	for end < len(r) && r[end] != 0 {
		end++
	}
	if end == len(r) {
		return "", 0, false
	}
	return string(r[:end]), bestLen, true
}

func (u *ugmModel) entry(i uint32) (uint32, bool) {
	if int(i) >= len(u.xcda) {
		return 0, false
	}
	return u.xcda[i], true
}

// base is the BASE field: bits 10-30, shifted left by 8 when bit 9 is set.
func (u *ugmModel) base(i uint32) (uint32, bool) {
	e, ok := u.entry(i)
	return (e >> 10) << ((e & (1 << 9)) >> 6), ok
}
