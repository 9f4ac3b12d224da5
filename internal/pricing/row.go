package pricing

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// AnyInstanceType in the instance_type column makes a row match by
// accelerator model instead of by instance type: the way to price on-premises
// or bare-metal devices that have no instance type.
const AnyInstanceType = "*"

// Row is one priced instance type (or, with instance type "*", one priced
// accelerator model) in one region.
type Row struct {
	InstanceType string
	Region       string
	// PricePerHour is the instance's list price in USD per hour.
	PricePerHour float64
	// PricePerAcceleratorHour, when set, prices one accelerator directly (an
	// on-premises $/GPU-hour) and wins over PricePerHour / AcceleratorCount.
	PricePerAcceleratorHour float64
	AcceleratorCount        int
	// AcceleratorModel is the model as the table names it ("H100", "A10G",
	// "Inferentia2"); model rows match hw.model on word boundaries.
	AcceleratorModel string
	// AcceleratorMemoryGB is the memory of one accelerator in GiB.
	AcceleratorMemoryGB float64
	// CoresPerAccelerator is the NeuronCores per Neuron device (0 for GPUs).
	CoresPerAccelerator int
	// PriceFactor multiplies the list price: 0.3 for a spot price 70% below
	// on-demand, 0.72 for a savings plan. 1 when not set.
	PriceFactor float64
	Source      string
	Date        string

	// Origin is "file:line" of the row that last defined or overrode this one.
	Origin string

	// effective is the price of one accelerator per hour after both factors;
	// computed when the table is built.
	effective float64
}

// AcceleratorHourly is the effective price of one accelerator per hour: list
// price per accelerator × the row's price factor × the table's price factor.
func (r Row) AcceleratorHourly() float64 { return r.effective }

// Key identifies a row in a table.
func (r Row) Key() Key {
	k := makeKey(r.InstanceType, r.Region)
	if k.InstanceType == AnyInstanceType {
		k.Model = strings.ToLower(strings.TrimSpace(r.AcceleratorModel))
	}
	return k
}

// Key is the join key of a row: instance type and region, lower-cased; rows
// that match by model ("*") are told apart by their model.
type Key struct{ InstanceType, Region, Model string }

func makeKey(instanceType, region string) Key {
	return Key{InstanceType: strings.ToLower(strings.TrimSpace(instanceType)), Region: strings.ToLower(strings.TrimSpace(region))}
}

// Columns of a pricing file, in the order the bundled table uses. Every
// column but instance_type is optional in a row that overrides an existing
// one; a new row needs a price and, unless priced per accelerator, a count.
var Columns = []string{
	"instance_type", "region", "price_per_hour", "price_per_accelerator_hour",
	"accelerator_count", "accelerator_model", "accelerator_memory_gb",
	"cores_per_accelerator", "price_factor", "source", "date",
}

// fieldSet records which columns a parsed row set, so that an override only
// replaces what it names.
type fieldSet uint16

const (
	setRegion fieldSet = 1 << iota
	setPrice
	setPricePerAccel
	setCount
	setModel
	setMemory
	setCores
	setFactor
	setSource
	setDate
)

// parsedRow is a row as read from one file, before merging.
type parsedRow struct {
	Row
	set  fieldSet
	file string
	line int
}

// maxPrice guards against typos (a price in cents, an extra digit): no
// instance costs a thousand dollars an hour per accelerator today.
const maxPrice = 10000

