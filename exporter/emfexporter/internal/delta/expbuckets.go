package delta

// expBuckets is one side (positive or negative) of an exponential histogram.
type expBuckets struct {
	offset int32
	counts []uint64
}

// downscale merges buckets to a scale lower by `by`: index i becomes
// i >> by (an arithmetic shift, so negative indexes round down as the
// exponential histogram's bucket definition requires).
func (b expBuckets) downscale(by int32) expBuckets {
	if by <= 0 || len(b.counts) == 0 {
		return b
	}
	first := b.offset >> by
	last := (b.offset + int32(len(b.counts)) - 1) >> by
	out := make([]uint64, last-first+1)
	for i, c := range b.counts {
		out[((b.offset+int32(i))>>by)-first] += c
	}
	return expBuckets{offset: first, counts: out}
}

// subtract returns a - b over the union of their index ranges. ok is false
// when some bucket of b holds more than the same bucket of a: the cumulative
// histogram was reset.
func subtract(a, b expBuckets) (expBuckets, bool) {
	if len(b.counts) == 0 {
		return expBuckets{offset: a.offset, counts: append([]uint64(nil), a.counts...)}, true
	}
	if len(a.counts) == 0 {
		for _, c := range b.counts {
			if c != 0 {
				return expBuckets{}, false
			}
		}
		return expBuckets{offset: a.offset}, true
	}
	first := min(a.offset, b.offset)
	last := max(a.offset+int32(len(a.counts)), b.offset+int32(len(b.counts))) - 1
	out := make([]uint64, last-first+1)
	for i, c := range a.counts {
		out[a.offset+int32(i)-first] = c
	}
	for i, c := range b.counts {
		j := b.offset + int32(i) - first
		if out[j] < c {
			return expBuckets{}, false
		}
		out[j] -= c
	}
	return expBuckets{offset: first, counts: out}, true
}
