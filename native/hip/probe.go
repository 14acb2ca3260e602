package hip

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// ErrNoGPU is wrapped by every error that means "HIP cannot be used here":
// no runtime library, a runtime without a usable device, or zero devices.
// Callers fall back to the CPU when errors.Is(err, ErrNoGPU).
var ErrNoGPU = errors.New("no AMD GPU found")

// Info describes the HIP runtime and the devices it sees.
type Info struct {
	// RuntimeVersion is HIP_VERSION of the loaded runtime, encoded as
	// 10000000*major + 100000*minor + patch; see FormatVersion.
	// (hipDriverGetVersion is not used: its encoding differs by platform.)
	RuntimeVersion int
	Devices        []Device
}

// Device is one HIP device, in ordinal order.
type Device struct {
	Ordinal  int
	Name     string
	TotalMem uint64 // bytes of device memory, free or not
	// Arch is the gcnArchName, the target hipRTC compiles for, with its
	// features ("gfx90a:sramecc+:xnack-"); "" when the runtime does not say.
	Arch string
	// WarpSize is the device's wavefront size (hipDeviceAttributeWarpSize
	// when it answers 32 or 64, else WavefrontSize(Arch)).
	WarpSize int
	// ComputeUnits is the number of compute units; 0 when unknown.
	ComputeUnits int
}

// FormatVersion turns a HIP version such as 60241134 into "6.2.41134".
func FormatVersion(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000000, v/100000%100, v%100000)
}

// hipRuntime is an opened, bound and initialised libamdhip64.
type hipRuntime struct {
	api runtimeAPI
}

// defaultRuntime opens the system HIP runtime once per process.
var defaultRuntime = sync.OnceValues(openDefault)

// Probe loads the HIP runtime if it is not loaded yet and lists its devices.
// When HIP cannot be used the error wraps ErrNoGPU and says why.
func Probe() (Info, error) {
	r, err := defaultRuntime()
	if err != nil {
		return Info{}, err
	}
	return r.probe()
}

// openDefault tries the candidate paths in order. When none loads, the
// message gives the first failure, which names the usual soname.
func openDefault() (*hipRuntime, error) {
	var first error
	for _, path := range candidates() {
		if _, err := openLibrary(path); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		return openRuntime(path)
	}
	return nil, fmt.Errorf("%w: %s not loadable (%w); running on CPU", ErrNoGPU, libraryName, first)
}

// openRuntime loads the library at path, binds it and runs hipInit.
func openRuntime(path string) (*hipRuntime, error) {
	h, err := openLibrary(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not loadable (%w); running on CPU", ErrNoGPU, path, err)
	}
	r := &hipRuntime{}
	if err := r.api.bind(h); err != nil {
		return nil, fmt.Errorf("%w: %s unusable (%w); running on CPU", ErrNoGPU, path, err)
	}
	if err := check("hipInit", r.api.hipInit(0)); err != nil {
		return nil, fmt.Errorf("%w: %w; running on CPU", ErrNoGPU, err)
	}
	return r, nil
}

func (r *hipRuntime) probe() (Info, error) {
	var version, count int32
	if err := check("hipRuntimeGetVersion", r.api.hipRuntimeGetVersion(&version)); err != nil {
		return Info{}, fmt.Errorf("hip: %w", err)
	}
	info := Info{RuntimeVersion: int(version)}
	// HIP reports "no device" as an error where CUDA returns a count of 0.
	res := r.api.hipGetDeviceCount(&count)
	if res == ErrorNoDevice || (res == Success && count <= 0) {
		return info, fmt.Errorf("%w: HIP %s reports no devices; running on CPU",
			ErrNoGPU, FormatVersion(info.RuntimeVersion))
	}
	if err := check("hipGetDeviceCount", res); err != nil {
		return Info{}, fmt.Errorf("hip: %w", err)
	}
	for i := range count {
		dev, err := r.device(i)
		if err != nil {
			return Info{}, fmt.Errorf("hip: device %d: %w", i, err)
		}
		info.Devices = append(info.Devices, dev)
	}
	return info, nil
}

// device queries one device by ordinal.
func (r *hipRuntime) device(ordinal int32) (Device, error) {
	var h hipDevice
	if err := check("hipDeviceGet", r.api.hipDeviceGet(&h, ordinal)); err != nil {
		return Device{}, err
	}
	var buf [256]byte // the size of hipDeviceProp_t.name
	if err := check("hipDeviceGetName", r.api.hipDeviceGetName(&buf[0], int32(len(buf)), h)); err != nil {
		return Device{}, err
	}
	name, _, _ := bytes.Cut(buf[:], []byte{0})
	dev := Device{Ordinal: int(ordinal), Name: string(name)}
	if err := check("hipDeviceTotalMem", r.api.hipDeviceTotalMem(&dev.TotalMem, h)); err != nil {
		return Device{}, err
	}
	dev.Arch = r.archName(ordinal)
	dev.WarpSize = WavefrontSize(dev.Arch)
	if w := r.attribute(attrWarpSize, ordinal); w == 32 || w == 64 {
		dev.WarpSize = w
	}
	if n := r.attribute(attrMultiprocessorCount, ordinal); n > 0 && n < 1<<16 {
		dev.ComputeUnits = n
	}
	return dev, nil
}

// attribute reads a device attribute, or returns -1. The enum positions
// are ROCm 5's (raw.go); callers range-check what comes back.
func (r *hipRuntime) attribute(attr, ordinal int32) int {
	if r.api.hipDeviceGetAttribute == nil {
		return -1
	}
	var v int32
	if r.api.hipDeviceGetAttribute(&v, attr, ordinal) != Success {
		return -1
	}
	return int(v)
}

// propsSize is more than any hipDeviceProp_t (792 bytes in ROCm 5, about
// 1.5 KB in ROCm 6's R0600 layout), so the runtime never writes past it.
const propsSize = 8192

// archName reads gcnArchName out of hipDeviceProp_t without depending on
// its layout, which moved between ROCm 5 and 6: it is the one field that
// holds a NUL-terminated "gfx<hex>[:feature±…]" string after the name.
func (r *hipRuntime) archName(ordinal int32) string {
	if r.api.hipGetDeviceProperties == nil {
		return ""
	}
	buf := make([]uint64, propsSize/8) // 8-byte aligned, as the struct needs
	if r.api.hipGetDeviceProperties(unsafe.Pointer(&buf[0]), ordinal) != Success {
		return ""
	}
	return findArchName(unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), propsSize)[256:])
}

// findArchName returns the first NUL-terminated string in b that is a
// valid AMDGPU target name.
func findArchName(b []byte) string {
	for i := 0; i+4 < len(b); i++ {
		if b[i] != 'g' || (i > 0 && b[i-1] != 0) || !bytes.HasPrefix(b[i:], []byte("gfx")) {
			continue
		}
		s, _, ok := bytes.Cut(b[i:min(len(b), i+256)], []byte{0})
		if ok && validArch(string(s)) {
			return string(s)
		}
	}
	return ""
}
