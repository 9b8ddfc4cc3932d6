package app

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/gpucanary/gpucanary/monitor"
)

// screenshotsDir is where the README's screenshots live, from this
// package's directory.
const screenshotsDir = "../docs/screenshots"

// screenshotNames are the views' names in docs/screenshots, where the
// desktop end-to-end test's shots of the live windows are
// environments.png, processes.png…; these are NAME-detail.png.
var screenshotNames = map[string]string{"envs": "environments", "procs": "processes", "gpus": "gpus", "history": "history", "repair": "repair"}

// screenshotScales are the display scales the screenshots are made at:
// an ordinary display, and a HiDPI one (names ending @2x.png).
var screenshotScales = []float32{1, 2}

// TestScreenshots renders the GPU, processes, environments and history
// windows, and the repair's confirm dialog, from the demo's data (demoState: what `gpucanary demo` shows,
// read by a real engine) at the size they open with, at scale 1
// and 2, and keeps them in docs/screenshots/ for the README. A missing
// screenshot is made; one that no longer matches is written to
// testdata/failed/screenshots/ and the test fails: look at it, and if it
// is right, move it over the old one. At either scale each window's
// content must fit its size: a clipped label fails here.
func TestScreenshots(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	st := demoState(t)
	for _, view := range []string{"envs", "procs", "gpus", "history", "repair"} {
		open := demoWindows[view]
		for _, scale := range screenshotScales {
			name := screenshotNames[view] + "-detail.png"
			if scale != 1 {
				name = fmt.Sprintf("%s-detail@%.0fx.png", screenshotNames[view], scale)
			}
			t.Run(name, func(t *testing.T) {
				a := test.NewTempApp(t)
				u := newUI(a, demoDeps(st))
				u.now = func() time.Time { return goldenNow }
				samplesOf(u.wins, func() monitor.State { return cloneState(st) })
				win := open(u.wins)
				win.Canvas().(interface{ SetScale(float32) }).SetScale(scale)
				size := u.wins.sizes[win]
				if need := contentMinSize(win); need.Width > size.Width || need.Height > size.Height {
					t.Errorf("%q needs %v but opens at %v: its content is cut off", win.Title(), need, size)
				}
				win.Resize(size)
				win.Content().Refresh()
				img := win.Canvas().Capture()
				if b := img.Bounds(); b.Dx() != int(size.Width*scale) {
					t.Fatalf("captured %v at scale %v for a window of %v", b, scale, size)
				}
				checkScreenshot(t, name, img)
			})
		}
	}
}

// checkScreenshot compares img with the screenshot called name, making
// it when there is none.
func checkScreenshot(t *testing.T, name string, img image.Image) {
	t.Helper()
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 300<<10 {
		t.Errorf("%s is %d KB: keep screenshots under 300 KB", name, buf.Len()>>10)
	}
	path := filepath.Join(screenshotsDir, name)
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("made %s", path)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old, err := png.Decode(f)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if !samePixels(old, img) {
		failed := filepath.Join("testdata", "failed", "screenshots", name)
		if err := os.MkdirAll(filepath.Dir(failed), 0o755); err == nil {
			_ = os.WriteFile(failed, buf.Bytes(), 0o644)
		}
		t.Errorf("%s no longer matches what the window draws: see %s", path, failed)
	}
}

// samePixels compares two images pixel by pixel.
func samePixels(a, b image.Image) bool {
	if a.Bounds().Size() != b.Bounds().Size() {
		return false
	}
	na, nb := toNRGBA(a), toNRGBA(b)
	return bytes.Equal(na.Pix, nb.Pix)
}

func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) {
		return n
	}
	n := image.NewNRGBA(image.Rectangle{Max: img.Bounds().Size()})
	draw.Draw(n, n.Rect, img, img.Bounds().Min, draw.Src)
	return n
}
