// Package pricing holds the price tables the accelerator_cost processor joins
// device resources to: a bundled table of AWS on-demand prices (embedded in the
// binary, every row with its source and date) and user tables in CSV or YAML
// that override bundled rows or add new ones (other regions, spot or
// savings-plan factors, on-premises $/GPU-hour).
//
// A row is keyed by instance type and region. The price of one accelerator
// is the instance price divided by its accelerator count, times the row's
// price factor and the table-wide price factor; a NeuronCore costs its
// device's price divided by the cores per device.
//
// Files are parsed strictly: an unknown column, a row with the wrong number of
// fields, a number that does not parse or is negative, or a row that ends up
// without a price is an *Error naming the file and line, so a user can fix the
// table before the collector starts. A Watcher re-reads the files when their
// content changes and keeps the last good table when the new one is broken.
package pricing
