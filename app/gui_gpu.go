package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"flowchat/engine"
	"flowchat/engine/device"
	"flowchat/engine/multigpu"
	"flowchat/native/cuda"
	"flowchat/native/hip"
	"flowchat/ui"
)

// GPU lists every device offload can use: each CUDA and each ROCm device
// with its free and total memory, and the CPU stand-ins of --devices. It
// probes rather than opens (opening compiles the kernels on first use); a
// device whose runtime compiler is missing is listed with that problem.
// The answer is kept for Estimate, which plans over the devices' free
// memory.
func (l *guiLibrary) GPU() ui.GPUStatus {
	s := gpuStatus(probeGPUs(), l.devices)
	l.mu.Lock()
	l.gpu = s
	l.mu.Unlock()
	return s
}

// gpuStatus is GPU's answer from what probeGPUs found and --devices: the
// devices --devices names first, in its order (so the dialog's order is
// the layer order it gives), then the other devices found. A --devices
// entry that names no usable device makes offload unusable with the
// reason: it was asked for explicitly.
func gpuStatus(r gpuReport, devices string) ui.GPUStatus {
	found, reasons := foundDevices(r)
	var s ui.GPUStatus
	for _, name := range splitList(devices) {
		d, err := namedDevice(name, found, reasons)
		if err != nil {
			return ui.GPUStatus{Reason: err.Error(), Devices: found}
		}
		if !slices.Contains(s.Default, d.ID) {
			s.Default = append(s.Default, d.ID)
			s.Devices = append(s.Devices, d)
		}
	}
	for _, d := range found {
		if !slices.Contains(s.Default, d.ID) {
			s.Devices = append(s.Devices, d)
		}
	}
	for _, d := range s.Devices {
		if d.Problem == "" {
			s.Usable = true
			if len(s.Default) == 0 {
				s.Default = []string{d.ID}
			}
		}
	}
	switch {
	case !s.Usable && len(s.Devices) == 0:
		s.Reason = "no CUDA or ROCm device: " + reasons["cuda"] + "; " + reasons["hip"]
	case !s.Usable:
		s.Reason = "no device can run the kernels: " + s.Devices[0].Problem
	default: // what else was looked for
		var not []string
		for _, v := range []string{"cuda", "hip"} {
			if reasons[v] != "" {
				not = append(not, "no "+vendorName[v]+" device: "+reasons[v])
			}
		}
		s.Reason = strings.Join(not, "; ")
	}
	return s
}

var vendorName = map[string]string{"cuda": "CUDA", "hip": "ROCm"}

// foundDevices are the CUDA and ROCm devices of r, and why a vendor
// ("cuda", "hip") has none.
func foundDevices(r gpuReport) (devs []ui.GPUDevice, reasons map[string]string) {
	reasons = map[string]string{}
	if r.cudaErr != nil {
		reasons["cuda"] = noGPUReason(r.cudaErr)
	}
	for i, d := range r.cuda.Devices {
		g := ui.GPUDevice{ID: fmt.Sprintf("cuda:%d", d.Ordinal), Name: d.Name, Total: d.TotalMem}
		g.Label = fmt.Sprintf("%s %s (CUDA %s)", g.ID, d.Name, cuda.FormatVersion(r.cuda.DriverVersion))
		setMemory(&g, r.cudaMem, i)
		if r.nvrtcErr != nil {
			g.Problem = "the kernels cannot be compiled: NVRTC not found: " + noGPUReason(r.nvrtcErr)
		}
		devs = append(devs, g)
	}
	if r.hipErr != nil {
		reasons["hip"] = noGPUReason(r.hipErr)
	}
	for i, d := range r.hip.Devices {
		g := ui.GPUDevice{ID: fmt.Sprintf("hip:%d", d.Ordinal), Name: d.Name, Total: d.TotalMem}
		g.Label = fmt.Sprintf("%s %s (ROCm %s)", g.ID, d.Name, hip.FormatVersion(r.hip.RuntimeVersion))
		setMemory(&g, r.hipMem, i)
		if r.hipRTErr != nil {
			g.Problem = "the kernels cannot be compiled: hipRTC not found: " + noGPUReason(r.hipRTErr)
		}
		devs = append(devs, g)
	}
	return devs, reasons
}

