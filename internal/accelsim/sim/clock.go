// Package sim is the simulator's model of the fleet at work: what every
// workload profile does at a simulated time, how that shows on the devices
// it holds (activity, memory, power, temperature, clocks, energy) and in the
// inference servers it runs (tokens, latencies, queue, KV cache), and what a
// device failure changes.
//
// Simulated time advances in ticks of TickSeconds. Every value at tick k is
// a pure function of the seed, the entity and k; counters are sums over
// complete ticks from the start. So two simulators with the same scenario
// and seed agree at the same simulated time, however often they are read.
package sim

import (
	"math"
	"time"
)

// TickSeconds is the simulated time step.
const TickSeconds = 5.0

// Clock gives the wall time; tests inject a fixed one.
type Clock interface{ Now() time.Time }

// WallClock is the real clock.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// Timeline maps wall time to simulated time: the simulation starts at Start
// and runs Speed times faster than the wall clock.
type Timeline struct {
	Start time.Time
	Speed float64
	Clock Clock
}

// Elapsed is the simulated time since the start, in seconds.
func (tl Timeline) Elapsed() float64 { return tl.ElapsedAt(tl.Clock.Now()) }

// ElapsedAt is the simulated time at a given wall time, in seconds.
func (tl Timeline) ElapsedAt(wall time.Time) float64 {
	d := wall.Sub(tl.Start).Seconds() * tl.Speed
	if d < 0 {
		return 0
	}
	return d
}

// Tick is the tick a simulated time falls in.
func Tick(t float64) int64 { return int64(math.Floor(t / TickSeconds)) }

// FixedClock always returns the same instant; tests advance it by hand.
type FixedClock struct{ T time.Time }

// Now returns the fixed instant.
func (c *FixedClock) Now() time.Time { return c.T }
