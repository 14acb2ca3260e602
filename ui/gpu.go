package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Partition choices of the load dialog, by the values LoadOptions.SplitMode
// takes.
var partitions = []Choice{
	{Value: "layer", Label: "Layer"},
	{Value: "tensor", Label: "Tensor (row)"},
	{Value: "hybrid", Label: "Hybrid"},
}

var partitionHelp = map[string]string{
	"layer":  "Layer: each device runs a range of layers, in proportion to its share; one device works at a time.",
	"tensor": "Tensor (row): every layer's attention heads and FFN rows are shared out over all the devices, which sum their parts twice a layer.",
	"hybrid": "Hybrid (Inferflow): groups of devices split each layer by tensor, and the groups run layer ranges one after another.",
}

// gpuSection is the load dialog's choice of devices (a check each, with
// its free memory), their shares and the partition, and the estimate per
// device. It reads into LoadOptions' Devices, Split, SplitMode and
// TensorGroup; problem says why the choice cannot load ("" when it can).
type gpuSection struct {
	status       GPUStatus
	checks       []*widget.Check // by status.Devices
	shares       []*widget.Entry // by status.Devices; shown with two or more chosen
	mode         *choiceSelect
	group        *widget.Select // hybrid's devices per group: the divisors of the count chosen
	help         *widget.Label
	split        *fyne.Container // partition, group and help: two or more devices chosen
	groupRow     *fyne.Container
	problemLabel *widget.Label
	perDevice    *fyne.Container // a line per chosen device
	devices      *fyne.Container // the device rows and the split
	problem      string
}

