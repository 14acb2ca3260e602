package ui

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// luminance is WCAG 2's relative luminance of an opaque colour.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// over composites c (possibly translucent) over an opaque background.
func over(c, bg color.Color) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	b := color.NRGBAModel.Convert(bg).(color.NRGBA)
	a := float64(n.A) / 255
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*a + float64(y)*(1-a))) }
	return color.NRGBA{R: mix(n.R, b.R), G: mix(n.G, b.G), B: mix(n.B, b.B), A: 0xff}
}

// TestThemeContrast: text colours (foreground, placeholder, the muted
// "disabled" colour low-importance labels use, and the warning, error,
// success and link colours of notes, badges and links) meet WCAG AA,
// 4.5:1, on every background the window draws text on, in both variants.
func TestThemeContrast(t *testing.T) {
	th := Theme()
	for _, v := range []fyne.ThemeVariant{theme.VariantDark, theme.VariantLight} {
		bg := th.Color(theme.ColorNameBackground, v)
		backs := map[string]color.Color{"background": bg}
		for _, n := range []fyne.ThemeColorName{theme.ColorNameOverlayBackground, theme.ColorNameMenuBackground,
			theme.ColorNameInputBackground, theme.ColorNameHeaderBackground} {
			backs[string(n)] = over(th.Color(n, v), bg)
		}
		backs["selection"] = over(th.Color(theme.ColorNameSelection, v), bg)
		backs["hover"] = over(th.Color(theme.ColorNameHover, v), bg)
		for _, text := range []fyne.ThemeColorName{theme.ColorNameDisabled, theme.ColorNamePlaceHolder, theme.ColorNameForeground,
			theme.ColorNameWarning, theme.ColorNameError, theme.ColorNameSuccess, theme.ColorNameHyperlink} {
			for name, b := range backs {
				if c := contrast(th.Color(text, v), b); c < 4.5 {
					t.Errorf("variant %d: %s text on %s: contrast %.2f < 4.5", v, text, name, c)
				}
			}
		}
	}
	// the check itself: black on white is 21:1, and Fyne's own muted
	// colour on its dark background fails
	if c := contrast(color.Black, color.White); math.Abs(c-21) > 0.01 {
		t.Errorf("contrast(black, white) = %v", c)
	}
	if d := theme.DefaultTheme(); contrast(d.Color(theme.ColorNameDisabled, theme.VariantDark), d.Color(theme.ColorNameBackground, theme.VariantDark)) >= 4.5 {
		t.Error("Fyne's disabled colour passes: the override is not needed")
	}
	if d := theme.DefaultTheme(); contrast(d.Color(theme.ColorNameWarning, theme.VariantLight), d.Color(theme.ColorNameBackground, theme.VariantLight)) >= 4.5 {
		t.Error("Fyne's light warning colour passes: the override is not needed")
	}
}

// TestFilledButtonsReadable: buttons filled with the primary, warning,
// error or success colour (high, warning, danger and success importance)
// keep their white text at 3:1 at least (WCAG's large and bold text:
// button labels are bold), in both variants.
func TestFilledButtonsReadable(t *testing.T) {
	th := Theme()
	for _, v := range []fyne.ThemeVariant{theme.VariantDark, theme.VariantLight} {
		for _, fill := range []fyne.ThemeColorName{theme.ColorNamePrimary, theme.ColorNameWarning, theme.ColorNameError, theme.ColorNameSuccess} {
			on := th.Color(theme.ColorNameForegroundOnPrimary, v)
			switch fill {
			case theme.ColorNameWarning:
				on = th.Color(theme.ColorNameForegroundOnWarning, v)
			case theme.ColorNameError:
				on = th.Color(theme.ColorNameForegroundOnError, v)
			case theme.ColorNameSuccess:
				on = th.Color(theme.ColorNameForegroundOnSuccess, v)
			}
			if c := contrast(on, th.Color(fill, v)); c < 3 {
				t.Errorf("variant %d: text on a %s button: contrast %.2f < 3", v, fill, c)
			}
		}
	}
}
