// Package quantlab is the Quantization Lab's application service, shared by
// `flowchat quantlab` and the GUI's Lab screen: it runs eval.RunLab behind
// a result cache, turns the report into a table and charts, and generates
// the same prompt side by side across levels with the tokens that diverge
// from the base marked.
//
// Charts are drawn with gonum.org/v1/plot rendered to an image.Image
// (vgimg), not by hand with image/draw: a size-vs-quality chart needs a log
// axis with decade ticks, point labels that avoid the frame, and readable
// text, which means a font rasterizer and tick placement; plot brings all
// of that (fonts included) for a few hundred KiB of binary, and the GUI can
// show the same image.Image in a canvas.Image. Bars are drawn by a small
// plotter of ours because plot's BarChart starts every bar at 0, which a
// log axis cannot show.
//
// Nothing here imports Fyne: the GUI wraps these functions.
package quantlab

import _ "embed"

// DefaultText is the bundled evaluation text (about 3,500 TinyStories-style
// tokens written for this project; the shared testdata's
// text/tinystories_eval.txt), used when the user names no text file.
//
//go:embed eval_text.txt
var DefaultText string
