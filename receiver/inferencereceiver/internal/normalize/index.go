package normalize

// binding says what one exposed sample name contributes: to which output,
// as which part, with what preference and conversion.
type binding struct {
	out       output
	outIdx    int // index of out in the server's outputs, for grouping
	part      part
	rank      int
	divisor   float64
	attrLabel string
	drop      []string
}

// serverIndex resolves exposed sample names of one server kind in one map
// lookup per sample.
type serverIndex struct {
	kind       string
	modelLabel string
	bySample   map[string][]binding
	outputs    []output
}

var indexes = func() map[string]*serverIndex {
	m := make(map[string]*serverIndex, len(servers))
	for _, s := range servers {
		m[s.kind] = buildIndex(s)
	}
	return m
}()

// prefixRank separates the spellings of one family under different
// prefixes; it is larger than any family rank.
const prefixRank = 100

func buildIndex(s server) *serverIndex {
	idx := &serverIndex{kind: s.kind, modelLabel: s.modelLabel, bySample: map[string][]binding{}}
	outIdx := map[output]int{}
	for pi, prefix := range s.prefixes {
		for _, f := range s.families {
			oi, ok := outIdx[f.out]
			if !ok {
				oi = len(idx.outputs)
				outIdx[f.out] = oi
				idx.outputs = append(idx.outputs, f.out)
			}
			b := binding{
				out:       f.out,
				outIdx:    oi,
				rank:      f.rank + pi*prefixRank,
				divisor:   f.divisor,
				attrLabel: f.attrLabel,
				drop:      f.drop,
			}
			if b.divisor == 0 {
				b.divisor = 1
			}
			add := func(name string, p part) {
				b.part = p
				idx.bySample[prefix+name] = append(idx.bySample[prefix+name], b)
			}
			switch f.expo {
			case expoGauge:
				add(f.name, partValue)
			case expoCounter:
				add(f.name+"_total", partValue)
				add(f.name+"_created", partCreated)
			case expoHistogram:
				add(f.name+"_bucket", partBucket)
				add(f.name+"_sum", partSum)
				add(f.name+"_count", partCount)
				add(f.name+"_created", partCreated)
			case expoRaw:
				add(f.name, f.feeds)
			}
		}
	}
	return idx
}

// Known reports whether kind is a server kind this package can normalize.
func Known(kind string) bool {
	_, ok := indexes[kind]
	return ok
}
