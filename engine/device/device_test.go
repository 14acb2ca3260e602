package device

import (
	"testing"

	"flowchat/engine/ggml"
	"flowchat/native/cuda"
)

// TestKernelTypes: every weight type a matrix kernel reads is some GGML
// type's, with the same name and row bytes, so that engine/model uploads
// those weights as stored (and its memory estimate counts them as such).
func TestKernelTypes(t *testing.T) {
	seen := map[WeightType]bool{}
	for gt, wt := range kernelTypes {
		if got, ok := KernelType(gt); !ok || got != wt {
			t.Errorf("KernelType(%v) = %v, %v", gt, got, ok)
		}
		if wt.String() != gt.String() || wt.RowBytes(512) != gt.RowSize(512) {
			t.Errorf("%v is %v with %d bytes per 512 elements, ggml's %d", gt, wt, wt.RowBytes(512), gt.RowSize(512))
		}
		seen[wt] = true
	}
	for _, wt := range cuda.WeightTypes() {
		if !seen[wt] {
			t.Errorf("kernel type %v has no GGML type", wt)
		}
	}
	if _, ok := KernelType(ggml.Q8_K); ok {
		t.Error("Q8_K (an activation type) has a kernel")
	}
}