// setColumn parses one cell into the row. Empty cells leave the field unset.
func (p *parsedRow) setColumn(column, value string) error {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	switch column {
	case "instance_type":
		p.InstanceType = value
	case "region":
		p.Region, p.set = value, p.set|setRegion
	case "price_per_hour":
		f, err := parsePrice(column, value)
		if err != nil {
			return err
		}
		p.PricePerHour, p.set = f, p.set|setPrice
	case "price_per_accelerator_hour":
		f, err := parsePrice(column, value)
		if err != nil {
			return err
		}
		p.PricePerAcceleratorHour, p.set = f, p.set|setPricePerAccel
	case "accelerator_count":
		n, err := parseCount(column, value, 1)
		if err != nil {
			return err
		}
		p.AcceleratorCount, p.set = n, p.set|setCount
	case "accelerator_model":
		p.AcceleratorModel, p.set = value, p.set|setModel
	case "accelerator_memory_gb":
		f, err := parseNonNegative(column, value)
		if err != nil {
			return err
		}
		p.AcceleratorMemoryGB, p.set = f, p.set|setMemory
	case "cores_per_accelerator":
		n, err := parseCount(column, value, 0)
		if err != nil {
			return err
		}
		p.CoresPerAccelerator, p.set = n, p.set|setCores
	case "price_factor":
		f, err := parseNonNegative(column, value)
		if err != nil {
			return err
		}
		if f == 0 || f > 10 {
			return fmt.Errorf("price_factor %q must be in (0, 10]: 0.3 means 70%% below the listed price", value)
		}
		p.PriceFactor, p.set = f, p.set|setFactor
	case "source":
		p.Source, p.set = value, p.set|setSource
	case "date":
		if _, err := time.Parse(time.DateOnly, value); err != nil {
			return fmt.Errorf("date %q is not YYYY-MM-DD", value)
		}
		p.Date, p.set = value, p.set|setDate
	default:
		return fmt.Errorf("unknown column %q (known columns: %s)", column, strings.Join(Columns, ", "))
	}
	return nil
}

func knownColumn(name string) bool {
	for _, c := range Columns {
		if c == name {
			return true
		}
	}
	return false
}

func parseNonNegative(column, value string) (float64, error) {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s %q is not a number", column, value)
	}
	if f < 0 {
		return 0, fmt.Errorf("%s %q is negative", column, value)
	}
	return f, nil
}

func parsePrice(column, value string) (float64, error) {
	f, err := parseNonNegative(column, value)
	if err != nil {
		return 0, err
	}
	if f > maxPrice*1000 {
		return 0, fmt.Errorf("%s %q is implausibly large (USD per hour expected)", column, value)
	}
	return f, nil
}

func parseCount(column, value string, minimum int) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a whole number", column, value)
	}
	if n < minimum {
		return 0, fmt.Errorf("%s %q must be at least %d", column, value, minimum)
	}
	if n > 1024 {
		return 0, fmt.Errorf("%s %q is implausibly large", column, value)
	}
	return n, nil
}

// merge applies an override: every field the override set replaces the
// base's.
func (p *parsedRow) merge(base Row) Row {
	r := base
	if p.set&setPrice != 0 {
		r.PricePerHour = p.PricePerHour
	}
	if p.set&setPricePerAccel != 0 {
		r.PricePerAcceleratorHour = p.PricePerAcceleratorHour
	}
	if p.set&setCount != 0 {
		r.AcceleratorCount = p.AcceleratorCount
	}
	if p.set&setModel != 0 {
		r.AcceleratorModel = p.AcceleratorModel
	}
	if p.set&setMemory != 0 {
		r.AcceleratorMemoryGB = p.AcceleratorMemoryGB
	}
	if p.set&setCores != 0 {
		r.CoresPerAccelerator = p.CoresPerAccelerator
	}
	if p.set&setFactor != 0 {
		r.PriceFactor = p.PriceFactor
	}
	if p.set&setSource != 0 {
		r.Source = p.Source
	}
	if p.set&setDate != 0 {
		r.Date = p.Date
	}
	r.Origin = p.origin()
	return r
}

func (p *parsedRow) origin() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// complete checks that a merged row can price something.
func (r Row) complete() error {
	switch {
	case r.PricePerHour == 0 && r.PricePerAcceleratorHour == 0:
		return fmt.Errorf("row for %q in %q has no price: set price_per_hour (instance) or price_per_accelerator_hour", r.InstanceType, r.Region)
	case r.PricePerAcceleratorHour == 0 && r.AcceleratorCount == 0:
		return fmt.Errorf("row for %q in %q has price_per_hour but no accelerator_count", r.InstanceType, r.Region)
	case r.InstanceType == AnyInstanceType && r.AcceleratorModel == "":
		return fmt.Errorf("a row with instance_type \"*\" matches by model and needs accelerator_model")
	}
	if per := r.listPerAccelerator(); per > maxPrice {
		return fmt.Errorf("row for %q in %q prices one accelerator at %.2f USD/h, which is implausible", r.InstanceType, r.Region, per)
	}
	return nil
}

func (r Row) listPerAccelerator() float64 {
	if r.PricePerAcceleratorHour > 0 {
		return r.PricePerAcceleratorHour
	}
	if r.AcceleratorCount == 0 {
		return 0
	}
	return r.PricePerHour / float64(r.AcceleratorCount)
}
