package app

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
)

// TestCommandTextWrapsAtSpaces lays a fix command out at widths from
// narrower than its longest word to wider than it all: its lines are
// always whole words, and together the command as written.
func TestCommandTextWrapsAtSpaces(t *testing.T) {
	test.NewTempApp(t)
	const cmd = "uv pip install --python /home/ada/work/llm/.venv --reinstall --no-deps torch==2.10.0+cu128 --index-url https://download.pytorch.org/whl/cu128"
	words := strings.Fields(cmd)
	for _, width := range []float32{120, 260, 400, 640, 1400} {
		c := commandText(cmd)
		c.Resize(fyne.NewSize(max(width, c.MinSize().Width), 400))
		c.Resize(fyne.NewSize(max(width, c.MinSize().Width), c.MinSize().Height))
		var lines []string
		find(c, func(o fyne.CanvasObject) bool {
			if tx, ok := o.(*canvas.Text); ok && o.Visible() && tx.Text != "" {
				lines = append(lines, strings.TrimSpace(tx.Text))
			}
			return false
		})
		if got := strings.Join(lines, " "); got != cmd {
			t.Errorf("at %v: lines %q do not make the command", width, lines)
		}
		for _, l := range lines {
			for _, w := range strings.Fields(l) {
				if !slices.Contains(words, w) {
					t.Errorf("at %v: a word was cut: %q in lines %q", width, w, lines)
				}
			}
		}
		if width == 1400 && len(lines) != 1 {
			t.Errorf("wide enough for one line, yet %d: %q", len(lines), lines)
		}
		if width == 260 && len(lines) < 3 {
			t.Errorf("at %v the command is not wrapped: %q", width, lines)
		}
	}
}
