package e2etest

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// InstallBinary copies build's executable into a directory of its own with
// plain write(2) calls, as a container runtime writes the files of an image
// layer it unpacks, and returns the copy's path (removed with the test). Memory measurements run the copy because the page cache of the
// file as the Go linker wrote it (through a mapping) holds huge folios that
// the kernel maps whole: a process running it has the entire executable
// resident (VmRSS's RssFile, smaps' FilePmdMapped), which no node running
// the image sees. docs/performance.md has both measurements.
func InstallBinary(t testing.TB, build Build) string {
	t.Helper()
	src := BinaryOf(t, build)
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := copyFile(src, dst); err != nil {
		t.Fatalf("installing %s: %v", src, err)
	}
	return dst
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	// Not io.Copy: it would hand the copy to copy_file_range, which may
	// share the source's page cache instead of writing the file anew.
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, buf); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
