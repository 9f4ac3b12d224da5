package pricing

import (
	"bytes"
	_ "embed"
	"sync"
)

// BundledFile is the name bundled rows report as their origin.
const BundledFile = "bundled.csv"

//go:embed bundled.csv
var bundledCSV []byte

var bundledRows = sync.OnceValues(func() ([]parsedRow, error) {
	return ParseCSV(BundledFile, bytes.NewReader(bundledCSV))
})

// Bundled returns the table embedded in the binary: AWS on-demand Linux prices
// in us-east-1 for the accelerated instance families, each row with its source
// and the date of that source.
func Bundled() (*Table, error) {
	rows, err := bundledRows()
	if err != nil {
		return nil, err
	}
	return Build(Options{}, rows)
}
