package hostguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// serverCode is what starts an HTTP server in Go or the collector.
var serverCode = regexp.MustCompile(`\.ToServer\(|http\.Server\{|ListenAndServe|http\.Serve\(|\.ServeTLS\(`)

// testRig says whether a directory holds test rigs, not product code: the
// simulator and the fakes of other systems (e2etest, kubetest, …test).
func testRig(dir string) bool {
	for _, part := range strings.Split(filepath.ToSlash(dir), "/") {
		if part == "accelsim" || part == "testdata" || strings.HasSuffix(part, "test") {
			return true
		}
	}
	return false
}

// Every package of the product that serves HTTP puts its handler behind this
// guard: a new listener without it fails here, so "every listener" stays
// every listener.
func TestEveryListenerInTheProductIsGuarded(t *testing.T) {
	root := filepath.Join("..", "..")
	serving := map[string][]string{} // package dir → files that start a server
	guarded := map[string]bool{}
	for _, top := range []string{"receiver", "processor", "exporter", "extension", "connector", "internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if testRig(path) || path == "." {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dir := filepath.Dir(path)
			if serverCode.Match(data) && !strings.HasSuffix(dir, filepath.Join("internal", "hostguard")) {
				serving[dir] = append(serving[dir], filepath.Base(path))
			}
			if strings.Contains(string(data), `"github.com/otelcol-accel/otelcol-accel/internal/hostguard"`) {
				guarded[dir] = true
			}
			return nil
		})
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
	}
	require.NotEmpty(t, serving, "the scan found no listener at all; the console's exporter serves one, so the scan is broken")
	for dir, files := range serving {
		require.True(t, guarded[dir], "%s starts an HTTP server (%v) but does not import internal/hostguard: wrap its handler in hostguard.Guard.Handler", dir, files)
	}
}
