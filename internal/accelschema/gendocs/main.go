// Command gendocs writes docs/metrics.md from the accelschema registry.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func main() {
	out := flag.String("out", "docs/metrics.md", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, accelschema.Markdown(), 0o644); err != nil {
		log.Fatal(err)
	}
}
