package sample

import "math"

// fsdParams are the FSD settings (see Params).
type fsdParams struct {
	alpha, beta float32
	k, n        int
}

// fsdState is FSD's scratch: n-gram counts of each of the k candidates per
// context length, sized at New.
type fsdState struct {
	count []int32 // [n][k] occurrences of candidate j after the last i tokens
	total []int32 // [n] occurrences of the last i tokens followed by anything
}

func newFSDState(p fsdParams) fsdState {
	return fsdState{count: make([]int32, p.n*p.k), total: make([]int32, p.n)}
}

// fsd is Frustratingly Simple Decoding (Yang et al., arXiv 2305.12675) as
// Inferflow implements it: over the k most probable tokens, score
// (1-alpha)*P_LM - alpha*P_anti, where P_anti is an n-gram model of the
// sequence so far, and take the best score. It leaves the k candidates in
// c.data with their score in aux and returns the chosen index.
func fsd(c *cands, toks []int32, p fsdParams, st *fsdState) int {
	maxL, sum := c.normalizer()
	c.selectTop(p.k)
	for i := range c.data {
		c.data[i].p = prob(c.data[i].logit, maxL, sum)
	}
	st.countNGrams(c, toks, p.n)
	best := 0
	for j := range c.data {
		x := &c.data[j]
		x.aux = (1-p.alpha)*x.p - p.alpha*st.antiLM(j, len(c.data), len(toks), p)
		if x.aux > c.data[best].aux {
			best = j
		}
	}
	return best
}

// normalizer returns the largest logit and sum(exp(logit - max)) over the
// live candidates, without reordering them.
func (c *cands) normalizer() (float32, float64) {
	maxL := float32(math.Inf(-1))
	for _, x := range c.data {
		maxL = max(maxL, x.logit)
	}
	var sum float64
	for _, x := range c.data {
		sum += float64(expf(x.logit - maxL))
	}
	return maxL, sum
}

// countNGrams fills, for each context length i < n, how often the last i
// tokens of toks occur followed by some token (total) and by candidate j
// (count). Position t is an occurrence when toks[t-i:t] equals the last i
// tokens; the scan costs O(len(toks) * n * k) and allocates nothing.
func (st *fsdState) countNGrams(c *cands, toks []int32, n int) {
	k := len(c.data)
	clear(st.count)
	clear(st.total)
	L := len(toks)
	for i := 0; i < n && i <= L; i++ {
		ctx := toks[L-i:]
		row := st.count[i*k : i*k+k]
		for t := i; t < L; t++ {
			if !equalTail(toks[t-i:t], ctx) {
				continue
			}
			st.total[i]++
			for j := range c.data {
				if c.data[j].id == toks[t] {
					row[j]++
					break
				}
			}
		}
	}
}

func equalTail(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// antiLM is Inferflow's NGram::penalize for candidate j: from the longest
// context down, each order that has seen the candidate contributes its
// relative frequency (add-one in the denominator above unigrams) weighted by
// beta and by the mass the longer orders left.
func (st *fsdState) antiLM(j, k, nToks int, p fsdParams) float32 {
	if nToks < p.n-1 {
		return 0
	}
	remaining, score := float32(1), float32(0)
	for i := p.n - 1; i >= 0; i-- {
		cnt := st.count[i*k+j]
		if cnt == 0 {
			continue
		}
		if i == 0 {
			score += remaining * float32(cnt) / float32(st.total[i])
		} else {
			score += remaining * p.beta * float32(cnt) / float32(st.total[i]+1)
		}
		remaining -= remaining * p.beta
	}
	return score
}
