package promscrape

// families are the metric families a page's # TYPE lines declared.
type families[T Text] struct {
	types map[string]MetricType
	// last is the family of the latest # TYPE line: the samples that
	// follow it are normally its own, and are matched without a lookup.
	last     string
	lastType MetricType
	// names, when set, keeps the family names of earlier pages, so that
	// a Reader scraping the same endpoint again allocates none: a name
	// read from a buffer must be copied to be a map key.
	names map[string]string
}

// maxNames bounds the names kept across pages (a page of garbage declares
// any number).
const maxNames = 4096

func (f *families[T]) declare(name T, t MetricType) {
	if f.types == nil {
		f.types = make(map[string]MetricType, 64) // a page has tens of families
	}
	key, ok := f.names[string(name)]
	if !ok {
		key = string(name)
		if f.names != nil {
			if len(f.names) >= maxNames {
				clear(f.names)
			}
			f.names[key] = key
		}
	}
	f.types[key] = t
	f.last, f.lastType = key, t
}

func (f *families[T]) reset() {
	clear(f.types)
	f.last, f.lastType = "", Untyped
}

// suffixes are the endings that put a sample in a family named without
// them.
var suffixes = [...]string{"_bucket", "_count", "_sum", "_total", "_created", "_gsum", "_gcount", "_info"}

// classify sets the sample's family, type and part.
func (f *families[T]) classify(s *Sample[T]) {
	name := s.Name
	s.familyLen, s.Type, s.Part = uint32(len(name)), Untyped, PartValue
	if f.last == "" {
		return
	}
	if n := len(f.last); len(name) >= n && string(name[:n]) == f.last {
		if part, ok := partOf(f.lastType, name[n:]); ok {
			s.familyLen, s.Type, s.Part = uint32(n), f.lastType, part
			return
		}
	}
	if t, ok := f.types[string(name)]; ok {
		s.Type = t
		return
	}
	for _, suffix := range suffixes {
		n := len(name) - len(suffix)
		if n <= 0 || string(name[n:]) != suffix {
			continue
		}
		if t, ok := f.types[string(name[:n])]; ok {
			if part, ok := partOf(t, name[n:]); ok {
				s.familyLen, s.Type, s.Part = uint32(n), t, part
				return
			}
		}
	}
}

// partOf says which series of a family of type t a name ending in suffix
// (after the family's name) is, and whether the type has such a series.
func partOf[T Text](t MetricType, suffix T) (Part, bool) {
	if len(suffix) == 0 {
		return PartValue, true
	}
	switch string(suffix) {
	case "_bucket":
		return PartBucket, t == Histogram || t == GaugeHistogram
	case "_sum":
		return PartSum, t == Histogram || t == Summary
	case "_count":
		return PartCount, t == Histogram || t == Summary
	case "_gsum":
		return PartSum, t == GaugeHistogram
	case "_gcount":
		return PartCount, t == GaugeHistogram
	case "_created":
		return PartCreated, t == Counter || t == Histogram || t == Summary
	case "_total":
		return PartValue, t == Counter
	case "_info":
		return PartValue, t == Info
	}
	return PartValue, false
}
