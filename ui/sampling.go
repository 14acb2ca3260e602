package ui

import (
	"errors"
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/presets"
)

// samplingPanel edits the sampling settings of the loaded model: a preset
// picker, the decoding strategy, and every setting of the chain grouped
// with explanations. Each valid change goes to App.samplingChanged.
type samplingPanel struct {
	a          *App
	params     presets.Params
	presetName string // "" when edited since a preset was applied
	updating   bool   // widgets are being set from params: no callbacks

	preset       *widget.Select
	savePreset   *widget.Button
	deletePreset *widget.Button
	decoding     *widget.Select
	decodingHelp *widget.Label
	help         *widget.Label     // the help of the setting last pointed at or changed
	scroll       *container.Scroll // the groups of settings
	seedRandom   *widget.Check
	seed         *widget.Entry
	errLabel     *widget.Label
	fields       map[string]*paramField
	texts        map[string]*textField
	groups       []*groupView
	content      fyne.CanvasObject
}

// paramField is one setting: label, value entry, slider and help; why
// says why the engine cannot honour it, when it cannot.
type paramField struct {
	spec   paramSpec
	name   *fieldName
	slider *widget.Slider
	entry  *widget.Entry
	why    *widget.Label
}

// textField is a setting typed as text.
type textField struct {
	spec  textSpec
	entry *widget.Entry
	why   *widget.Label
}

type groupView struct {
	g      paramGroup
	note   *widget.Label
	grid   *fyne.Container // the fields, hidden when the stage does not apply
	fields []*paramField
}

func newSamplingPanel(a *App) *samplingPanel {
	p := &samplingPanel{a: a, params: presets.Default(), presetName: "Balanced", fields: map[string]*paramField{}, texts: map[string]*textField{}}
	p.preset = widget.NewSelect(nil, p.applyPreset)
	p.preset.PlaceHolder = "Custom"
	p.savePreset = widget.NewButtonWithIcon("Save as…", theme.DocumentSaveIcon(), p.askPresetName)
	p.deletePreset = widget.NewButtonWithIcon("", theme.DeleteIcon(), p.removePreset)
	p.decoding = widget.NewSelect(decodingLabels(), p.decodingChosen)
	p.decodingHelp = helpLabel("")
	p.help = helpLabel(settingHint)
	p.seedRandom = widget.NewCheck("New random seed for every reply", p.seedChanged)
	p.seed = widget.NewEntry()
	p.seed.OnChanged = func(string) { p.seedChanged(p.seedRandom.Checked) }
	p.errLabel = widget.NewLabel("")
	p.errLabel.Importance = widget.DangerImportance
	p.errLabel.Wrapping = fyne.TextWrapWord
	p.errLabel.Hide()
	p.content = p.layout()
	p.refreshPresets()
	p.show()
	return p
}

func helpLabel(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	l.SizeName = theme.SizeNameCaptionText
	return l
}

func decodingLabels() []string {
	var out []string
	for _, d := range decodingChoices {
		out = append(out, d.label)
	}
	return out
}

func (p *samplingPanel) layout() fyne.CanvasObject {
	top := container.NewVBox(
		container.NewBorder(nil, nil, widget.NewLabel("Preset"), container.NewHBox(p.savePreset, p.deletePreset), p.preset),
		container.NewBorder(nil, nil, widget.NewLabel("Decoding"), nil, p.decoding),
		p.decodingHelp,
		p.errLabel,
	)
	acc := widget.NewAccordion()
	for _, g := range paramGroups {
		gv := &groupView{g: g, note: helpLabel(""), grid: container.NewVBox()}
		gv.note.Importance = widget.WarningImportance
		for _, s := range g.specs {
			f := p.newField(s)
			gv.fields = append(gv.fields, f)
			gv.grid.Add(f.view())
		}
		p.groups = append(p.groups, gv)
		if g.title == replyGroup { // the most changed setting: always shown, above the stages
			top.Add(gv.grid)
			continue
		}
		// the group's note under its settings, which come first: above
		// them it pushed min-p below the chart in a 800 px window
		acc.Append(widget.NewAccordionItem(g.title, container.NewVBox(gv.note, gv.grid, helpLabel(g.help))))
	}
	acc.Append(widget.NewAccordionItem("Seed", container.NewVBox(
		helpLabel("The same seed, settings and conversation give the same reply."), p.seedRandom, p.seed)))
	adv := container.NewVBox()
	for _, s := range textSpecs {
		adv.Add(p.newTextField(s))
	}
	acc.Append(widget.NewAccordionItem("Advanced", adv))
	acc.MultiOpen = true
	acc.Open(0) // temperature, top-k, top-p, min-p
	// One help line for every setting, fixed under the scroll: a help
	// under each slider took 150 px of an 800 px window from the
	// next-token chart below.
	p.scroll = container.NewVScroll(acc)
	return container.NewBorder(top, twoLines(p.help), nil, nil, p.scroll)
}

