package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/native/cuda"
	"flowchat/native/hip"
	"flowchat/ui"
)

// GPU reports whether layers can be offloaded, to which device and with
// how much memory: the --devices list when given, else the first CUDA
// device, else the first ROCm one. It probes rather than opens (opening
// compiles the kernels on first use), but a device is only offered when
// its runtime compiler is there too.
func (l *guiLibrary) GPU() ui.GPUStatus {
	names := []string{"cuda:0", "hip:0"}
	if l.devices != "" {
		names = splitList(l.devices)
	}
	var s ui.GPUStatus
	var reasons []string
	for _, n := range names {
		label, free, total, err := describeDevice(n)
		if err != nil {
			reasons = append(reasons, err.Error())
			if l.devices != "" {
				return ui.GPUStatus{Reason: strings.Join(reasons, "; ")}
			}
			continue
		}
		s.Usable = true
		s.Devices = append(s.Devices, label)
		s.Free, s.Total = s.Free+free, s.Total+total
		if l.devices == "" {
			break // the default is one device
		}
	}
	if !s.Usable {
		s.Reason = "no CUDA or ROCm device: " + strings.Join(reasons, "; ")
	}
	return s
}

// describeDevice names a device of --devices and reads its memory,
// without opening it (except a CPU stand-in, which costs nothing).
func describeDevice(name string) (label string, free, total uint64, err error) {
	kind, ordText, _ := strings.Cut(strings.ToLower(name), ":")
	ord, _ := strconv.Atoi(ordText)
	switch kind {
	case "cpu":
		d, err := device.Open(name)
		if err != nil {
			return "", 0, 0, err
		}
		defer d.Close()
		free, total, err = d.MemInfo()
		return d.Name() + " (CPU stand-in)", free, total, err
	case "cuda":
		return describeCUDA(ord)
	case "hip", "rocm":
		return describeHIP(ord)
	}
	return "", 0, 0, fmt.Errorf("device %q: want cuda:N, hip:N or cpu", name)
}

func describeCUDA(ord int) (string, uint64, uint64, error) {
	info, err := cuda.Probe()
	if err != nil {
		return "", 0, 0, errors.New(noGPUReason(err))
	}
	if ord >= len(info.Devices) {
		return "", 0, 0, fmt.Errorf("cuda:%d: the driver has %d device(s)", ord, len(info.Devices))
	}
	if _, err := cuda.LoadNVRTC(); err != nil {
		return "", 0, 0, fmt.Errorf("cuda:%d: the kernels cannot be compiled: %w", ord, err)
	}
	free, total, err := cuda.MemInfo(ord)
	d := info.Devices[ord]
	return fmt.Sprintf("cuda:%d %s (CUDA %s)", ord, d.Name, cuda.FormatVersion(info.DriverVersion)), free, total, err
}

func describeHIP(ord int) (string, uint64, uint64, error) {
	info, err := hip.Probe()
	if err != nil {
		return "", 0, 0, errors.New(noGPUReason(err))
	}
	if ord >= len(info.Devices) {
		return "", 0, 0, fmt.Errorf("hip:%d: the runtime has %d device(s)", ord, len(info.Devices))
	}
	if _, err := hip.LoadHIPRTC(); err != nil {
		return "", 0, 0, fmt.Errorf("hip:%d: the kernels cannot be compiled: %w", ord, err)
	}
	free, total, err := hip.MemInfo(ord)
	d := info.Devices[ord]
	return fmt.Sprintf("hip:%d %s (ROCm %s)", ord, d.Name, hip.FormatVersion(info.RuntimeVersion)), free, total, err
}

// gpuOptions opens the devices for a load that offloads, and resolves
// auto as the CLI's --gpu-layers auto does (autoLayers); label is the
// status bar's "CUDA 12.4 · NVIDIA H100". nil when nothing is offloaded.
func (l *guiLibrary) gpuOptions(path string, o ui.LoadOptions) (opt *engine.GPUOptions, label string, err error) {
	if o.GPULayers <= 0 && !o.GPUAuto {
		return nil, "", nil
	}
	var devs []device.Device
	if l.devices == "" {
		var d device.Device
		if d, err = device.Default(); err == nil {
			devs = []device.Device{d}
		}
	} else {
		devs, err = device.OpenAll(l.devices)
	}
	if err != nil {
		return nil, "", gpuFailed(err)
	}
	n := o.GPULayers
	if o.GPUAuto {
		ctx := o.Context
		if ctx <= 0 {
			ctx = l.ctx
		}
		if n, err = autoLayers(path, ctx, devs); err == nil && n == 0 {
			err = errors.New("not one layer fits the free GPU memory")
		}
		if err != nil {
			device.CloseAll(devs)
			return nil, "", gpuFailed(err)
		}
	}
	return &engine.GPUOptions{Devices: devs, Layers: n}, backendLabel(devs), nil
}

// gpuFailed is a load that asked for the GPU and could not have it: the
// load fails (nothing falls back to the CPU silently) and says how to run
// on the CPU instead.
func gpuFailed(err error) error {
	return fmt.Errorf("GPU start-up failed, nothing was loaded: %w. Choose “CPU only” in the load dialog to run on the CPU", err)
}

// backendLabel is "CUDA 12.4 · NVIDIA H100" for the devices (one backend
// per load: the first device's; stand-ins are "CPU stand-in · cpu:0").
func backendLabel(devs []device.Device) string {
	var names []string
	for _, d := range devs {
		n := d.Name()
		if i := strings.Index(n, " ("); i >= 0 && strings.HasSuffix(n, ")") {
			n = n[i+2 : len(n)-1]
		}
		names = append(names, n)
	}
	backend := "CPU stand-in"
	switch first := devs[0].Name(); {
	case strings.HasPrefix(first, "cuda:"):
		backend = "CUDA"
		if info, err := cuda.Probe(); err == nil {
			backend += " " + cuda.FormatVersion(info.DriverVersion)
		}
	case strings.HasPrefix(first, "hip:"):
		backend = "ROCm"
		if info, err := hip.Probe(); err == nil {
			backend += " " + hip.FormatVersion(info.RuntimeVersion)
		}
	}
	return backend + " · " + strings.Join(names, ", ")
}
