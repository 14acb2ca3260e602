package hip

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
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
	return dev, nil
}
