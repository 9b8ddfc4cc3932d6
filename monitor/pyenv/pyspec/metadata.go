package pyspec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// MetadataLimit is the most ParseMetadata reads: a METADATA's header block
// is a few kilobytes, but its body (the long description) can be megabytes.
const MetadataLimit = 1 << 20

// Metadata is the part of a dist-info METADATA (or PKG-INFO) header that
// identifies the distribution.
type Metadata struct {
	Name         string
	Version      string
	RequiresDist []string
	// Truncated is true when the header did not end within MetadataLimit.
	Truncated bool
}

// ErrNoMetadataVersion is returned when a METADATA header has no Version.
var ErrNoMetadataVersion = errors.New("no Version header")

// metadataReaders are the buffers METADATA headers are read through:
// every package of every environment has one, and a buffer each was
// most of what a check of many environments allocated.
var metadataReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// ParseMetadata reads only the RFC 822 header block of a METADATA file: it
// stops at the first blank line or after MetadataLimit bytes, whichever comes
// first, and never reads more than MetadataLimit bytes from r.
func ParseMetadata(r io.Reader) (Metadata, error) {
	var m Metadata
	lr := &io.LimitedReader{R: r, N: MetadataLimit}
	br := metadataReaders.Get().(*bufio.Reader)
	defer metadataReaders.Put(br)
	br.Reset(lr)
	defer br.Reset(nil)
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return m, fmt.Errorf("read metadata header: %w", err)
		}
		if line == "" {
			m.Truncated = lr.N == 0
			break
		}
		trimmed := strings.TrimRight(line, "\r\n")
		if trimmed == "" {
			break // the blank line that ends the header block
		}
		m.header(trimmed)
		if err == io.EOF {
			m.Truncated = lr.N == 0
			break
		}
	}
	if m.Version == "" {
		return m, ErrNoMetadataVersion
	}
	return m, nil
}

// header records one header line; continuation lines (leading whitespace)
// belong to a field this parser does not keep.
func (m *Metadata) header(line string) {
	line, _, _ = strings.Cut(line, "\r") // a lone CR ends a line for Python's email parser too
	if line == "" || line[0] == ' ' || line[0] == '\t' {
		return
	}
	k, v, ok := strings.Cut(line, ":")
	if !ok {
		return
	}
	v = strings.TrimSpace(v)
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "name":
		if m.Name == "" {
			m.Name = v
		}
	case "version":
		if m.Version == "" {
			m.Version = v
		}
	case "requires-dist":
		m.RequiresDist = append(m.RequiresDist, v)
	}
}
