package sample

import (
	"math"
	"slices"
)

// cand is one token of the working distribution.
type cand struct {
	id    int32
	logit float32 // after the stages so far
	p     float32 // probability; valid after softmax until logits change
	aux   float32 // per-stage scratch (typical's shifted score, tfs's curvature)
}

// cands is the candidate buffer reused across steps: buf has room for the
// whole vocabulary, data is the live window of it (stages truncate the end,
// XTC drops the front).
type cands struct {
	buf     []cand
	alt     []cand // [nVocab] scratch for radix sorting and selection
	data    []cand
	sorted  bool // data is in descending logit order, ties by ascending id
	idOrder bool // data is in ascending id order (a stable sort then breaks ties by id)
}

func newCands(nVocab int) cands {
	return cands{buf: make([]cand, nVocab), alt: make([]cand, nVocab)}
}

// load copies logits into the buffer in token order; the caller's slice is
// never written.
func (c *cands) load(logits []float32) {
	c.data = c.buf[:len(logits)]
	for i, l := range logits {
		c.data[i] = cand{id: int32(i), logit: l}
	}
	c.sorted, c.idOrder = false, true
}

// identity reports whether data[i].id == i for every i: nothing was removed
// or moved yet, so a token's candidate is found by indexing.
func (c *cands) identity(nVocab int) bool {
	return c.idOrder && len(c.data) == nVocab && len(c.data) > 0 && &c.data[0] == &c.buf[0]
}

// better is the chain's total order: higher logit first, lower id on ties.
func better(a, b cand) bool { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id) }

func cmpCand(a, b cand) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// radixMin is the size from which sorting a buffer in id order uses the
// radix sort (linear) instead of a comparison sort (n log n calls of cmpCand).
const radixMin = 256

func (c *cands) sort() {
	if c.sorted {
		return
	}
	if c.idOrder && len(c.data) >= radixMin {
		radixSort(c.data, c.alt)
	} else {
		slices.SortFunc(c.data, cmpCand)
	}
	c.sorted, c.idOrder = true, false
}

// sortKey maps a logit to a uint32 whose ascending order is the logit's
// descending order: IEEE sign-magnitude turned into an unsigned order
// without branches (random signs would defeat the branch predictor).
func sortKey(l float32) uint32 {
	u := math.Float32bits(l)
	if u == 0x80000000 {
		u = 0 // -0 and +0 are equal logits
	}
	flip := uint32(int32(u)>>31) | 0x80000000 // negative: all bits, else the sign
	return ^(u ^ flip)
}

// radixSort sorts data by descending logit, stably, in four 8-bit LSD
// passes through tmp (len >= len(data)); passes where every key has the
// same byte are skipped.
func radixSort(data, tmp []cand) {
	n := len(data)
	var hist [4][256]int
	for i := range data {
		k := sortKey(data[i].logit)
		data[i].aux = math.Float32frombits(k) // the key rides along in the scratch field
		hist[0][k&0xff]++
		hist[1][k>>8&0xff]++
		hist[2][k>>16&0xff]++
		hist[3][k>>24]++
	}
	src, dst := data, tmp[:n]
	for pass := range 4 {
		shift := 8 * pass
		h := &hist[pass]
		if h[math.Float32bits(src[0].aux)>>shift&0xff] == n {
			continue
		}
		off := 0
		for b := range h {
			h[b], off = off, off+h[b]
		}
		for _, x := range src {
			b := math.Float32bits(x.aux) >> shift & 0xff
			dst[h[b]] = x
			h[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &data[0] {
		copy(data, src)
	}
}

// prob is the probability of a logit given the normalizer of its set (see
// normalizer); softmax computes the same expression.
func prob(l, maxL float32, sum float64) float32 {
	return float32(float64(expf(l-maxL)) / sum)
}

// softmax sorts and sets p = exp(logit - max) / sum over the live candidates.
func (c *cands) softmax() {
	c.sort()
	c.setProbs()
}

// setProbs is softmax without the sort: probabilities in the current order.
func (c *cands) setProbs() {
	if len(c.data) == 0 {
		return
	}
	maxL := float32(math.Inf(-1))
	for i := range c.data {
		maxL = max(maxL, c.data[i].logit)
	}
	if math.IsInf(float64(maxL), -1) {
		// Every token is banned: spread evenly rather than divide 0 by 0.
		for i := range c.data {
			c.data[i].p = 1 / float32(len(c.data))
		}
		return
	}
	var sum float64
	for i := range c.data {
		e := expf(c.data[i].logit - maxL)
		c.data[i].p = e
		sum += float64(e)
	}
	inv := 1 / sum
	for i := range c.data {
		c.data[i].p = float32(float64(c.data[i].p) * inv)
	}
}

// truncate keeps the first n candidates.
func (c *cands) truncate(n int) { c.data = c.data[:n] }

// selectTop moves the k best candidates (by better) to the front, sorted,
// and truncates to them: a size-k min-heap over the data, O(n + m log k).
func (c *cands) selectTop(k int) {
	if k >= len(c.data) || c.sorted || (k >= radixMin && c.idOrder) {
		c.sort()
		c.truncate(min(k, len(c.data)))
		return
	}
	h := c.data[:k]
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for i := k; i < len(c.data); i++ {
		if better(c.data[i], h[0]) {
			h[0] = c.data[i]
			siftDown(h, 0)
		}
	}
	c.data = h
	slices.SortFunc(c.data, cmpCand)
	c.sorted, c.idOrder = true, false
}

// siftDown restores a heap whose root is the worst candidate.
func siftDown(h []cand, i int) {
	n := len(h)
	for {
		w := i
		l, r := 2*i+1, 2*i+2
		if l < n && better(h[w], h[l]) {
			w = l
		}
		if r < n && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// Greedy returns the index of the largest logit, the lowest index on ties
// (llama.cpp's and the fixtures' convention). It returns -1 for an empty slice.
func Greedy(logits []float32) int32 {
	if len(logits) == 0 {
		return -1
	}
	best := 0
	for i, l := range logits {
		if l > logits[best] {
			best = i
		}
	}
	return int32(best)
}