// twoLines keeps room for two lines of l, so that the panel above does
// not jump as l's text changes length.
func twoLines(l *widget.Label) fyne.CanvasObject {
	probe := helpLabel("1\n2")
	space := canvas.NewRectangle(color.Transparent)
	space.SetMinSize(fyne.NewSize(0, probe.MinSize().Height))
	return container.NewStack(space, l)
}

// settingHint is the help line before a setting is pointed at.
const settingHint = "Point at a setting's name, or change it, to see what it does."

// showHelp puts f's help in the panel's help line.
func (p *samplingPanel) showHelp(f *paramField) {
	if t := f.spec.label + ": " + f.spec.help; p.help.Text != t {
		p.help.SetText(t)
	}
}

func (p *samplingPanel) newField(s paramSpec) *paramField {
	f := &paramField{spec: s, slider: widget.NewSlider(s.min, s.max), entry: widget.NewEntry(), why: whyLabel()}
	// No scroller inside the entry: its text then clips with the panel's
	// scroll (and the software painter of screenshots clips it too).
	f.entry.Wrapping, f.entry.Scroll = fyne.TextWrapOff, container.ScrollNone
	f.slider.Step = s.step
	f.name = newFieldName(s.label, func() { p.showHelp(f) })
	f.slider.OnChanged = func(v float64) { p.sliderMoved(f, v) }
	f.entry.OnChanged = func(t string) { p.entryTyped(f, t) }
	p.fields[s.key] = f
	return f
}

func (p *samplingPanel) newTextField(s textSpec) fyne.CanvasObject {
	f := &textField{spec: s, entry: widget.NewMultiLineEntry(), why: whyLabel()}
	f.entry.SetPlaceHolder(s.placeholder)
	// Wrapped over two rows: on one unscrolled line the stage order's
	// text made the whole panel 458 px wide, wider than a 900 px
	// window leaves it. Newlines typed are spaces to every parser.
	f.entry.Wrapping, f.entry.Scroll = fyne.TextWrapWord, container.ScrollNone
	f.entry.SetMinRowsVisible(2)
	f.entry.OnChanged = func(t string) { p.textTyped(f, t) }
	p.texts[s.key] = f
	return container.NewVBox(widget.NewLabel(s.label), f.entry, f.why, helpLabel(s.help))
}

// whyLabel is a field's hidden note saying why the engine ignores it.
func whyLabel() *widget.Label {
	l := helpLabel("")
	l.Importance = widget.WarningImportance
	l.Hide()
	return l
}

// SetUnsupported disables the settings the engine cannot honour (a
// remote server's dialect), each with the reason; nil enables them all.
func (p *samplingPanel) SetUnsupported(why map[string]string) {
	for key, f := range p.fields {
		p.limit(why[key], f.why, f.slider, f.entry)
	}
	for key, f := range p.texts {
		p.limit(why[key], f.why, f.entry)
	}
}

func (p *samplingPanel) limit(why string, note *widget.Label, ws ...fyne.Disableable) {
	for _, w := range ws {
		setEnabled(w, why == "")
	}
	if why != "" {
		why = "Not sent to this server: " + why + "."
	}
	setOptional(note, why)
}