func newGPUSection(status GPUStatus, o LoadOptions, changed func()) *gpuSection {
	g := &gpuSection{status: status, help: helpLabel(""), problemLabel: widget.NewLabel(""), perDevice: container.NewVBox()}
	g.problemLabel.Importance = widget.DangerImportance
	g.problemLabel.Wrapping = fyne.TextWrapWord
	g.problemLabel.Hide()
	chosen := g.initialChoice(o)
	rows := container.NewVBox(widget.NewLabelWithStyle("Devices", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	for _, d := range status.Devices {
		c := widget.NewCheck(d.Label, func(bool) { changed() })
		c.Checked = slices.Contains(chosen, d.ID)
		share := widget.NewEntry()
		share.SetText(shareText(o, d.ID))
		share.Validator = func(s string) error { _, err := parseShare(s); return err }
		share.OnChanged = func(string) { changed() }
		note := helpLabel(memoryText(d))
		if d.Problem != "" {
			c.Disable()
			note.SetText(d.Problem)
			note.Importance = widget.WarningImportance
		}
		g.checks, g.shares = append(g.checks, c), append(g.shares, share)
		shareBox := container.NewHBox(widget.NewLabel("share"), container.NewGridWrap(fyne.NewSize(96, 36), share))
		rows.Add(container.NewBorder(nil, nil, nil, shareBox, c))
		rows.Add(note)
	}
	g.mode = newChoiceSelect(partitions, cmpOr(o.SplitMode, "layer"), changed)
	g.group = widget.NewSelect(nil, func(string) { changed() })
	if o.TensorGroup > 0 {
		g.group.Selected = strconv.Itoa(o.TensorGroup)
	}
	g.groupRow = container.NewBorder(nil, nil, fixedLabel("Per group"), nil, g.group)
	g.split = container.NewVBox(container.NewBorder(nil, nil, fixedLabel("Partition"), nil, g.mode), g.groupRow, g.help)
	g.devices = container.NewVBox(rows, g.split, g.problemLabel)
	return g
}

// initialChoice is the saved devices that are still there and usable,
// else the library's default.
func (g *gpuSection) initialChoice(o LoadOptions) []string {
	var ids []string
	for _, id := range o.Devices {
		if d, ok := g.status.Device(id); ok && d.Problem == "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return g.status.Default
	}
	return ids
}

// shareText is the share saved for device id, "1" when none is.
func shareText(o LoadOptions, id string) string {
	if i := slices.Index(o.Devices, id); i >= 0 && i < len(o.Split) {
		return strconv.FormatFloat(o.Split[i], 'g', -1, 64)
	}
	return "1"
}

// parseShare reads a share: a number ≥ 0 (its proportion of the work).
func parseShare(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a share: give a number ≥ 0, such as 3 or 1.5", s)
	}
	return v, nil
}

func memoryText(d GPUDevice) string {
	switch {
	case d.Total == 0:
		return "memory unknown"
	case d.Free == 0:
		return humanBytes(d.Total) + ", free memory unknown"
	}
	return humanBytes(d.Free) + " free of " + humanBytes(d.Total)
}

// read writes the choice into o and says what is wrong with it, if
// anything.
func (g *gpuSection) read(o *LoadOptions) {
	o.Devices, o.Split, o.SplitMode, o.TensorGroup = nil, nil, "", 0
	var problems []string
	for i, c := range g.checks {
		if c.Checked && !c.Disabled() {
			o.Devices = append(o.Devices, g.status.Devices[i].ID)
		}
	}
	n := len(o.Devices)
	multi := n >= 2
	for i, c := range g.checks {
		setVisible(g.shares[i], multi)
		setEnabled(g.shares[i], c.Checked && !c.Disabled())
	}
	setVisible(g.split, multi)
	if n == 0 {
		problems = append(problems, "Choose at least one device.")
	}
	if multi {
		problems = append(problems, g.readSplit(o)...)
	}
	g.problem = strings.Join(problems, " ")
	setOptional(g.problemLabel, g.problem)
}

// readSplit reads the shares, partition and group size of n ≥ 2 devices.
func (g *gpuSection) readSplit(o *LoadOptions) []string {
	var problems []string
	var sum float64
	for i, c := range g.checks {
		if !c.Checked || c.Disabled() {
			continue
		}
		v, err := parseShare(g.shares[i].Text)
		if err != nil {
			problems = append(problems, "Share of "+g.status.Devices[i].ID+": "+err.Error()+".")
		}
		o.Split, sum = append(o.Split, v), sum+v
	}
	if len(problems) == 0 && sum == 0 {
		problems = append(problems, "Every share is 0: give some device a share.")
	}
	o.SplitMode = g.mode.Value()
	g.help.SetText(partitionHelp[o.SplitMode])
	setVisible(g.groupRow, o.SplitMode == "hybrid")
	if o.SplitMode == "hybrid" {
		g.setGroups(len(o.Devices))
		o.TensorGroup, _ = strconv.Atoi(g.group.Selected)
		if o.TensorGroup < 1 || len(o.Devices)%o.TensorGroup != 0 {
			problems = append(problems, fmt.Sprintf("Hybrid: %s devices per group do not divide the %d devices.", cmpOr(g.group.Selected, "no"), len(o.Devices)))
		}
	}
	return problems
}

// setGroups offers the divisors of n as group sizes, keeping the choice
// when it still divides (else the smallest group of two or more).
func (g *gpuSection) setGroups(n int) {
	var opts []string
	for t := 1; t <= n; t++ {
		if n%t == 0 {
			opts = append(opts, strconv.Itoa(t))
		}
	}
	if slices.Equal(opts, g.group.Options) && g.group.Selected != "" {
		return
	}
	g.group.Options = opts
	if !slices.Contains(opts, g.group.Selected) {
		g.group.Selected = opts[min(1, len(opts)-1)]
	}
	g.group.Refresh()
}

// showEstimate lists each chosen device's part, warning where it exceeds
// the device's free memory.
func (g *gpuSection) showEstimate(e MemoryEstimate) {
	g.perDevice.RemoveAll()
	if e.Problem != "" {
		g.problem = strings.TrimSpace(g.problem + " " + e.Problem)
		setOptional(g.problemLabel, g.problem)
	}
	for _, d := range e.Devices {
		g.perDevice.Add(deviceLine(d, g.status))
	}
}

// noFit says why auto found no layer to offload: the estimate's problem,
// else the memory.
func (g *gpuSection) noFit(one MemoryEstimate) {
	g.problem = cmpOr(one.Problem, "Not one layer fits the free memory of the chosen devices (auto leaves 10% free).")
	setOptional(g.problemLabel, g.problem)
}

func deviceLine(d DeviceEstimate, status GPUStatus) *widget.Label {
	s := fmt.Sprintf("%s: %s · %s", d.ID, cmpOr(d.Where, "its share"), humanBytes(d.VRAM))
	if d.Buffers > 0 || d.KV > 0 {
		s += fmt.Sprintf(" (weights %s, KV cache %s, buffers %s)", humanBytes(d.Weights), humanBytes(d.KV), humanBytes(d.Buffers))
	}
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	if dev, ok := status.Device(d.ID); ok && dev.Free > 0 {
		l.SetText(s + " of " + humanBytes(dev.Free) + " free")
		if d.VRAM > dev.Free {
			l.SetText("⚠ " + s + ": more than its " + humanBytes(dev.Free) + " free")
			l.Importance = widget.WarningImportance
		}
	}
	return l
}

// free is the chosen devices' free memory by ID (Total where free is
// unknown is not counted: auto fits nothing it cannot see).
func (g *gpuSection) free(id string) uint64 {
	d, _ := g.status.Device(id)
	return d.Free
}
