package cuda

import (
	"math/big"
	"strings"
)

// fmaExact is a·b + c rounded once, through big.Float.
func fmaExact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

func containsLine(s, line string) bool { return strings.Contains("\n"+s, "\n"+line) }
