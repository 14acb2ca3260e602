package device

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Open opens a device by name: "cuda:N", "hip:N", or "cpu" for a stand-in
// device (host memory, the kernels' twins; for tests and --devices
// cpu,cpu,… placements). "cuda" and "hip" alone mean ordinal 0.
func Open(name string) (Device, error) {
	kind, ord, err := parseName(name)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "cuda":
		return OpenCUDA(ord)
	case "hip", "rocm":
		return OpenHIP(ord)
	}
	return NewStandIn(fmt.Sprintf("cpu:%d", ord), 0, 32), nil
}

func parseName(name string) (kind string, ord int, err error) {
	kind, n, hasOrd := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ":")
	if hasOrd {
		if ord, err = strconv.Atoi(n); err != nil || ord < 0 {
			return "", 0, fmt.Errorf("device %q: the ordinal must be a number ≥ 0", name)
		}
	}
	switch kind {
	case "cuda", "hip", "rocm", "cpu":
		return kind, ord, nil
	}
	return "", 0, fmt.Errorf("device %q: want cuda:N, hip:N or cpu", name)
}

// OpenAll opens a comma-separated device list ("cuda:0,cuda:1").
func OpenAll(list string) ([]Device, error) {
	var devs []Device
	for _, n := range strings.Split(list, ",") {
		d, err := Open(n)
		if err != nil {
			CloseAll(devs)
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// CloseAll closes every device.
func CloseAll(devs []Device) {
	for _, d := range devs {
		d.Close()
	}
}

// Default opens the first GPU: CUDA device 0, else HIP device 0. When
// neither works the error wraps ErrNoDevice and gives both reasons.
func Default() (Device, error) {
	d, cerr := OpenCUDA(0)
	if cerr == nil {
		return d, nil
	}
	d, herr := OpenHIP(0)
	if herr == nil {
		return d, nil
	}
	if !errors.Is(cerr, ErrNoDevice) || !errors.Is(herr, ErrNoDevice) {
		return nil, errors.Join(cerr, herr) // a device exists but failed: say so
	}
	return nil, fmt.Errorf("%w: no CUDA device (%v) and no ROCm device (%v)", ErrNoDevice, unwrapNoGPU(cerr), unwrapNoGPU(herr))
}

// unwrapNoGPU is the reason in err without the sentinel's words, or the
// probe's note that the engine runs on the CPU (here nothing falls back).
func unwrapNoGPU(err error) string {
	s := strings.TrimPrefix(err.Error(), ErrNoDevice.Error()+": ")
	return strings.ReplaceAll(s, "; running on CPU", "")
}
