package hub

import (
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

// tensorBytes sums the engine reader's tensor sizes, by a name filter.
func tensorBytes(t *testing.T, path string, keep func(string) bool) uint64 {
	f, err := gguf.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, ti := range f.Tensors {
		if keep(ti.Name) {
			n += ti.Size
		}
	}
	return n
}

func TestEstimateLlamaGQA(t *testing.T) {
	p := fixtures.Path(t, "arch/rand-llama-gqa-Q8_0.gguf")
	h, err := ReadHeaderFile(p)
	if err != nil {
		t.Fatal(err)
	}
	all := tensorBytes(t, p, func(string) bool { return true })
	blk1 := tensorBytes(t, p, func(n string) bool { return strings.HasPrefix(n, "blk.1.") })
	embd := tensorBytes(t, p, func(n string) bool { return n == "token_embd.weight" })
	// arch_info: 2 layers, 2 KV heads of 32; F32 cache: 2 (K,V) × 2 × 256 × 2 × 32 × 4 bytes.
	const kvAll = 2 * 2 * 256 * 2 * 32 * 4
	cases := []struct {
		ngl                  int
		wRAM, wVRAM, kv, kvV uint64
	}{
		{0, all, 0, kvAll, 0},
		{1, all - blk1, blk1, kvAll / 2, kvAll / 2},
		{2, all - tensorBytes(t, p, func(n string) bool { return strings.HasPrefix(n, "blk.") }), tensorBytes(t, p, func(n string) bool { return strings.HasPrefix(n, "blk.") }), 0, kvAll},
		{99, embd, all - embd, 0, kvAll},
	}
	for _, c := range cases {
		e := EstimateMemory(h, EstimateOptions{Context: 256, GPULayers: c.ngl})
		if e.WeightsRAM != c.wRAM || e.WeightsVRAM != c.wVRAM || e.KVRAM != c.kv || e.KVVRAM != c.kvV {
			t.Errorf("ngl %d: %+v; want weights %d/%d kv %d/%d", c.ngl, e, c.wRAM, c.wVRAM, c.kv, c.kvV)
		}
		if (e.VRAM == 0) != (c.ngl == 0) || e.RAM < e.WeightsRAM+e.KVRAM {
			t.Errorf("ngl %d: totals %d/%d", c.ngl, e.RAM, e.VRAM)
		}
	}
	if e := EstimateMemory(h, EstimateOptions{}); e.Context != 256 {
		t.Errorf("default context %d, want the training context 256", e.Context)
	}
}

// TestEstimateTiedHead: qwen2 has no output.weight; offloading the head
// copies the embedding matrix to the GPU.
func TestEstimateTiedHead(t *testing.T) {
	p := fixtures.Path(t, "arch/rand-qwen2-F32.gguf")
	h, err := ReadHeaderFile(p)
	if err != nil {
		t.Fatal(err)
	}
	embd := tensorBytes(t, p, func(n string) bool { return n == "token_embd.weight" })
	all := tensorBytes(t, p, func(string) bool { return true })
	e := EstimateMemory(h, EstimateOptions{Context: 128, GPULayers: 3})
	if e.WeightsRAM != embd || e.WeightsVRAM != all {
		t.Errorf("tied head: RAM %d VRAM %d, want %d and %d", e.WeightsRAM, e.WeightsVRAM, embd, all)
	}
}

func TestJudge(t *testing.T) {
	e := Estimate{RAM: 800, VRAM: 500, GPULayers: 4}
	cases := []struct {
		free     Free
		ram, all Fit
	}{
		{Free{RAM: 1000, VRAM: 1000}, Fits, Fits},
		{Free{RAM: 900, VRAM: 1000}, Tight, Tight},
		{Free{RAM: 799, VRAM: 1000}, DoesNotFit, DoesNotFit},
		{Free{RAM: 1000, VRAM: 400}, Fits, DoesNotFit},
		{Free{}, FitUnknown, FitUnknown},
	}
	for _, c := range cases {
		v := Judge(e, c.free)
		if v.RAM != c.ram || v.Fit != c.all {
			t.Errorf("%+v: ram %v overall %v, want %v %v", c.free, v.RAM, v.Fit, c.ram, c.all)
		}
	}
	s := Judge(Estimate{RAM: 3 << 30, Context: 4096}, Free{RAM: 16 << 30}).String()
	if s != "fits: needs 3.0 GiB RAM of 16.0 GiB free (context 4096, 0 GPU layers)" {
		t.Errorf("%q", s)
	}
}

func TestMemAvailable(t *testing.T) {
	n, ok := parseMemAvailable(strings.NewReader("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   12345678 kB\n"))
	if !ok || n != 12345678*1024 {
		t.Errorf("%d %v", n, ok)
	}
	if _, ok := parseMemAvailable(strings.NewReader("MemTotal: 1 kB\n")); ok {
		t.Error("found MemAvailable in a listing without it")
	}
	if free := FreeRAM(); free == 0 {
		t.Log("no /proc/meminfo here")
	}
	if HumanBytes(1536) != "1.5 KiB" || HumanBytes(10) != "10 B" {
		t.Error(HumanBytes(1536), HumanBytes(10))
	}
}
