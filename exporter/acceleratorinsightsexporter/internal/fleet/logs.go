package fleet

import "time"

// Event is one health event (a log record from a receiver).
type Event struct {
	Time        time.Time `json:"time"`
	Name        string    `json:"name"`
	DeviceID    string    `json:"device_id"`
	Node        string    `json:"node"`
	Cluster     string    `json:"-"`
	State       *string   `json:"state"`
	FailureMode *string   `json:"failure_mode"`
	Action      *string   `json:"action"`
	XID         *int64    `json:"xid"`
	Description *string   `json:"description"`
	Severity    string    `json:"severity"`
}

// Finding states.
const (
	StateOpen         = "open"
	StateAcknowledged = "acknowledged"
	StateDismissed    = "dismissed"
)

// Finding is one cost finding (a log record from the cost processor),
// merged over its repeats.
type Finding struct {
	ID             string     `json:"id"`
	Kind           string     `json:"kind"`
	State          string     `json:"state"`
	Summary        string     `json:"summary"`
	Action         string     `json:"action"`
	Evidence       string     `json:"evidence"`
	MonthlySaving  float64    `json:"monthly_saving"`
	Target         *string    `json:"target"`
	HealthAction   *string    `json:"health_action"`
	FailureMode    *string    `json:"failure_mode"`
	DeviceID       string     `json:"device_id"`
	PartitionID    *string    `json:"partition_id"`
	Node           string     `json:"node"`
	Cluster        string     `json:"cluster"`
	Namespace      string     `json:"namespace"`
	Pod            string     `json:"pod"`
	Team           string     `json:"team"`
	Workload       string     `json:"workload"`
	FirstSeen      time.Time  `json:"first_seen"`
	LastSeen       time.Time  `json:"last_seen"`
	Count          int        `json:"count"`
	StateChangedAt *time.Time `json:"state_changed_at"`
	// StateChangedBy is who set the state (the authenticated identity,
	// or the local console user on a loopback-only console).
	StateChangedBy string  `json:"state_changed_by,omitempty"`
	Note           *string `json:"note"`

	// Identity of the resource it was raised on, for filters.
	Identity `json:"-"`
}

// Logs is what the logs side holds: events newest first, findings.
type Logs struct {
	Events   []Event
	Findings []Finding
}
