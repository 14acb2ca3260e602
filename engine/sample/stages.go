package sample

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The stages below are llama.cpp's (src/llama-sampling.cpp, b4748) unless a
// comment says otherwise. Each works on the live candidates in place; the
// probabilities they leave are not renormalized (the next stage that needs
// probabilities recomputes them from the logits, as the final draw does).

// topK keeps the k most probable candidates; k <= 0 is off.
func topK(c *cands, k int) {
	if k <= 0 {
		return
	}
	c.selectTop(k)
}

// topP keeps the smallest most-probable prefix whose mass reaches p.
func topP(c *cands, p float32, minKeep int) {
	if p >= 1 {
		return
	}
	c.softmax()
	var cum float32
	for i := range c.data {
		cum += c.data[i].p
		if cum >= p && i+1 >= minKeep {
			c.truncate(i + 1)
			return
		}
	}
}

// minP keeps the candidates whose probability is at least p times the
// largest, i.e. logit >= maxLogit + ln p; without sorting when it can.
func minP(c *cands, p float32, minKeep int) {
	if p <= 0 || len(c.data) == 0 {
		return
	}
	if !c.sorted && minPUnsorted(c, p, minKeep) {
		return
	}
	c.sort()
	minLogit := c.data[0].logit + float32(math.Log(float64(p)))
	i := 1
	for ; i < len(c.data); i++ {
		if c.data[i].logit < minLogit && i >= minKeep {
			break
		}
	}
	c.truncate(i)
}

// minPUnsorted filters in place keeping token order; it gives up (data
// untouched) when fewer than minKeep would survive.
func minPUnsorted(c *cands, p float32, minKeep int) bool {
	maxL := float32(math.Inf(-1))
	for i := range c.data {
		maxL = max(maxL, c.data[i].logit)
	}
	minLogit := maxL + float32(math.Log(float64(p)))
	n := 0
	for i := range c.data {
		if c.data[i].logit >= minLogit {
			n++
		}
	}
	if n < minKeep {
		return false
	}
	n = 0
	for i := range c.data {
		if c.data[i].logit >= minLogit {
			c.data[n] = c.data[i]
			n++
		}
	}
	c.truncate(n)
	return true
}

// typical is locally typical sampling (Meister et al. 2022): keep the
// tokens whose surprise is closest to the entropy until their mass exceeds p.
func typical(c *cands, p float32, minKeep int) {
	if p >= 1 {
		return
	}
	c.softmax()
	var entropy float64
	for _, x := range c.data {
		if x.p > 0 {
			entropy -= float64(x.p) * math.Log(float64(x.p))
		}
	}
	for i := range c.data {
		c.data[i].aux = float32(math.Abs(-math.Log(float64(c.data[i].p)) - entropy))
	}
	// Stable: among equal scores the more probable (earlier) token stays first.
	c.sorted, c.idOrder = false, false
	slices.SortStableFunc(c.data, func(a, b cand) int {
		switch {
		case a.aux < b.aux:
			return -1
		case a.aux > b.aux:
			return 1
		}
		return 0
	})
	var cum float32
	for i := range c.data {
		cum += c.data[i].p
		if cum > p && i >= minKeep-1 {
			c.truncate(i + 1)
			return
		}
	}
}

// tailFree is tail-free sampling (Phillips 2019, as llama.cpp had it until
// b4000): cut where the cumulative normalized |second difference| of the
// sorted probabilities exceeds z.
func tailFree(c *cands, z float32, minKeep int) {
	if z >= 1 || len(c.data) <= 2 {
		return
	}
	c.softmax()
	d := c.data
	// aux[i] = |(p[i]-p[i+1]) - (p[i+1]-p[i+2])| for i < n-2.
	var sum float32
	for i := 0; i < len(d)-2; i++ {
		d[i].aux = float32(math.Abs(float64((d[i].p - d[i+1].p) - (d[i+1].p - d[i+2].p))))
		sum += d[i].aux
	}
	n2 := len(d) - 2
	var cum float32
	for i := 0; i < n2; i++ {
		w := 1 / float32(n2)
		if sum > 1e-6 {
			w = d[i].aux / sum
		}
		cum += w
		if cum > z && i >= minKeep {
			c.truncate(i)
			return
		}
	}
}

// temperature divides the logits by t; t <= 0 keeps only the most probable
// token (lowest id on ties).
func temperature(c *cands, t float32) {
	if t <= 0 {
		if len(c.data) == 0 {
			return
		}
		best := 0
		for i := range c.data {
			if better(c.data[i], c.data[best]) {
				best = i
			}
		}
		c.data[0] = c.data[best]
		c.truncate(1)
		c.sorted, c.idOrder = true, false
		return
	}
	if t == 1 {
		return
	}
	for i := range c.data {
		c.data[i].logit /= t
	}
}

// xtc is "exclude top choices" (p-e-w, text-generation-webui #6335): with
// probability prob, drop every token at least threshold probable except the
// least probable of them. The coin is drawn only when XTC could act, as in
// llama.cpp.
func xtc(c *cands, prob, threshold float32, minKeep int, rng *rand.Rand) {
	if prob <= 0 || threshold > 0.5 || len(c.data) < 2 {
		return
	}
	if rng.Float32() > prob {
		return
	}
	c.softmax()
	last := 0
	for i := range c.data {
		if c.data[i].p < threshold {
			break
		}
		last = i
	}
	if len(c.data)-last >= minKeep && last > 0 {
		c.data = c.data[last:]
	}
}
