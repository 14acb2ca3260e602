package ui

import (
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// variantTheme is the app theme fixed to one variant.
type variantTheme struct {
	fyne.Theme
	v fyne.ThemeVariant
}

func (t variantTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.v)
}

// TestCodeBlockFollowsTheme: a code block drawn in one theme variant
// takes the other's background when the theme changes (it kept the
// first, a dark box under the light variant's dark code colours).
func TestCodeBlockFollowsTheme(t *testing.T) {
	a := test.NewApp()
	defer test.NewApp()
	a.Settings().SetTheme(variantTheme{Theme(), theme.VariantDark})
	b := newCodeBlock(newCodeSegment("x := 1", "go"))
	w := test.NewWindow(b)
	defer w.Close()
	bg := background(t, b)
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		a.Settings().SetTheme(variantTheme{Theme(), v})
		b.Refresh()
		want := Theme().Color(theme.ColorNameInputBackground, v)
		if got := bg.FillColor; !sameColour(got, want) {
			t.Errorf("variant %d: code block background %v, want the theme's %v", v, got, want)
		}
		if c := contrast(Theme().Color(theme.ColorNameForeground, v), over(bg.FillColor, Theme().Color(theme.ColorNameBackground, v))); c < 4.5 {
			t.Errorf("variant %d: text on the code block: contrast %.2f", v, c)
		}
	}
}

func background(t *testing.T, b *codeBlock) *canvas.Rectangle {
	for _, o := range test.WidgetRenderer(b).Objects() {
		if s, ok := o.(*fyne.Container); ok {
			if r, ok := s.Objects[0].(*canvas.Rectangle); ok {
				return r
			}
		}
	}
	t.Fatal("no background rectangle in the code block")
	return nil
}

func sameColour(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}
