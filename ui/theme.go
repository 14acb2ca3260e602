package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Theme is Fyne's default theme with text that meets WCAG AA contrast
// (4.5:1) everywhere: Fyne draws low-importance labels (sidebar times,
// slider hints, the GPU note, empty states) in its "disabled" colour,
// #39393a on #171718 in the dark variant (1.6:1). Here that colour is a
// muted grey readable on every background, selection included; disabled
// controls still read as such beside the foreground colour.
func Theme() fyne.Theme { return appTheme{theme.DefaultTheme()} }

type appTheme struct{ fyne.Theme }

// mutedText is the "disabled" colour per variant, chosen with
// TestThemeContrast against the theme's backgrounds.
var mutedText = map[fyne.ThemeVariant]color.NRGBA{
	theme.VariantDark:  {R: 0x9a, G: 0x9a, B: 0x9e, A: 0xff},
	theme.VariantLight: {R: 0x55, G: 0x55, B: 0x58, A: 0xff},
}

// statusText are the colours of text that says something by its hue
// (warnings, errors, "fits" badges, links), per variant, where Fyne's own
// fail 4.5:1: in the light variant its orange is 2.2:1 on white and its
// green 1.5:1; in the dark one its link blue is 4.0:1 and its red 3.8:1
// on a selected row. The same hues, darker or lighter; buttons filled
// with them keep white text readable.
var statusText = map[fyne.ThemeVariant]map[fyne.ThemeColorName]color.NRGBA{
	theme.VariantDark: {
		theme.ColorNameError:     {R: 0xff, G: 0x80, B: 0x74, A: 0xff},
		theme.ColorNameHyperlink: {R: 0x74, G: 0xa6, B: 0xff, A: 0xff},
	},
	theme.VariantLight: {
		theme.ColorNameWarning:   {R: 0x8a, G: 0x45, B: 0x00, A: 0xff},
		theme.ColorNameError:     {R: 0xb7, G: 0x1c, B: 0x1c, A: 0xff},
		theme.ColorNameSuccess:   {R: 0x17, G: 0x64, B: 0x1f, A: 0xff},
		theme.ColorNameHyperlink: {R: 0x1a, G: 0x56, B: 0xc4, A: 0xff},
	},
}

// lightPlaceholder replaces the light variant's placeholder grey (#888888,
// 3.5:1 on white).
var lightPlaceholder = color.NRGBA{R: 0x55, G: 0x55, B: 0x58, A: 0xff}

func (t appTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if c, ok := mutedText[v]; ok && n == theme.ColorNameDisabled {
		return c
	}
	if c, ok := statusText[v][n]; ok {
		return c
	}
	if v == theme.VariantLight && n == theme.ColorNamePlaceHolder {
		return lightPlaceholder
	}
	return t.Theme.Color(n, v)
}
