// Package pathjson writes a path that is not UTF-8 into JSON exactly.
//
// A path on Linux may hold any byte but NUL and '/'; a JSON string holds
// only Unicode, and encoding/json writes each byte that is not UTF-8 as
// U+FFFD, after which the path no longer names its folder. Every JSON
// object that holds an environment path (an environment's "path", the
// "env" of an event, a process or a finding) therefore carries, only for
// such a path, a sibling field with the exact bytes in standard base64:
// "path_bytes" beside "path", "env_bytes" beside "env" (docs/json.md, "Paths
// that are not UTF-8"). Reading the JSON back restores the exact path
// from it. It imports nothing of GPU Canary's, so that monitor and the
// leaves below it (health) write the same field the same way.
package pathjson

import (
	"bytes"
	"encoding/base64"
	"unicode/utf8"
)

// WithExactBytes adds "key": base64(path) as the first field of the JSON
// object obj when path is not UTF-8; otherwise obj is returned as it is.
func WithExactBytes(obj []byte, key, path string) []byte {
	if utf8.ValidString(path) || len(obj) < 2 || obj[0] != '{' {
		return obj
	}
	var b bytes.Buffer
	b.Grow(len(obj) + len(key) + base64.StdEncoding.EncodedLen(len(path)) + 8)
	b.WriteString(`{"` + key + `":"` + base64.StdEncoding.EncodeToString([]byte(path)) + `"`)
	if rest := obj[1:]; !bytes.Equal(rest, []byte("}")) {
		b.WriteByte(',')
	}
	b.Write(obj[1:])
	return b.Bytes()
}
