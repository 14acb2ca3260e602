package sample

import (
	"math"
	"math/rand/v2"
)

// mirostatM is the number of top tokens mirostat v1 fits its Zipf exponent
// on (the paper's and llama.cpp's m = 100).
const mirostatM = 100

// draw picks a live candidate with probability p (after softmax) and returns
// its index in c.data.
func draw(c *cands, rng *rand.Rand) int {
	var total float64
	for _, x := range c.data {
		total += float64(x.p)
	}
	target := rng.Float64() * total
	var cum float64
	last := 0
	for i, x := range c.data {
		if x.p <= 0 {
			continue
		}
		cum += float64(x.p)
		last = i
		if target < cum {
			return i
		}
	}
	return last // rounding: the mass ran out before the target
}

// mirostatV1 is Basu et al. 2021, algorithm 1: estimate the Zipf exponent
// s from the top m probabilities, pick k so the expected surprise is mu, draw
// from the top k, and move mu toward tau by the observed error (bits). The
// top m are found on a copy, so the vocabulary is sorted only as far as k.
func mirostatV1(c *cands, rng *rand.Rand, tau, eta float32, nVocab int, mu *float32) int {
	maxL, sum := c.normalizer()
	// The copy has no radix scratch and claims no id order: it is selected by
	// the heap (m < radixMin), never sorted through c.buf.
	top := cands{data: c.alt[:len(c.data)], sorted: c.sorted}
	copy(top.data, c.data)
	top.selectTop(min(mirostatM, len(top.data)))
	var sumTB, sumTT float64
	for i := 0; i < len(top.data)-1; i++ {
		t := math.Log(float64(i+2) / float64(i+1))
		b := math.Log(float64(prob(top.data[i].logit, maxL, sum)) / float64(prob(top.data[i+1].logit, maxL, sum)))
		sumTB += t * b
		sumTT += t * t
	}
	s := sumTB / sumTT
	eps := s - 1
	k := math.Pow(eps*math.Pow(2, float64(*mu))/(1-math.Pow(float64(nVocab), -eps)), 1/s)
	kk := 1
	if !math.IsNaN(k) && k >= 1 {
		kk = int(min(k, float64(len(c.data))))
	}
	c.selectTop(kk)
	return mirostatDraw(c, rng, tau, eta, mu)
}

// mirostatV2 is Basu et al. 2021, algorithm 2: drop the tokens whose surprise
// exceeds mu (keeping at least the most probable), draw, and update mu. The
// survivors are a most-probable prefix, so they are filtered before sorting.
func mirostatV2(c *cands, rng *rand.Rand, tau, eta float32, mu *float32) int {
	c.setProbs()
	// -log2 p <= mu  <=>  p >= 2^-mu
	minP := float32(math.Exp2(-float64(*mu)))
	n, best := 0, 0
	for i, x := range c.data {
		if better(x, c.data[best]) {
			best = i
		}
		if x.p >= minP {
			n++
		}
	}
	if n == 0 {
		c.data[0] = c.data[best]
		c.truncate(1)
		c.sorted, c.idOrder = true, false
	} else {
		filterInPlace(c, func(x cand) bool { return x.p >= minP })
	}
	return mirostatDraw(c, rng, tau, eta, mu)
}

// filterInPlace keeps the candidates for which keep is true, in order.
func filterInPlace(c *cands, keep func(cand) bool) {
	n := 0
	for _, x := range c.data {
		if keep(x) {
			c.data[n] = x
			n++
		}
	}
	c.truncate(n)
}

func mirostatDraw(c *cands, rng *rand.Rand, tau, eta float32, mu *float32) int {
	c.softmax()
	i := draw(c, rng)
	surprise := -math.Log2(float64(c.data[i].p))
	*mu -= eta * (float32(surprise) - tau)
	return i
}
