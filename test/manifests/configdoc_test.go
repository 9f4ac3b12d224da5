package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every environment variable a shipped config reads is documented in
// docs/configuration.md, so a user can see every knob in one place.
func TestEveryConfigVariableIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(distDir(), "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(configDir(), "*.yaml"))
	ref := regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+)`)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ref.FindAllStringSubmatch(string(raw), -1) {
			if !strings.Contains(string(doc), "`"+m[1]+"`") {
				t.Errorf("%s reads %s, which docs/configuration.md does not document", filepath.Base(f), m[1])
			}
		}
	}
}