func (p *samplingPanel) textTyped(f *textField, text string) {
	if p.updating {
		return
	}
	if err := f.spec.parse(&p.params, text); err != nil {
		p.showError(fmt.Errorf("%s: %w", f.spec.label, err))
		return
	}
	p.changed()
}

// labelWidth is the width of every setting's name, so that all sliders
// start at the same x, whatever the name's length.
const labelWidth = 132

func (f *paramField) view() fyne.CanvasObject {
	h := f.entry.MinSize().Height
	value := container.NewGridWrap(fyne.NewSize(84, h), f.entry)
	return container.NewVBox(
		container.NewBorder(nil, nil, container.NewGridWrap(fyne.NewSize(labelWidth, h), f.name), value, f.slider),
		f.why,
	)
}

// fieldName is a setting's name; pointing at it or tapping it shows the
// setting's help in the panel's help line.
type fieldName struct {
	widget.Label
	show func()
}

func newFieldName(text string, show func()) *fieldName {
	n := &fieldName{show: show}
	n.Text, n.Truncation = text, fyne.TextTruncateEllipsis
	n.ExtendBaseWidget(n)
	return n
}

func (n *fieldName) MouseIn(*desktop.MouseEvent)    { n.show() }
func (n *fieldName) MouseMoved(*desktop.MouseEvent) {}
func (n *fieldName) MouseOut()                      {}
func (n *fieldName) Tapped(*fyne.PointEvent)        { n.show() }

