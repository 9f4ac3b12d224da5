package normalize

import "github.com/otelcol-accel/otelcol-accel/internal/promscrape"

// binding says what one exposed sample name contributes: to which output,
// as which part, with what preference and conversion.
type binding struct {
	out       output
	outIdx    int // index of out in the server's outputs, for grouping
	dialect   int // index of the dialect whose samples it reads
	part      part
	rank      int
	divisor   float64
	attrLabel string
	drop      []string
}

// serverIndex resolves exposed sample names of one server kind in one map
// lookup per sample.
type serverIndex struct {
	kind string
	// modelLabels holds each dialect's model label, in dialect order.
	modelLabels []string
	bySample    map[string][]binding
	outputs     []output
}

var indexes = func() map[string]*serverIndex {
	m := make(map[string]*serverIndex, len(servers))
	for _, s := range servers {
		m[s.kind] = buildIndex(s)
	}
	return m
}()

// prefixRank separates the spellings of one family under different
// prefixes and dialects; it is larger than any family rank.
const prefixRank = 100

func buildIndex(s server) *serverIndex {
	idx := &serverIndex{kind: s.kind, bySample: map[string][]binding{}}
	outIdx := map[output]int{}
	// spelling counts (dialect, prefix) pairs: a family spelt by a later
	// one ranks after the same output spelt by an earlier one.
	spelling := 0
	for di, d := range s.dialects {
		idx.modelLabels = append(idx.modelLabels, d.modelLabel)
		for _, prefix := range d.prefixes {
			for _, f := range d.families {
				oi, ok := outIdx[f.out]
				if !ok {
					oi = len(idx.outputs)
					outIdx[f.out] = oi
					idx.outputs = append(idx.outputs, f.out)
				}
				b := binding{
					out:       f.out,
					outIdx:    oi,
					dialect:   di,
					rank:      f.rank + spelling*prefixRank,
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
			spelling++
		}
	}
	return idx
}

// dialectOf picks the dialect that reads a sample: the first whose model
// label the sample carries, else the first.
func (idx *serverIndex) dialectOf(s *promscrape.Sample[string]) int {
	if len(idx.modelLabels) > 1 {
		for di, l := range idx.modelLabels {
			if _, ok := s.Label(l); l != "" && ok {
				return di
			}
		}
	}
	return 0
}

// Known reports whether kind is a server kind this package can normalize.
func Known(kind string) bool {
	_, ok := indexes[kind]
	return ok
}
