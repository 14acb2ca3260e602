package eval

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// The base-logits file (like llama-perplexity's --kl-divergence-base) holds
// the full-precision model's log-probabilities over the scored rows of every
// chunk, so quantized models are compared to it without the base loaded.
// Little-endian:
//
//	magic   "FCKLBASE"
//	version uint32 (1)
//	ctx, vocab, chunks uint32; bos int32
//	tokens  [chunks·ctx]int32 (the text's tokens, before BOS substitution)
//	then per chunk: [scored·vocab]float32 log-probabilities, scored = ctx − ctx/2 − 1
//
// The rows are float32: log-probabilities rounded to 16 bits would move the
// KL divergence of an 8-bit model by as much as its own value.
const baseMagic = "FCKLBASE"

// ErrBaseFormat is wrapped by every error about a malformed base file.
var ErrBaseFormat = errors.New("eval: malformed base-logits file")

// BaseHeader is the base file's header.
type BaseHeader struct {
	Ctx, Vocab, Chunks int
	BOS                int32
	Tokens             []int32
}

func (h *BaseHeader) opt() ChunkOptions {
	return ChunkOptions{Ctx: h.Ctx, BOS: h.BOS, MaxChunks: h.Chunks}
}

// WriteBase evaluates the base model over tokens and streams its header and
// log-probabilities to w. It returns the base model's perplexity; onChunk,
// if set, sees the running perplexity after each chunk and may stop the run.
func WriteBase(w io.Writer, s Scorer, tokens []int32, opt ChunkOptions, onChunk func(i, n int, running float64) bool) (PerplexityResult, error) {
	n, err := opt.chunks(len(tokens))
	if err != nil {
		return PerplexityResult{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var p PPL
	var running []float64
	lp := []float32(nil)
	err = eachChunk(s, tokens, opt, func(i int, chunk []int32, logits []float32, vocab int) error {
		if i == 0 {
			if err := writeHeader(bw, opt, vocab, n, tokens[:n*opt.Ctx]); err != nil {
				return err
			}
			lp = make([]float32, vocab)
		}
		for r := 0; r < opt.scored(); r++ {
			logSoftmax(logits[r*vocab:(r+1)*vocab], lp)
			p.Add(-float64(lp[chunk[opt.first()+r+1]]))
			if err := binary.Write(bw, binary.LittleEndian, lp); err != nil {
				return err
			}
		}
		running = append(running, p.Value())
		if onChunk != nil && !onChunk(i, n, p.Value()) {
			return ErrStopped
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	return p.result(running), err
}

func writeHeader(w io.Writer, opt ChunkOptions, vocab, chunks int, tokens []int32) error {
	hdr := []uint32{1, uint32(opt.Ctx), uint32(vocab), uint32(chunks), uint32(opt.BOS)}
	if _, err := io.WriteString(w, baseMagic); err != nil {
		return err
	}
	if err := binary.Write(w, binary.LittleEndian, hdr); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, tokens)
}

// logSoftmax writes log softmax(x) into dst, in float64 then rounded.
func logSoftmax(x, dst []float32) {
	lse := logSumExp(x)
	for i, v := range x {
		dst[i] = float32(float64(v) - lse)
	}
}

// Limits on a base file's header, so a corrupt one cannot ask for absurd
// allocations: 2^24 tokens of context or vocabulary, 2^28 tokens in all.
const (
	maxBaseDim    = 1 << 24
	maxBaseTokens = 1 << 28
)

// ReadBaseHeader reads and checks the header of a base file.
func ReadBaseHeader(r io.Reader) (*BaseHeader, error) {
	var magic [8]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:]) != baseMagic {
		return nil, fmt.Errorf("%w: no %s magic", ErrBaseFormat, baseMagic)
	}
	var f [5]uint32
	if err := binary.Read(r, binary.LittleEndian, &f); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBaseFormat, err)
	}
	if f[0] != 1 {
		return nil, fmt.Errorf("%w: version %d (this build reads 1)", ErrBaseFormat, f[0])
	}
	h := &BaseHeader{Ctx: int(f[1]), Vocab: int(f[2]), Chunks: int(f[3]), BOS: int32(f[4])}
	if h.Ctx < 4 || h.Ctx > maxBaseDim || h.Vocab < 1 || h.Vocab > maxBaseDim || h.Chunks < 1 || h.Chunks*h.Ctx > maxBaseTokens {
		return nil, fmt.Errorf("%w: context %d, vocabulary %d, %d chunks", ErrBaseFormat, h.Ctx, h.Vocab, h.Chunks)
	}
	toks, err := readInt32s(r, h.Chunks*h.Ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: tokens: %v", ErrBaseFormat, err)
	}
	for _, t := range toks {
		if t < 0 || int(t) >= h.Vocab {
			return nil, fmt.Errorf("%w: token %d outside the vocabulary (%d)", ErrBaseFormat, t, h.Vocab)
		}
	}
	h.Tokens = toks
	return h, nil
}

