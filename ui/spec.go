package ui

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Drafter choices of the load dialog's "Speculative decoding" section.
const (
	draftOff   = "Off"
	draftNGram = "N-gram: text already in the conversation"
	draftSelf  = "Lower-bit copy of this model"
	draftModel = "Draft model"

	acceptStrict = "Strict: the model's own distribution, exactly"
	acceptTopK   = "Top-k: keep drafts among the 5 most probable"
	acceptTopP   = "Top-p: keep drafts inside the 0.9 pool"
)

// specSection is the load dialog's speculative decoding: the drafter, the
// draft length and the acceptance rule, written into opts as they change.
type specSection struct {
	opts     *LoadOptions
	drafter  *widget.Select
	quant    *widget.Select
	model    *widget.Select
	paths    map[string]string // draft model label → path
	n        *widget.Slider
	nValue   *widget.Label
	accept   *widget.RadioGroup
	note     *widget.Label
	box      *fyne.Container
	quantRow *fyne.Container
	modelRow *fyne.Container
}

// selfDraftTypes are the lower-bit copies that draft faster than their
// model (GGML kernels; Inferflow levels run simulated in F32 here).
var selfDraftTypes = []string{"Q4_0", "Q2_K", "Q3_K", "Q4_K"}

func newSpecSection(opts *LoadOptions, info ModelInfo, models []ModelInfo) *specSection {
	s := &specSection{opts: opts, paths: map[string]string{}}
	var labels []string
	for _, m := range models {
		if m.Path != info.Path {
			l := fmt.Sprintf("%s (%s)", m.Name, filepath.Base(m.Path))
			s.paths[l] = m.Path
			labels = append(labels, l)
		}
	}
	s.drafter = widget.NewSelect([]string{draftOff, draftNGram, draftSelf, draftModel}, func(string) { s.changed() })
	s.quant = widget.NewSelect(selfDraftTypes, func(string) { s.changed() })
	s.model = widget.NewSelect(labels, func(string) { s.changed() })
	s.model.PlaceHolder = "a smaller model with the same vocabulary"
	s.n, s.nValue = widget.NewSlider(1, 16), widget.NewLabel("")
	s.n.OnChanged = func(float64) { s.changed() }
	s.accept = widget.NewRadioGroup([]string{acceptStrict, acceptTopK, acceptTopP}, func(string) { s.changed() })
	s.note = helpLabel("")
	s.quantRow = container.NewBorder(nil, nil, fixedLabel("Copy as"), nil, s.quant)
	s.modelRow = container.NewBorder(nil, nil, fixedLabel("Draft model"), nil, s.model)
	s.box = container.NewVBox(
		helpLabel("A drafter proposes a few tokens and the model checks them all in one pass: replies come faster when the drafts are often right. The drafted and kept counts appear under each reply."),
		container.NewBorder(nil, nil, fixedLabel("Drafter"), nil, s.drafter),
		s.quantRow, s.modelRow,
		labelled("Draft length", s.n, s.nValue),
		s.accept, s.note,
	)
	// from the saved choices
	switch opts.Draft {
	case "ngram":
		s.drafter.SetSelected(draftNGram)
	case "self":
		s.drafter.SetSelected(draftSelf)
	case "model":
		s.drafter.SetSelected(draftModel)
	default:
		s.drafter.SetSelected(draftOff)
	}
	s.quant.SetSelected(selfDraftTypes[0])
	for _, t := range selfDraftTypes {
		if t == opts.DraftQuant {
			s.quant.SetSelected(t)
		}
	}
	for l, p := range s.paths {
		if p == opts.DraftModel {
			s.model.SetSelected(l)
		}
	}
	s.n.SetValue(float64(max(opts.DraftN, 5)))
	switch opts.SpecAccept {
	case "top-k":
		s.accept.SetSelected(acceptTopK)
	case "top-p":
		s.accept.SetSelected(acceptTopP)
	default:
		s.accept.SetSelected(acceptStrict)
	}
	s.changed()
	return s
}

// changed writes the widgets into opts and shows what applies.
func (s *specSection) changed() {
	if s.box == nil { // still building
		return
	}
	o := s.opts
	o.Draft, o.DraftQuant, o.DraftModel = "", "", ""
	s.quantRow.Hide()
	s.modelRow.Hide()
	switch s.drafter.Selected {
	case draftNGram:
		o.Draft = "ngram"
	case draftSelf:
		o.Draft, o.DraftQuant = "self", s.quant.Selected
		s.quantRow.Show()
	case draftModel:
		o.Draft, o.DraftModel = "model", s.paths[s.model.Selected]
		s.modelRow.Show()
	}
	o.DraftN = int(s.n.Value)
	s.nValue.SetText(fmt.Sprintf("%d tokens", o.DraftN))
	switch s.accept.Selected {
	case acceptTopK:
		o.SpecAccept = "top-k"
	case acceptTopP:
		o.SpecAccept = "top-p"
	default:
		o.SpecAccept = "strict"
	}
	on := o.Draft != ""
	for _, w := range []fyne.Disableable{s.n, s.accept} {
		if on {
			w.Enable()
		} else {
			w.Disable()
		}
	}
	switch {
	case !on:
		s.note.SetText("")
	case o.Draft == "model" && o.DraftModel == "":
		s.note.SetText("Choose a draft model: a smaller model with the same vocabulary (the load says so if it differs).")
	case o.SpecAccept != "strict":
		s.note.SetText("Top-k and top-p keep more drafts but change what the model would have written: replies are no longer sampled from the model's own distribution.")
	default:
		s.note.SetText("Strict keeps the model's distribution exactly; with greedy decoding the text is the same as without speculation. The draft length adapts, and drafting pauses while it does not pay.")
	}
}
