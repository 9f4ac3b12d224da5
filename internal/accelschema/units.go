package accelschema

// UCUM units. Currency has no UCUM code; "USD" follows the convention used by
// cost tooling (OpenCost, the FinOps FOCUS spec) and is mapped to "None" by
// CloudWatch.
const (
	UnitRatio       = "1"
	UnitBytes       = "By"
	UnitBytesPerSec = "By/s"
	UnitWatts       = "W"
	UnitJoules      = "J"
	UnitCelsius     = "Cel"
	UnitSeconds     = "s"
	UnitHertz       = "Hz"
	UnitUSD         = "USD"
	UnitUSDPerHour  = "USD/h"
	UnitErrors      = "{error}"
	UnitRequests    = "{request}"
	UnitTokens      = "{token}"
	UnitExecutions  = "{execution}"
	UnitPages       = "{page}"
	UnitRows        = "{row}"
	UnitServers     = "{server}"
	UnitFindings    = "{finding}"
	UnitPreemptions = "{preemption}"
	UnitFlopsPerSec = "{flop}/s"
)