// readInt32s reads n values in pieces, so that a header claiming more data
// than the file holds fails at end of file before allocating it all.
func readInt32s(r io.Reader, n int) ([]int32, error) {
	var out []int32
	buf := make([]int32, min(n, 1<<16))
	for len(out) < n {
		b := buf[:min(len(buf), n-len(out))]
		if err := binary.Read(r, binary.LittleEndian, b); err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// KLResult compares a model against a base file.
type KLResult struct {
	PerplexityResult         // the compared model's perplexity over the same tokens
	BasePPL          float64 `json:"base_ppl"`
	KLD              float64 `json:"kld"` // mean KL(base ‖ model) per scored token, nats
	KLDStdErr        float64 `json:"kld_stderr"`
	KLDMedian        float64 `json:"kld_median"`
	KLD99            float64 `json:"kld_p99"`
	KLDMax           float64 `json:"kld_max"`
	Top1             float64 `json:"top1"` // fraction of rows whose argmax equals the base's
}

// CompareBase evaluates s over the base file's tokens (read from r, header
// first) and compares its distributions with the base's row by row;
// onChunk, if set, sees s's running perplexity after each chunk.
func CompareBase(r io.Reader, s Scorer, onChunk func(i, n int, running float64) bool) (KLResult, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	h, err := ReadBaseHeader(br)
	if err != nil {
		return KLResult{}, err
	}
	var c klAcc
	base := make([]float32, h.Vocab)
	lq := make([]float32, h.Vocab)
	opt := h.opt()
	err = eachChunk(s, h.Tokens, opt, func(i int, chunk []int32, logits []float32, vocab int) error {
		if vocab != h.Vocab {
			return fmt.Errorf("eval: the model has %d tokens of vocabulary, the base %d", vocab, h.Vocab)
		}
		for row := 0; row < opt.scored(); row++ {
			if err := binary.Read(br, binary.LittleEndian, base); err != nil {
				return fmt.Errorf("%w: chunk %d: %v", ErrBaseFormat, i+1, err)
			}
			logSoftmax(logits[row*vocab:(row+1)*vocab], lq)
			c.add(base, lq, int(chunk[opt.first()+row+1]))
		}
		c.running = append(c.running, c.ppl.Value())
		if onChunk != nil && !onChunk(i, h.Chunks, c.ppl.Value()) {
			return ErrStopped
		}
		return nil
	})
	return c.result(), err
}

// klAcc accumulates the comparison row by row.
type klAcc struct {
	ppl, basePPL PPL
	kld          []float64
	same         int
	running      []float64
}

// add records one row: base and model log-probabilities, the next token.
func (c *klAcc) add(base, lq []float32, tok int) {
	var kl float64
	for i, lb := range base {
		if p := math.Exp(float64(lb)); p > 0 {
			kl += p * (float64(lb) - float64(lq[i]))
		}
	}
	c.kld = append(c.kld, max(kl, 0))
	c.ppl.Add(-float64(lq[tok]))
	c.basePPL.Add(-float64(base[tok]))
	if argmax(base) == argmax(lq) {
		c.same++
	}
}

func (c *klAcc) result() KLResult {
	r := KLResult{PerplexityResult: c.ppl.result(c.running), BasePPL: c.basePPL.Value()}
	n := len(c.kld)
	if n == 0 {
		return r
	}
	var s, s2 float64
	for _, v := range c.kld {
		s += v
		s2 += v * v
	}
	r.KLD = s / float64(n)
	if n > 1 {
		r.KLDStdErr = math.Sqrt(max(s2/float64(n)-r.KLD*r.KLD, 0) / float64(n-1))
	}
	sorted := append([]float64(nil), c.kld...)
	sort.Float64s(sorted)
	r.KLDMedian, r.KLD99, r.KLDMax = sorted[n/2], sorted[min(n-1, n*99/100)], sorted[n-1]
	r.Top1 = float64(c.same) / float64(n)
	return r
}

// argmax returns the index of the largest value, the lowest on ties.
func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