// setMemory takes device i's memory reading, when there is one that
// worked (else Free stays unknown and Total is the probe's).
func setMemory(g *ui.GPUDevice, mem []memReading, i int) {
	if i < len(mem) && mem[i].err == nil {
		g.Free, g.Total = mem[i].free, mem[i].total
	}
}

// namedDevice is a --devices entry: a CPU stand-in (it costs nothing to
// open) or one of the devices found, which must be usable.
func namedDevice(name string, found []ui.GPUDevice, reasons map[string]string) (ui.GPUDevice, error) {
	kind, ord, err := parseDeviceName(name)
	if err != nil {
		return ui.GPUDevice{}, err
	}
	id := fmt.Sprintf("%s:%d", kind, ord)
	if kind == "cpu" {
		d, err := device.Open(id)
		if err != nil {
			return ui.GPUDevice{}, err
		}
		defer d.Close()
		free, total, err := d.MemInfo()
		return ui.GPUDevice{ID: id, Name: "CPU stand-in", Label: id + " (CPU stand-in)", Free: free, Total: total}, err
	}
	i := slices.IndexFunc(found, func(d ui.GPUDevice) bool { return d.ID == id })
	if i < 0 {
		why := cmpOr(reasons[kind], "the runtime has fewer devices")
		return ui.GPUDevice{}, fmt.Errorf("--devices %s: no such %s device: %s", name, vendorName[kind], why)
	}
	if p := found[i].Problem; p != "" {
		return ui.GPUDevice{}, fmt.Errorf("--devices %s: %s", name, p)
	}
	return found[i], nil
}

// parseDeviceName reads "cuda:N", "hip:N" (or "rocm:N") and "cpu[:N]" as
// device.Open does ("cuda" alone is ordinal 0).
func parseDeviceName(name string) (kind string, ord int, err error) {
	kind, n, hasOrd := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ":")
	if kind == "rocm" {
		kind = "hip"
	}
	if hasOrd {
		if _, err := fmt.Sscanf(n, "%d", &ord); err != nil || ord < 0 || fmt.Sprint(ord) != n {
			return "", 0, fmt.Errorf("device %q: the ordinal must be a number ≥ 0", name)
		}
	}
	if kind != "cuda" && kind != "hip" && kind != "cpu" {
		return "", 0, fmt.Errorf("device %q: want cuda:N, hip:N or cpu", name)
	}
	return kind, ord, nil
}

// chosenDevices are the IDs a load offloads to: the dialog's choice, else
// --devices, else nil (the first GPU, device.Default).
func (l *guiLibrary) chosenDevices(o ui.LoadOptions) []string {
	if len(o.Devices) > 0 {
		return o.Devices
	}
	var ids []string
	for _, n := range splitList(l.devices) {
		if kind, ord, err := parseDeviceName(n); err == nil {
			n = fmt.Sprintf("%s:%d", kind, ord)
		}
		ids = append(ids, n) // a bad name stays, for device.Open to refuse
	}
	return ids
}

// splitChoice checks a load's split over n devices as the CLI checks
// --split, --split-mode and --tensor-group (one share per device, each a
// number ≥ 0 and not all 0; hybrid's group size divides the devices) and
// returns the partition. One device is always the layer partition.
func splitChoice(o ui.LoadOptions, n int) (multigpu.Mode, error) {
	if n <= 1 {
		return multigpu.Layers, nil
	}
	g := gpuFlags{mode: o.SplitMode, group: max(o.TensorGroup, 1)} // the group is checked below
	mode, err := g.partition()
	if err != nil {
		return 0, fmt.Errorf("partition %q: want layer, tensor or hybrid", o.SplitMode)
	}
	if o.Split != nil {
		if len(o.Split) != n {
			return 0, fmt.Errorf("%d shares for %d devices: give each device a share", len(o.Split), n)
		}
		var sum float64
		for _, s := range o.Split {
			if !(s >= 0) {
				return 0, fmt.Errorf("share %g: a share is a number ≥ 0", s)
			}
			sum += s
		}
		if sum == 0 {
			return 0, errors.New("every share is 0: give some device a share")
		}
	}
	if mode == multigpu.Hybrid && (o.TensorGroup < 1 || n%o.TensorGroup != 0) {
		return 0, fmt.Errorf("hybrid partition: %d devices per group do not divide the %d devices", o.TensorGroup, n)
	}
	return mode, nil
}

