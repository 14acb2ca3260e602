package multigpu

import (
	"errors"
	"math"
)

// errCaps is returned by apportion when the caps cannot hold n units.
var errCaps = errors.New("multigpu: capacities hold fewer units than needed")

// apportion splits n units among len(weights) parties in proportion to
// weights, each getting at most caps[i] (nil: no caps), by largest
// remainders: the quota n·w_i/Σw is rounded down, the units left go to the
// largest fractional parts (ties to the lower index). A party whose quota
// exceeds its cap gets the cap and the rest is shared again among the
// others. Zero weights get nothing unless the others are full.
func apportion(n int, weights []float64, caps []int) ([]int, error) {
	out := make([]int, len(weights))
	free := make([]bool, len(weights))
	total := 0
	for i := range weights {
		free[i] = capOf(caps, i) > 0
		total += capOf(caps, i)
	}
	if total < n {
		return nil, errCaps
	}
	for left := n; left > 0; {
		given := share(left, weights, caps, out, free)
		if given == 0 { // only zero-weight parties have room: fill in order
			given = fillInOrder(left, caps, out)
		}
		left -= given
	}
	return out, nil
}

func capOf(caps []int, i int) int {
	if caps == nil {
		return math.MaxInt32
	}
	return caps[i]
}

// share hands out up to left units among the free parties by largest
// remainder, capping; it returns how many it gave and marks the capped.
func share(left int, weights []float64, caps, out []int, free []bool) int {
	var sum float64
	for i, w := range weights {
		if free[i] {
			sum += w
		}
	}
	if sum <= 0 {
		return 0
	}
	quota := make([]int, len(weights))
	frac := make([]float64, len(weights))
	rest := left
	for i, w := range weights {
		if free[i] {
			q := float64(left) * w / sum
			quota[i] = int(math.Floor(q))
			frac[i] = q - float64(quota[i])
			rest -= quota[i]
		}
	}
	for ; rest > 0; rest-- {
		best := -1
		for i := range frac {
			if free[i] && frac[i] >= 0 && (best < 0 || frac[i] > frac[best]) {
				best = i
			}
		}
		quota[best]++
		frac[best] = -1
	}
	given := 0
	for i := range quota {
		room := capOf(caps, i) - out[i]
		if quota[i] >= room {
			quota[i], free[i] = room, false
		}
		out[i] += quota[i]
		given += quota[i]
	}
	return given
}

func fillInOrder(left int, caps, out []int) int {
	given := 0
	for i := range out {
		k := min(left-given, capOf(caps, i)-out[i])
		out[i] += k
		given += k
	}
	return given
}
