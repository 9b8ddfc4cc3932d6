package uvproject

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// Marker limits the pin to the platforms that have CUDA wheels, so macOS
// keeps resolving from PyPI (KB-FACTS, uv).
const Marker = "sys_platform == 'linux' or sys_platform == 'win32'"

// ErrConflict is returned when pyproject.toml already sends a package, or
// the index name, elsewhere: GPU Canary does not overwrite a choice the
// user made.
var ErrConflict = errors.New("already set differently in pyproject.toml")

// ErrUnsupportedLayout is returned when [tool.uv.sources] or
// tool.uv.index is written inline or with dotted keys, which a line edit
// cannot extend without rewriting what the user wrote.
var ErrUnsupportedLayout = errors.New("written inline or with dotted keys")

// IndexName is the name the pin gives the index of a variant tag, as in
// KB-FACTS: "pytorch-cu128".
func IndexName(tag string) string { return "pytorch-" + tag }

// IndexURL is the index of a variant tag under indexBase
// (https://download.pytorch.org/whl + cu128). The tag joins the base's
// path, before its query and fragment: a mirror's base may carry a token
// (https://mirror/whl?token=…), and …?token=…/cu128 is another URL. A base
// that does not parse (the settings and --index-base refuse one) gets the
// tag appended.
func IndexURL(indexBase, tag string) string {
	u, err := url.Parse(indexBase)
	if err != nil {
		return strings.TrimRight(indexBase, "/") + "/" + tag
	}
	return u.JoinPath(tag).String()
}

// pinPlan is what a pin has to add.
type pinPlan struct {
	name     string   // the index the sources name: ours, or the user's with the same url
	addIndex bool     // the [[tool.uv.index]] block is missing
	missing  []string // packages with no source yet
}

// uvTables is tool.uv read with exact keys (go-toml matches struct
// fields without regard to case; uv does not).
type uvTables struct {
	sources map[string]any // nil when there is no tool.uv.sources
	index   []uvIndex
}

func readUV(doc map[string]any) uvTables {
	uv := table(table(doc, "tool"), "uv")
	t := uvTables{sources: table(uv, "sources")}
	list, _ := uv["index"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		url, _ := m["url"].(string)
		t.index = append(t.index, uvIndex{Name: name, URL: url})
	}
	return t
}

// indexURL is the url of the index called name, or "".
func (t uvTables) indexURL(name string) string {
	for _, ix := range t.index {
		if name != "" && ix.Name == name {
			return ix.URL
		}
	}
	return ""
}

// planPin compares what doc has with the pin; a package or index name
// that points elsewhere is a conflict.
func planPin(doc uvTables, url, tag string, packages []string) (pinPlan, error) {
	p := pinPlan{name: IndexName(tag), addIndex: true}
	for _, ix := range doc.index {
		if ix.Name != "" && sameURL(ix.URL, url) {
			p.name, p.addIndex = ix.Name, false
			break
		}
	}
	if p.addIndex {
		if other := doc.indexURL(p.name); other != "" {
			return p, fmt.Errorf("index %q is %w: it points at %s, not %s", p.name, ErrConflict, other, url)
		}
	}
	for _, pkg := range packages {
		cur, ok := doc.sources[pkg]
		if !ok {
			p.missing = append(p.missing, pkg)
			continue
		}
		idx := sourceIndex(cur)
		if idx == p.name || idx != "" && sameURL(doc.indexURL(idx), url) {
			continue
		}
		return p, fmt.Errorf("%s is %w: [tool.uv.sources] has %s = %s; change it to index %q by hand to get the CUDA build", pkg, ErrConflict, pkg, describeSource(cur), p.name)
	}
	return p, nil
}

