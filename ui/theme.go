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

// lightPlaceholder replaces the light variant's placeholder grey (#888888,
// 3.5:1 on white).
var lightPlaceholder = color.NRGBA{R: 0x55, G: 0x55, B: 0x58, A: 0xff}

func (t appTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if c, ok := mutedText[v]; ok && n == theme.ColorNameDisabled {
		return c
	}
	if v == theme.VariantLight && n == theme.ColorNamePlaceHolder {
		return lightPlaceholder
	}
	return t.Theme.Color(n, v)
}
