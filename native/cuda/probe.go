package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
)

// ErrNoGPU is wrapped by every error that means "CUDA cannot be used here":
// no driver library, a driver without a usable device, or zero devices.
// Callers fall back to the CPU when errors.Is(err, ErrNoGPU).
var ErrNoGPU = errors.New("no NVIDIA GPU found")

// Info describes the driver and the devices it sees.
type Info struct {
	// DriverVersion is the newest CUDA version the driver supports, encoded
	// as 1000*major + 10*minor (12040 is CUDA 12.4); see FormatVersion.
	DriverVersion int
	Devices       []Device
}

// Device is one CUDA device, in driver ordinal order.
type Device struct {
	Ordinal  int
	Name     string
	TotalMem uint64 // bytes of device memory, free or not
	// ComputeMajor.ComputeMinor is the compute capability (8.9 for Ada),
	// which decides the architecture NVRTC compiles kernels for.
	ComputeMajor, ComputeMinor int
}

// FormatVersion turns a driver version such as 12040 into "12.4".
func FormatVersion(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// driver is an opened, bound and initialised libcuda.
type driver struct {
	api driverAPI
}

// defaultDriver opens the driver once per process (dlopen and cuInit are
// not free, and the handle is never closed): $FLOWCHAT_LIBCUDA when set
// (only that: a path the user named that does not load is an error, not a
// reason to take another driver), else libcuda.so.1.
var defaultDriver = sync.OnceValues(func() (*driver, error) {
	return openDriver(driverSpec.candidates(osSearchEnv)[0])
})

// Probe loads the CUDA driver if it is not loaded yet and lists its devices.
// When CUDA cannot be used the error wraps ErrNoGPU and says why in words a
// user can act on.
func Probe() (Info, error) {
	d, err := defaultDriver()
	if err != nil {
		return Info{}, err
	}
	return d.probe()
}

// openDriver loads the library at path, binds it and runs cuInit.
func openDriver(path string) (*driver, error) {
	h, err := openLibrary(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not loadable (%w); running on CPU", ErrNoGPU, path, err)
	}
	d := &driver{}
	if err := d.api.bind(h); err != nil {
		return nil, fmt.Errorf("%w: %s unusable (%w); running on CPU", ErrNoGPU, path, err)
	}
	if err := check("cuInit", d.api.cuInit(0)); err != nil {
		return nil, fmt.Errorf("%w: %w; running on CPU", ErrNoGPU, err)
	}
	return d, nil
}

func (d *driver) probe() (Info, error) {
	var version, count int32
	if err := check("cuDriverGetVersion", d.api.cuDriverGetVersion(&version)); err != nil {
		return Info{}, fmt.Errorf("cuda: %w", err)
	}
	if err := check("cuDeviceGetCount", d.api.cuDeviceGetCount(&count)); err != nil {
		return Info{}, fmt.Errorf("cuda: %w", err)
	}
	info := Info{DriverVersion: int(version)}
	if count <= 0 {
		return info, fmt.Errorf("%w: CUDA driver %s reports no devices; running on CPU",
			ErrNoGPU, FormatVersion(info.DriverVersion))
	}
	for i := range count {
		dev, err := d.device(i)
		if err != nil {
			return Info{}, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		info.Devices = append(info.Devices, dev)
	}
	return info, nil
}

// device queries one device by ordinal.
func (d *driver) device(ordinal int32) (Device, error) {
	var h cuDevice
	if err := check("cuDeviceGet", d.api.cuDeviceGet(&h, ordinal)); err != nil {
		return Device{}, err
	}
	name, err := d.deviceName(h)
	if err != nil {
		return Device{}, err
	}
	dev := Device{Ordinal: int(ordinal), Name: name}
	if err := check("cuDeviceTotalMem_v2", d.api.cuDeviceTotalMem_v2(&dev.TotalMem, h)); err != nil {
		return Device{}, err
	}
	dev.ComputeMajor, dev.ComputeMinor, err = d.computeCapability(h)
	return dev, err
}

// deviceName reads the NUL-terminated name; 256 bytes is what nvidia-smi
// and the CUDA samples allow (names are under 100 in practice).
func (d *driver) deviceName(h cuDevice) (string, error) {
	var buf [256]byte
	if err := check("cuDeviceGetName", d.api.cuDeviceGetName(&buf[0], int32(len(buf)), h)); err != nil {
		return "", err
	}
	name, _, _ := bytes.Cut(buf[:], []byte{0})
	return string(name), nil
}

func (d *driver) computeCapability(h cuDevice) (major, minor int, err error) {
	var ma, mi int32
	if err := check("cuDeviceGetAttribute", d.api.cuDeviceGetAttribute(&ma, attrComputeCapabilityMajor, h)); err != nil {
		return 0, 0, err
	}
	if err := check("cuDeviceGetAttribute", d.api.cuDeviceGetAttribute(&mi, attrComputeCapabilityMinor, h)); err != nil {
		return 0, 0, err
	}
	return int(ma), int(mi), nil
}
