package config_test

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// settingRow is a row of the Settings table in docs/guide.md: | `key` | type |
// default | meaning |.
var settingRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]+) \\| `([^`]+)` \\| ([^|]+) \\|$")

// TestDocsListEverySetting keeps the Settings section of docs/guide.md in
// step with Config: the same keys in the same order, each with its type
// and, read as TOML, the default Default gives it. The unknown-setting
// error sends the reader there.
func TestDocsListEverySetting(t *testing.T) {
	b, err := os.ReadFile("../../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Settings\n")
	if !ok {
		t.Fatal("docs/guide.md has no Settings section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	var keys []string
	def := reflect.ValueOf(config.Default())
	for _, line := range strings.Split(section, "\n") {
		m := settingRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, typ, dflt := m[1], strings.TrimSpace(m[2]), m[3]
		keys = append(keys, key)
		if key == "notify" {
			for _, k := range append(slices.Clone(config.NotifyKinds), config.NotifyNone) {
				if !strings.Contains(m[4], "`"+k+"`") && !strings.Contains(m[4], `"`+k+`"`) {
					t.Errorf("notify: docs/guide.md does not name the kind %s", k)
				}
			}
		}
		var read config.Config
		if err := toml.Unmarshal([]byte(key+" = "+dflt), &read); err != nil {
			t.Errorf("%s: the default `%s` is not TOML of its type: %v", key, dflt, err)
			continue
		}
		i := slices.Index(config.Keys(), key)
		if i < 0 {
			continue
		}
		got, want := reflect.ValueOf(read).Field(i), def.Field(i)
		if !reflect.DeepEqual(got.Interface(), want.Interface()) && !(got.Kind() == reflect.Slice && got.Len() == 0 && want.Len() == 0) {
			t.Errorf("%s: docs/guide.md says the default is %s, Default() has %v", key, dflt, want.Interface())
		}
		if w := typeWords(want.Type()); !strings.HasPrefix(typ, w) {
			t.Errorf("%s: docs/guide.md says its type is %q, want %q", key, typ, w)
		}
	}
	if !slices.Equal(keys, config.Keys()) {
		t.Errorf("the Settings table in docs/guide.md lists %v; the settings are %v", keys, config.Keys())
	}
}

// typeWords is how docs/guide.md names a setting's type.
func typeWords(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[config.Duration]():
		return "duration"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "list of strings"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.Bool:
		return "boolean"
	}
	return t.String()
}
