package promscrape

import (
	"math"
	"strconv"
)

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseValue reads a sample value as strconv.ParseFloat does (NaN, Inf,
// hex floats included). Values out of float64's range are refused, as
// expfmt refuses them.
func parseValue[T Text](b T) (float64, bool) {
	if v, ok := exactDecimal(b); ok {
		return v, true
	}
	if !mayBeFloat(b) {
		return 0, false // and no error from strconv to allocate
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil
}

// mayBeFloat refuses text that does not start like a number, NaN or Inf.
func mayBeFloat[T Text](b T) bool {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i++
	}
	if i == len(b) {
		return false
	}
	switch c := b[i] | 0x20; { // lower case for letters
	case b[i] >= '0' && b[i] <= '9', b[i] == '.', c == 'n', c == 'i':
		return true
	}
	return false
}

// exactDecimal reads the common short decimals ("0", "1980", "14.0",
// "1.7487796e+09") without strconv: with at most 2^53 as digits and a
// power of ten up to 22, one multiplication or division of two exact
// float64s is correctly rounded, so the result is ParseFloat's (Clinger's
// fast path). Anything else is left to ParseFloat.
func exactDecimal[T Text](b T) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	var mant uint64
	digits, exp := 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if digits >= 19 {
			return 0, false
		}
		mant = mant*10 + uint64(b[i]-'0')
		if mant != 0 {
			digits++
		}
	}
	seen := i > 0 && b[i-1] >= '0' && b[i-1] <= '9'
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if digits >= 19 {
				return 0, false
			}
			mant = mant*10 + uint64(b[i]-'0')
			if mant != 0 {
				digits++
			}
			exp--
			seen = true
		}
	}
	if !seen {
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		start, e := i, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e > 1000 {
				return 0, false
			}
			e = e*10 + int(b[i]-'0')
		}
		if i == start {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) || mant > 1<<53 || exp < -22 || exp > 22 {
		return 0, false
	}
	v := float64(mant)
	if exp < 0 {
		v /= pow10[-exp]
	} else {
		v *= pow10[exp]
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseTimestamp reads a sample's timestamp into milliseconds: an integer
// is milliseconds (format 0.0.4), a number with a fraction or exponent is
// seconds (OpenMetrics).
func parseTimestamp[T Text](b T) (int64, bool) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i = 1
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == len(b) && i > start {
		ms, err := strconv.ParseInt(string(b), 10, 64)
		return ms, err == nil
	}
	return parseSeconds(b)
}

// parseSeconds reads an OpenMetrics timestamp, seconds with or without a
// fraction, into milliseconds.
func parseSeconds[T Text](b T) (int64, bool) {
	sec, ok := parseValue(b)
	if !ok || math.IsNaN(sec) || math.Abs(sec) > math.MaxInt64/1000 {
		return 0, false
	}
	return int64(math.Round(sec * 1000)), true
}
