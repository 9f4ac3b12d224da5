package e2etest

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// InstallBinary copies build's executable into a directory of its own in
// 32 KiB write(2) calls, as containerd's unpacker writes the files of an
// image layer (its copy buffer is 32 KiB), and returns the copy's path
// (removed with the test). Memory measurements run the copy because how a
// file was written decides the folios its page cache holds, and a process
// maps a faulted folio whole: the Go linker's output (written through a
// mapping) is cached in 2 MiB folios and a file written in 1 MiB writes in
// 1 MiB ones, so either is all resident in a running collector (the agent:
// RssFile ≈ its 49 MiB), while one written in 32 KiB writes is resident
// only where touched (34 MiB for an idle agent). docs/performance.md has
// both measurements, and why a node may still see the larger one.
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
	buf := make([]byte, 32<<10)
	if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, buf); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
