package llama2c

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"flowchat/engine/tokenizer"
)

// maxTokenizerSize bounds tokenizer.bin (real ones are well under 10 MB).
const maxTokenizerSize = 256 << 20

// ReadTokenizer reads tokenizer.bin: int32 max token length, then per
// token a float32 score, an int32 byte length and the bytes. vocab is the
// checkpoint's vocabulary size.
func ReadTokenizer(path string, vocab int) (*tokenizer.Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("llama2c tokenizer: %w", err)
	}
	if st.Size() > maxTokenizerSize {
		return nil, fmt.Errorf("%w: tokenizer %s is %d bytes", ErrFormat, path, st.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llama2c tokenizer: %w", err)
	}
	v, err := ParseTokenizer(data, vocab)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tokenizer.New(v)
}

// ParseTokenizer converts tokenizer.bin to a SentencePiece vocabulary: the
// export wrote "▁" as a space and BOS/EOS as "\n<s>\n" and "\n</s>\n".
func ParseTokenizer(data []byte, vocab int) (tokenizer.Vocab, error) {
	v := tokenizer.Vocab{Model: "llama", Tokens: make([]string, vocab), Scores: make([]float32, vocab), Types: make([]int32, vocab)}
	if len(data) < 4 || vocab <= 0 {
		return v, fmt.Errorf("%w: tokenizer of %d bytes", ErrFormat, len(data))
	}
	off := 4
	for i := 0; i < vocab; i++ {
		if len(data)-off < 8 {
			return v, fmt.Errorf("%w: tokenizer ends at token %d of %d", ErrFormat, i, vocab)
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		n := int(int32(binary.LittleEndian.Uint32(data[off+4:])))
		off += 8
		if n < 0 || n > len(data)-off {
			return v, fmt.Errorf("%w: token %d has length %d", ErrFormat, i, n)
		}
		text := string(data[off : off+n])
		off += n
		v.Tokens[i], v.Scores[i], v.Types[i] = pieceOf(text)
		if v.Types[i] == int32(tokenizer.TypeNormal) || v.Types[i] == int32(tokenizer.TypeByte) {
			v.Scores[i] = score
		}
	}
	return v, nil
}

func pieceOf(text string) (string, float32, int32) {
	switch text {
	case "<unk>":
		return text, 0, int32(tokenizer.TypeUnknown)
	case "\n<s>\n":
		return "<s>", 0, int32(tokenizer.TypeControl)
	case "\n</s>\n":
		return "</s>", 0, int32(tokenizer.TypeControl)
	}
	if len(text) == 6 && strings.HasPrefix(text, "<0x") && text[5] == '>' {
		return text, 0, int32(tokenizer.TypeByte)
	}
	return strings.ReplaceAll(text, " ", "\u2581"), 0, int32(tokenizer.TypeNormal)
}
