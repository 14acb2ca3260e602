package engine

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
)

// TestFullOffloadSkipsHugePages: with every block and the head on devices
// (here CPU stand-ins), Load reads the weights from the file mapping for
// the upload instead of copying them into huge pages first, so the host
// keeps no second copy; with one block left on the CPU it still copies.
func TestFullOffloadSkipsHugePages(t *testing.T) {
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	load := func(layers int) *Model {
		t.Helper()
		m, err := Load(path, LoadOptions{Threads: 1, HugePages: true,
			GPU: &GPUOptions{Devices: []device.Device{device.NewStandIn("cpu:0", 0, 32)}, Layers: layers}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		if _, err := m.Net.NewState(8, 8).Forward([]int32{1, 403, 407, 261}, false); err != nil {
			t.Fatal(err)
		}
		return m
	}
	inFile := func(m *Model, layer int) bool {
		w := m.Net.Layers[layer].Attn.Q.W
		ti, ok := m.file.Tensor(w.Name)
		if !ok {
			t.Fatalf("no tensor %s in the file", w.Name)
		}
		return unsafe.SliceData(w.Data) == unsafe.SliceData(m.file.TensorData(ti))
	}
	full := load(-1)
	if l, head := full.Net.Offloaded(); l != full.Net.NLayer || !head {
		t.Fatalf("offloaded %d of %d blocks, head %v", l, full.Net.NLayer, head)
	}
	if !inFile(full, 0) {
		t.Error("a full offload copied the weights out of the file mapping")
	}
	// After the release the host's rows still read the file's bytes (the
	// pages come back from the page cache; dropped pages of a private or
	// anonymous mapping would read as zeros).
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := full.Net.Layers[0].Attn.Q.W
	ti, _ := full.file.Tensor(w.Name)
	off := int(full.file.DataOffset + ti.Offset)
	if !bytes.Equal(w.Data, disk[off:off+len(w.Data)]) {
		t.Error("the released mapping reads other bytes than the file")
	}
	part := load(full.Net.NLayer - 1)
	if inFile(part, 0) {
		t.Error("a partial offload read the CPU's blocks from the file mapping, not huge pages")
	}
}
