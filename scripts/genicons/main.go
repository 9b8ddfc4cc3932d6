// Command genicons draws GPU Canary's tray icons into assets/: a status light
// (a filled disc in the state's colour) holding a GPU chip, with a dark rim
// and a light inner ring so it reads on light and dark panels at 16-24 px.
//
// Run it with `go run ./scripts/genicons` from the repository root; the
// PNGs it writes are committed and embedded by package assets. It also
// draws the application icon at each hicolor theme size into
// packaging/linux/icons, which make install and the Debian packages put in
// the icon theme for the menu entry.
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
)

type state struct {
	name string
	fill color.RGBA
	mark string // "chip" or "dash" (no driver)
}

var states = []state{
	{"healthy", color.RGBA{0x2e, 0xa0, 0x43, 0xff}, "chip"},
	{"warning", color.RGBA{0xe0, 0x9b, 0x00, 0xff}, "chip"},
	{"error", color.RGBA{0xd1, 0x24, 0x2f, 0xff}, "chip"},
	{"nodriver", color.RGBA{0x6e, 0x77, 0x81, 0xff}, "dash"},
	{"simulated", color.RGBA{0x82, 0x50, 0xdf, 0xff}, "chip"},
}

const size = 64

// hicolorSizes are the sizes desktops look for in the hicolor icon theme
// (menus and launchers use 16 to 256 px); each is drawn, not scaled.
var hicolorSizes = []int{16, 22, 24, 32, 48, 64, 128, 256}

// appIcon is the application icon: the status light in canary yellow.
var appIcon = state{"app", color.RGBA{0xf2, 0xc9, 0x1e, 0xff}, "chip"}

func main() {
	out := "assets"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	for _, s := range states {
		img := draw(s, size)
		path := filepath.Join(out, "tray-"+s.name+".png")
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genicons:", err)
			os.Exit(1)
		}
		if err := png.Encode(f, img); err != nil {
			fmt.Fprintln(os.Stderr, "genicons: encoding", path+":", err)
			os.Exit(1)
		}
		f.Close()
	}
	if err := writePNG(filepath.Join(out, "icon.png"), draw(appIcon, size)); err != nil {
		fmt.Fprintln(os.Stderr, "genicons:", err)
		os.Exit(1)
	}
	hicolor := "packaging/linux/icons/hicolor"
	if len(os.Args) > 2 {
		hicolor = os.Args[2]
	}
	for _, n := range hicolorSizes {
		path := filepath.Join(hicolor, fmt.Sprintf("%dx%d", n, n), "apps", "io.github.gpucanary.png")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "genicons:", err)
			os.Exit(1)
		}
		if err := writePNG(path, draw(appIcon, n)); err != nil {
			fmt.Fprintln(os.Stderr, "genicons:", err)
			os.Exit(1)
		}
	}
}

// writePNG encodes img into a new file at path.
func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return f.Close()
}

// draw renders one icon, size pixels square, with 4x4 supersampling for
// smooth edges.
func draw(s state, size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					px := (float64(x) + (float64(sx)+0.5)/ss) / float64(size)
					py := (float64(y) + (float64(sy)+0.5)/ss) / float64(size)
					c, ok := shade(s, px, py)
					if !ok {
						continue
					}
					r += float64(c.R)
					g += float64(c.G)
					b += float64(c.B)
					a++
				}
			}
			if a == 0 {
				continue
			}
			n := a
			img.SetNRGBA(x, y, color.NRGBA{uint8(r / n), uint8(g / n), uint8(b / n), uint8(255 * a / (ss * ss))})
		}
	}
	return img
}

// shade is the colour at (x, y) in the unit square, and whether it is inside.
func shade(s state, x, y float64) (color.RGBA, bool) {
	dx, dy := x-0.5, y-0.5
	d := math.Hypot(dx, dy)
	dark := color.RGBA{0x1b, 0x1f, 0x24, 0xff}
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	switch {
	case d > 0.5:
		return color.RGBA{}, false
	case d > 0.46:
		return dark, true
	case d > 0.42:
		return white, true
	}
	ax, ay := math.Abs(dx), math.Abs(dy)
	switch s.mark {
	case "dash":
		if ax < 0.2 && ay < 0.06 {
			return white, true
		}
	default:
		// A chip: a white square with a coloured core, and pins on each side.
		if ax < 0.17 && ay < 0.17 {
			if ax < 0.09 && ay < 0.09 {
				return s.fill, true
			}
			return white, true
		}
		pin := func(a, b float64) bool {
			return a >= 0.17 && a < 0.25 && (math.Abs(b) < 0.03 || math.Abs(math.Abs(b)-0.1) < 0.03)
		}
		if pin(ax, dy) || pin(ay, dx) {
			return white, true
		}
	}
	return s.fill, true
}