// gpuOptions opens the devices for a load that offloads, with the
// partition and shares chosen, and resolves auto to the most layers whose
// estimate fits every device's free memory less autoMargin (the dialog's
// fit); label is the status bar's "CUDA 12.4 · NVIDIA H100". nil when
// nothing is offloaded.
func (l *guiLibrary) gpuOptions(path string, o ui.LoadOptions) (opt *engine.GPUOptions, label string, err error) {
	if o.GPULayers <= 0 && !o.GPUAuto {
		return nil, "", nil
	}
	ids := l.chosenDevices(o)
	mode, err := splitChoice(o, max(len(ids), 1))
	if err != nil {
		return nil, "", fmt.Errorf("the GPU split cannot be used, nothing was loaded: %w", err)
	}
	if err := l.checkStandIns(ids); err != nil {
		return nil, "", gpuFailed(err)
	}
	devs, err := openDevices(ids)
	if err != nil {
		return nil, "", gpuFailed(err)
	}
	opt = &engine.GPUOptions{Devices: devs, Layers: o.GPULayers, Mode: mode, Ctx: l.loadContext(o)}
	if len(devs) > 1 {
		opt.Split, opt.TensorGroup = o.Split, o.TensorGroup
	}
	if o.GPUAuto {
		if opt.Layers, err = l.autoFit(path, o, devs); err != nil {
			device.CloseAll(devs)
			return nil, "", gpuFailed(err)
		}
	}
	return opt, backendLabel(devs), nil
}

// checkStandIns refuses a CPU stand-in that --devices does not name: a
// choice saved under --devices cpu,cpu:1 must not run on stand-ins (the
// kernels' twins, slowly) in a later session without it.
func (l *guiLibrary) checkStandIns(ids []string) error {
	named := l.chosenDevices(ui.LoadOptions{})
	for _, id := range ids {
		if strings.HasPrefix(id, "cpu") && !slices.Contains(named, id) {
			return fmt.Errorf("%s is a CPU stand-in, used only when --devices names it", id)
		}
	}
	return nil
}

// loadContext is the context a load sizes its KV cache for.
func (l *guiLibrary) loadContext(o ui.LoadOptions) int {
	if o.Context > 0 {
		return o.Context
	}
	return l.ctx
}

// openDevices opens the devices by ID; none means the first GPU.
func openDevices(ids []string) ([]device.Device, error) {
	if len(ids) == 0 {
		d, err := device.Default()
		if err != nil {
			return nil, err
		}
		return []device.Device{d}, nil
	}
	return device.OpenAll(strings.Join(ids, ","))
}

// autoFit is auto's layer count for the opened devices: the most (up to
// every block and the head) whose per-device estimate fits each device's
// free memory less autoMargin.
func (l *guiLibrary) autoFit(path string, o ui.LoadOptions, devs []device.Device) (int, error) {
	in, err := l.estimateInputs(path)
	if err != nil {
		return 0, err
	}
	mems := make([]devMem, len(devs))
	for i, d := range devs {
		free, _, err := d.MemInfo()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", d.Name(), err)
		}
		mems[i] = devMem{id: d.Name(), free: free}
	}
	h := in.hubHeader(o.Quant)
	best := 0
	for n := 1; n <= int(h.Info().BlockCount)+1; n++ {
		o.GPULayers = n
		if per, err := deviceEstimates(h, l.loadContext(o), o, mems); err == nil && fitsFree(per, mems) {
			best = n
		}
	}
	if best == 0 {
		return 0, errors.New("not one layer fits the free GPU memory")
	}
	return best, nil
}

// fitsFree says whether every device's estimate fits its free memory less
// autoMargin.
func fitsFree(per []ui.DeviceEstimate, mems []devMem) bool {
	for i, e := range per {
		if float64(e.VRAM) > float64(mems[i].free)*(1-autoMargin) {
			return false
		}
	}
	return true
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
