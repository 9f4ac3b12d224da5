package emf

import "strings"

// CloudWatchUnits lists the units CloudWatch accepts in a MetricDefinition,
// as the EMF JSON schema spells them.
var CloudWatchUnits = []string{
	"Seconds", "Microseconds", "Milliseconds",
	"Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits",
	"Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
	"Count/Second", "None",
}

// IsCloudWatchUnit reports whether u is a unit CloudWatch accepts.
func IsCloudWatchUnit(u string) bool {
	for _, v := range CloudWatchUnits {
		if v == u {
			return true
		}
	}
	return false
}

// ucumToCloudWatch maps the UCUM codes OpenTelemetry uses to CloudWatch
// units. CloudWatch has no binary prefixes, so KiBy and kBy both become
// Kilobytes (CloudWatch treats a kilobyte as 1,024 bytes).
var ucumToCloudWatch = map[string]string{
	"s":  "Seconds",
	"ms": "Milliseconds",
	"us": "Microseconds",
	"μs": "Microseconds",

	"By":   "Bytes",
	"kBy":  "Kilobytes",
	"KBy":  "Kilobytes",
	"KiBy": "Kilobytes",
	"MBy":  "Megabytes",
	"MiBy": "Megabytes",
	"GBy":  "Gigabytes",
	"GiBy": "Gigabytes",
	"TBy":  "Terabytes",
	"TiBy": "Terabytes",

	"bit":   "Bits",
	"kbit":  "Kilobits",
	"Kibit": "Kilobits",
	"Mbit":  "Megabits",
	"Mibit": "Megabits",
	"Gbit":  "Gigabits",
	"Gibit": "Gigabits",
	"Tbit":  "Terabits",
	"Tibit": "Terabits",

	"By/s":   "Bytes/Second",
	"kBy/s":  "Kilobytes/Second",
	"KiBy/s": "Kilobytes/Second",
	"MBy/s":  "Megabytes/Second",
	"MiBy/s": "Megabytes/Second",
	"GBy/s":  "Gigabytes/Second",
	"GiBy/s": "Gigabytes/Second",
	"TBy/s":  "Terabytes/Second",
	"TiBy/s": "Terabytes/Second",
	"bit/s":  "Bits/Second",
	"kbit/s": "Kilobits/Second",
	"Mbit/s": "Megabits/Second",
	"Gbit/s": "Gigabits/Second",
	"Tbit/s": "Terabits/Second",

	"%":   "Percent",
	"1":   "None",
	"1/s": "Count/Second",
}

// CloudWatchUnit maps a UCUM unit to a CloudWatch unit. Annotations such as
// "{error}" or "{request}" are counts; "{token}/s" is a count per second.
// Units CloudWatch has no name for (W, J, Cel, Hz, USD, "1" for ratios)
// become None: a ratio in 0..1 is not a Percent.
func CloudWatchUnit(ucum string) string {
	if u, ok := ucumToCloudWatch[ucum]; ok {
		return u
	}
	if isAnnotation(ucum) {
		return "Count"
	}
	if rest, ok := strings.CutSuffix(ucum, "/s"); ok && isAnnotation(rest) {
		return "Count/Second"
	}
	return "None"
}

// isAnnotation reports whether u is a bare UCUM annotation like "{request}".
func isAnnotation(u string) bool {
	return len(u) >= 2 && u[0] == '{' && u[len(u)-1] == '}' && !strings.ContainsAny(u[1:len(u)-1], "{}")
}