func sameURL(a, b string) bool {
	return a != "" && strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// PinText adds the [[tool.uv.index]] for indexBase/tag and a
// [tool.uv.sources] entry per package (limited to Linux and Windows by
// Marker) to the text of a pyproject.toml. Every byte outside the
// inserted lines is kept; the only other change is a line ending added to
// a last line that had none. It reports whether anything changed: a
// second call changes nothing. The result is proven by parsing it back.
func PinText(src []byte, indexBase, tag string, packages []string) ([]byte, bool, error) {
	if err := checkPinArgs(indexBase, tag, packages); err != nil {
		return nil, false, err
	}
	text := string(src)
	bom := ""
	if strings.HasPrefix(text, "\ufeff") {
		bom, text = "\ufeff", text[len("\ufeff"):]
	}
	var m map[string]any
	if err := toml.Unmarshal([]byte(text), &m); err != nil {
		return nil, false, fmt.Errorf("reading pyproject.toml: %w", err)
	}
	doc := readUV(m)
	url := IndexURL(indexBase, tag)
	plan, err := planPin(doc, url, tag, packages)
	if err != nil {
		return nil, false, err
	}
	if !plan.addIndex && len(plan.missing) == 0 {
		return src, false, nil
	}

	nl := "\n"
	if strings.Contains(text, "\r\n") {
		nl = "\r\n"
	}
	lines := []string{}
	if text != "" {
		lines = splitLines(text)
	}
	lay := scanTOML(text)
	sources, lastIndex := -1, -1
	for i, h := range lay.headers {
		switch {
		case !h.array && h.is("tool", "uv", "sources"):
			sources = i
		case h.array && h.is("tool", "uv", "index"):
			lastIndex = i
		}
	}
	if len(plan.missing) > 0 && sources < 0 && doc.sources != nil {
		return nil, false, fmt.Errorf("[tool.uv.sources] is %w, which a line edit cannot extend without rewriting it; add the sources for %s by hand", ErrUnsupportedLayout, strings.Join(plan.missing, ", "))
	}
	if plan.addIndex && lastIndex < 0 && len(doc.index) > 0 {
		return nil, false, fmt.Errorf("tool.uv.index is %w rather than as [[tool.uv.index]] tables; add the index %s by hand", ErrUnsupportedLayout, url)
	}

	ins := map[int][]string{} // line index -> lines to insert after it (-1: at the start)
	eof := len(lines) - 1
	var entries []string
	for _, pkg := range plan.missing {
		entries = append(entries, fmt.Sprintf(`%s = [{ index = "%s", marker = "%s" }]`, pkg, plan.name, Marker)+nl)
	}
	if plan.addIndex {
		block := []string{"[[tool.uv.index]]" + nl, fmt.Sprintf(`name = "%s"`, plan.name) + nl, fmt.Sprintf(`url = "%s"`, url) + nl, "explicit = true" + nl}
		at := eof
		if lastIndex >= 0 {
			at = lay.tableEnd(lastIndex)
		}
		if at >= 0 {
			block = append([]string{nl}, block...)
		}
		ins[at] = append(ins[at], block...)
	}
	if len(plan.missing) > 0 {
		if sources >= 0 {
			at := lay.tableEnd(sources)
			ins[at] = append(ins[at], entries...)
		} else {
			block := append([]string{"[tool.uv.sources]" + nl}, entries...)
			if eof >= 0 || len(ins[eof]) > 0 {
				block = append([]string{nl}, block...)
			}
			ins[eof] = append(ins[eof], block...)
		}
	}
	var out strings.Builder
	out.WriteString(bom)
	out.WriteString(strings.Join(ins[-1], ""))
	for i, l := range lines {
		out.WriteString(l)
		if add := ins[i]; len(add) > 0 {
			if !strings.HasSuffix(l, "\n") {
				out.WriteString(nl)
			}
			out.WriteString(strings.Join(add, ""))
		}
	}
	res := []byte(out.String())
	if err := provePin(text, res, plan, url, packages); err != nil {
		return nil, false, fmt.Errorf("nothing was changed: the edited file did not read back as intended (%v); tool.uv is probably %w", err, ErrUnsupportedLayout)
	}
	return res, true, nil
}

// Compiled at first use, not at each start of the program: a check
// runs none of them, and regexps were a seventh of its start (docs/performance.md).
var (
	safeTag  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
	safeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`) }) // PEP 508 names
	safeURL  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^https?://[^\s"'\\]+$`) })
)

// checkPinArgs keeps what goes into the TOML strings plain.
func checkPinArgs(indexBase, tag string, packages []string) error {
	if !safeURL().MatchString(indexBase) || !safeTag().MatchString(tag) {
		return fmt.Errorf("pinning an index: %q + %q is not an index URL", indexBase, tag)
	}
	if len(packages) == 0 {
		return errors.New("pinning an index: no packages to pin")
	}
	for _, p := range packages {
		if !safeName().MatchString(p) {
			return fmt.Errorf("pinning an index: %q is not a package name", p)
		}
	}
	return nil
}

// tableEnd is the last line holding a key or value of the table that
// header i opens (the header itself when it has none): new keys go there,
// before the blank lines and comments that lead into the next table.
func (lay tomlLayout) tableEnd(i int) int {
	h := lay.headers[i]
	next := len(lay.content)
	if i+1 < len(lay.headers) {
		next = lay.headers[i+1].line
	}
	end := h.line
	for n := h.line + 1; n < next; n++ {
		if lay.content[n] {
			end = n
		}
	}
	return end
}

// provePin parses the edited text back: it must be TOML, send every
// package to the index, and hold exactly what the original held apart
// from the added entries.
func provePin(orig string, edited []byte, plan pinPlan, url string, packages []string) error {
	var before, after map[string]any
	if err := toml.Unmarshal(stripBOM(edited), &after); err != nil {
		return fmt.Errorf("the result would not be TOML: %w", err)
	}
	doc := readUV(after)
	if got := doc.indexURL(plan.name); !sameURL(got, url) {
		return fmt.Errorf("the result has index %q at %q, not %s", plan.name, got, url)
	}
	for _, pkg := range packages {
		if got := sourceIndex(doc.sources[pkg]); got != plan.name {
			return fmt.Errorf("the result sends %s to %q, not %q", pkg, got, plan.name)
		}
	}
	if err := toml.Unmarshal([]byte(orig), &before); err != nil {
		return err
	}
	uv := table(table(after, "tool"), "uv")
	if src := table(uv, "sources"); src != nil {
		for _, pkg := range plan.missing {
			delete(src, pkg)
		}
	}
	if plan.addIndex {
		list, _ := uv["index"].([]any)
		i := slices.IndexFunc(list, func(e any) bool { t, _ := e.(map[string]any); return t["name"] == plan.name })
		if i >= 0 {
			uv["index"] = slices.Delete(list, i, i+1)
		}
	}
	prune(after, before)
	if !reflect.DeepEqual(before, after) {
		return errors.New("the result changes more than the added entries")
	}
	return nil
}

// table is m[key] when it is a table.
func table(m map[string]any, key string) map[string]any {
	t, _ := m[key].(map[string]any)
	return t
}

// prune removes from after the tables and arrays the edit created empty
// (those missing from before), recursively.
func prune(after, before map[string]any) {
	for k, v := range after {
		b, had := before[k]
		switch v := v.(type) {
		case map[string]any:
			bt, _ := b.(map[string]any)
			prune(v, bt)
			if len(v) == 0 && !had {
				delete(after, k)
			}
		case []any:
			if len(v) == 0 && !had {
				delete(after, k)
			}
		}
	}
}
