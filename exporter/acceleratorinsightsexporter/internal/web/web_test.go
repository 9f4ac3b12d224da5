package web

import (
	"bytes"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The console must work in an air-gapped cluster under a strict
// Content-Security-Policy (default-src 'self', no inline script or style):
// every asset index.html names is embedded, nothing comes from another
// origin, and nothing is inline. The JS modules' imports resolve within
// Assets, no module writes HTML from strings, and no embedded file is dead.
func TestIndexReferencesOnlyEmbeddedAssets(t *testing.T) {
	doc := parseIndex(t)
	referenced := map[string]bool{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			checkElement(t, n, referenced)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(referenced) == 0 {
		t.Fatal("index.html references no assets")
	}
	for _, js := range jsFiles(t) {
		if !referenced[js] {
			continue
		}
		followImports(t, js, referenced)
	}
	err := fs.WalkDir(Assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "index.html" {
			return err
		}
		if !referenced[p] {
			t.Errorf("%s is embedded but neither index.html nor any module references it", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func parseIndex(t *testing.T) *html.Node {
	t.Helper()
	b, err := Assets.ReadFile("index.html")
	if err != nil {
		t.Fatalf("index.html is not at the root of Assets: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func checkElement(t *testing.T, n *html.Node, referenced map[string]bool) {
	t.Helper()
	switch n.Data {
	case "style":
		t.Errorf("index.html has an inline <style> element; the CSP allows only style-src 'self'")
	case "script":
		if attr(n, "src") == "" {
			t.Errorf("index.html has an inline <script>; the CSP allows only script-src 'self'")
		}
		if n.FirstChild != nil && strings.TrimSpace(n.FirstChild.Data) != "" {
			t.Errorf("<script src=%q> also has an inline body", attr(n, "src"))
		}
		if attr(n, "type") != "module" {
			t.Errorf("<script src=%q> is not type=module", attr(n, "src"))
		}
	}
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		switch {
		case key == "style":
			t.Errorf("<%s> has a style attribute; the CSP blocks inline styles", n.Data)
		case strings.HasPrefix(key, "on"):
			t.Errorf("<%s> has an inline %s handler; the CSP blocks it", n.Data, key)
		case key == "src" || (key == "href" && n.Data == "link"):
			referenced[localAsset(t, n.Data, a.Val)] = true
		case key == "href":
			if isRemote(a.Val) {
				t.Errorf("<%s href=%q> leaves the console", n.Data, a.Val)
			}
		}
	}
}

// localAsset checks a reference is a relative path to an embedded file
// (relative, so the console works under a path prefix) and returns it.
func localAsset(t *testing.T, tag, ref string) string {
	t.Helper()
	if isRemote(ref) || strings.HasPrefix(ref, "/") {
		t.Errorf("<%s> references %q: assets must be relative paths inside the binary", tag, ref)
		return ref
	}
	p := path.Clean(ref)
	if _, err := fs.Stat(Assets, p); err != nil {
		t.Errorf("<%s> references %q, which is not embedded: %v", tag, ref, err)
	}
	return p
}

func isRemote(ref string) bool {
	r := strings.ToLower(strings.TrimSpace(ref))
	return strings.HasPrefix(r, "http:") || strings.HasPrefix(r, "https:") || strings.HasPrefix(r, "//") || strings.HasPrefix(r, "data:")
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

var (
	importRe = regexp.MustCompile(`(?m)(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|\bimport\s*\(\s*)['"]([^'"]+)['"]`)
	remoteRe = regexp.MustCompile(`https?://[^'"\s)]+`)
	// Ways to turn a string into markup or code: the console builds DOM
	// nodes instead, so API text is never parsed as HTML.
	unsafeRe = regexp.MustCompile(`\.(innerHTML|outerHTML|insertAdjacentHTML)\b|document\.write|\beval\s*\(|new Function\s*\(|setAttribute\(\s*['"]style['"]`)
)

// The one URL a module may name: the SVG namespace, an identifier, not a
// fetch.
const svgNamespace = "http://www.w3.org/2000/svg"

func jsFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(Assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".js") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// followImports marks every module js imports, transitively, checking that
// each is relative and embedded.
func followImports(t *testing.T, js string, referenced map[string]bool) {
	t.Helper()
	b, err := Assets.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, m := range remoteRe.FindAllString(src, -1) {
		if m != svgNamespace {
			t.Errorf("%s names a remote URL %s: everything must come from the binary", js, m)
		}
	}
	for _, m := range unsafeRe.FindAllString(src, -1) {
		t.Errorf("%s uses %s: build DOM nodes (dom.js) instead", js, m)
	}
	for _, m := range importRe.FindAllStringSubmatch(src, -1) {
		spec := m[1]
		if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
			t.Errorf("%s imports %q: only relative imports of embedded modules work offline", js, spec)
			continue
		}
		dep := path.Join(path.Dir(js), spec)
		if _, err := fs.Stat(Assets, dep); err != nil {
			t.Errorf("%s imports %q, which is not embedded", js, spec)
			continue
		}
		if !referenced[dep] {
			referenced[dep] = true
			followImports(t, dep, referenced)
		}
	}
}

// The stylesheet loads nothing from elsewhere either.
func TestStylesheetsLoadNothingRemote(t *testing.T) {
	err := fs.WalkDir(Assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".css") {
			return err
		}
		b, err := Assets.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`url\(\s*['"]?([^'")]+)|@import\s+['"]?([^'";\s]+)`).FindAllStringSubmatch(string(b), -1) {
			ref := m[1] + m[2]
			if isRemote(ref) && !strings.HasPrefix(ref, "data:") {
				t.Errorf("%s loads %s", p, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