func formatValue(s paramSpec, v float64) string {
	if s.integer {
		return strconv.Itoa(int(v))
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// SetParams shows p, e.g. the settings remembered for a model just loaded,
// without reporting a change.
func (p *samplingPanel) SetParams(params presets.Params, preset string) {
	p.params, p.presetName = params.Clone(), preset
	p.show()
}

// show sets every widget from p.params.
func (p *samplingPanel) show() {
	p.updating = true
	defer func() { p.updating = false }()
	for _, f := range p.fields {
		v := f.spec.get(&p.params)
		f.slider.SetValue(v)
		f.entry.SetText(formatValue(f.spec, v))
	}
	for _, f := range p.texts {
		f.entry.SetText(f.spec.format(&p.params))
	}
	p.decoding.SetSelected(decodingLabel(p.params.Decoding))
	p.seedRandom.SetChecked(p.params.Seed == presets.SeedRandom)
	if p.params.Seed != presets.SeedRandom {
		p.seed.SetText(strconv.FormatUint(p.params.Seed, 10))
	}
	p.showPresetName()
	p.showRelevance()
}

func decodingLabel(v string) string {
	for _, d := range decodingChoices {
		if d.value == v {
			return d.label
		}
	}
	return decodingChoices[0].label
}

func (p *samplingPanel) showPresetName() {
	if p.presetName == "" {
		p.preset.ClearSelected()
	} else {
		p.preset.SetSelected(p.presetName)
	}
	_, user := p.userPreset(p.presetName)
	setEnabled(p.deletePreset, user)
}

// showRelevance greys out settings the current strategy does not use,
// with the reason.
func (p *samplingPanel) showRelevance() {
	for _, d := range decodingChoices {
		if d.value == p.params.Decoding {
			p.decodingHelp.SetText(d.help)
		}
	}
	for _, g := range p.groups {
		why := ""
		if g.g.unused != nil {
			why = g.g.unused(&p.params)
		}
		setOptional(g.note, why)
		setVisible(g.grid, g.g.skipped == nil || !g.g.skipped(&p.params))
	}
	setEnabled(p.seed, !p.seedRandom.Checked)
}

func (p *samplingPanel) sliderMoved(f *paramField, v float64) {
	if p.updating {
		return
	}
	p.updating = true
	f.entry.SetText(formatValue(f.spec, v))
	p.updating = false
	f.spec.set(&p.params, v)
	p.showHelp(f)
	p.changed()
}

func (p *samplingPanel) entryTyped(f *paramField, text string) {
	if p.updating {
		return
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		p.showError(errors.New(f.spec.label + ": not a number"))
		return
	}
	if f.spec.integer {
		v = float64(int(v))
	}
	p.updating = true
	f.slider.SetValue(v)
	p.updating = false
	f.spec.set(&p.params, v)
	p.showHelp(f)
	p.changed()
}

func (p *samplingPanel) decodingChosen(label string) {
	if p.updating {
		return
	}
	for _, d := range decodingChoices {
		if d.label == label {
			p.params.Decoding = d.value
		}
	}
	p.changed()
}

func (p *samplingPanel) seedChanged(random bool) {
	if p.updating {
		return
	}
	if random {
		p.params.Seed = presets.SeedRandom
	} else {
		v, err := strconv.ParseUint(strings.TrimSpace(p.seed.Text), 10, 64)
		if err != nil || v == presets.SeedRandom {
			setEnabled(p.seed, true)
			p.showError(errors.New("Seed: type a whole number"))
			return
		}
		p.params.Seed = v
	}
	p.changed()
}

// changed validates the edited settings and reports them.
func (p *samplingPanel) changed() {
	p.presetName = ""
	p.updating = true
	p.showPresetName()
	p.updating = false
	p.showRelevance()
	if err := p.a.lib.ValidateSampling(p.params); err != nil {
		p.showError(err)
		return
	}
	p.showError(nil)
	p.a.samplingChanged(p.params, "")
}

func (p *samplingPanel) showError(err error) {
	if err == nil {
		setOptional(p.errLabel, "")
		return
	}
	setOptional(p.errLabel, "⚠ "+err.Error())
}

// allPresets lists the built-in presets, then the user's.
func (p *samplingPanel) allPresets() []presets.Preset {
	return append(presets.Builtin(), p.a.settings.UserPresets...)
}

func (p *samplingPanel) userPreset(name string) (int, bool) {
	i := slices.IndexFunc(p.a.settings.UserPresets, func(x presets.Preset) bool { return x.Name == name })
	return i, i >= 0
}

func (p *samplingPanel) refreshPresets() {
	var names []string
	for _, x := range p.allPresets() {
		names = append(names, x.Name)
	}
	p.updating = true
	p.preset.SetOptions(names)
	p.showPresetName()
	p.updating = false
}

// applyPreset replaces the settings with the preset chosen.
func (p *samplingPanel) applyPreset(name string) {
	if p.updating {
		return
	}
	x, ok := presets.Find(p.allPresets(), name)
	if !ok {
		return
	}
	p.SetParams(x.Params, name)
	p.showError(nil)
	p.a.samplingChanged(p.params, name)
}

func (p *samplingPanel) askPresetName() {
	if p.a.win == nil {
		return
	}
	name := widget.NewEntry()
	name.SetPlaceHolder("My preset")
	dialog.ShowForm("Save preset", "Save", "Cancel", []*widget.FormItem{widget.NewFormItem("Name", name)}, func(ok bool) {
		if ok {
			p.SaveUserPreset(name.Text)
		}
	}, p.a.win)
}

// SaveUserPreset stores the current settings as a user preset (replacing
// one of the same name); built-in names are refused.
func (p *samplingPanel) SaveUserPreset(name string) {
	name = strings.TrimSpace(name)
	if name == "" {
		return
	}
	if _, ok := presets.Find(presets.Builtin(), name); ok {
		p.showError(errors.New("“" + name + "” is a built-in preset: choose another name"))
		return
	}
	x := presets.Preset{Name: name, Params: p.params.Clone()}
	if i, ok := p.userPreset(name); ok {
		p.a.settings.UserPresets[i] = x
	} else {
		p.a.settings.UserPresets = append(p.a.settings.UserPresets, x)
	}
	p.presetName = name
	p.refreshPresets()
	p.a.samplingChanged(p.params, name)
}

func (p *samplingPanel) removePreset() {
	i, ok := p.userPreset(p.presetName)
	if !ok {
		return
	}
	p.a.settings.UserPresets = slices.Delete(p.a.settings.UserPresets, i, i+1)
	p.presetName = ""
	p.refreshPresets()
	p.a.samplingChanged(p.params, "")
}
