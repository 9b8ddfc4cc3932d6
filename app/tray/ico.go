package tray

import (
	"bytes"
	"encoding/binary"
	"image/png"
)

// pngToICO makes a one-image ICO file holding png as it is. Sizes of 256
// and more are written as 0, as the format says.
func pngToICO(data []byte) []byte {
	w, h := 0, 0
	if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err == nil {
		w, h = cfg.Width, cfg.Height
	}
	dim := func(n int) uint8 {
		if n <= 0 || n >= 256 {
			return 0
		}
		return uint8(n)
	}
	var b bytes.Buffer
	// ICONDIR: reserved, type 1 (icon), one image.
	_ = binary.Write(&b, binary.LittleEndian, [3]uint16{0, 1, 1})
	// ICONDIRENTRY: width, height, palette, reserved, planes, bit count,
	// size of the data, offset of the data (6 + 16).
	b.Write([]byte{dim(w), dim(h), 0, 0})
	_ = binary.Write(&b, binary.LittleEndian, [2]uint16{1, 32})
	_ = binary.Write(&b, binary.LittleEndian, [2]uint32{uint32(len(data)), 22})
	b.Write(data)
	return b.Bytes()
}
