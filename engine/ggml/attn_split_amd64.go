//go:build amd64 && !noasm

package ggml

//go:noescape
func expMaxGroupsAVX(x *float32, n int, phi float32) (sum float64, maxv float32)

func init() {
	if hasAVX2 {
		expMaxGroups = expMaxGroupsAsm
	}
}

func expMaxGroupsAsm(x []float32, phi float32) (float64, float32) {
	if len(x) < 8 {
		return expMaxGroupsGo(x, phi)
	}
	return expMaxGroupsAVX(&x[0], len(x)&^7, phi)
}
