package hip

import (
	"errors"
	"testing"
)

// TestProbeRealGPU runs only where a ROCm runtime with a device is present.
func TestProbeRealGPU(t *testing.T) {
	info, err := Probe()
	if errors.Is(err, ErrNoGPU) {
		t.Skipf("no usable HIP device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("HIP %s: %+v", FormatVersion(info.RuntimeVersion), info.Devices)
	for _, dev := range info.Devices {
		if dev.Name == "" || dev.TotalMem == 0 {
			t.Errorf("device %d: empty name or memory: %+v", dev.Ordinal, dev)
		}
		free, total, err := MemInfo(dev.Ordinal)
		if err != nil {
			t.Errorf("MemInfo(%d): %v", dev.Ordinal, err)
			continue
		}
		if total != dev.TotalMem || free == 0 || free > total {
			t.Errorf("MemInfo(%d) = free %d, total %d; device total %d", dev.Ordinal, free, total, dev.TotalMem)
		}
	}
}
