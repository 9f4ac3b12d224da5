package e2etest

import (
	"testing"
	"time"
)

// AwaitEvery is how often Await checks again.
const AwaitEvery = 500 * time.Millisecond

// Await is how the end-to-end and browser suites wait for data that
// arrives asynchronously (a scrape, a page, a log line, a file the
// collector writes): check says what it sees now and whether that is the
// condition; Await calls it until it is, or fails the test once within has
// passed with what the check last saw. Never sleep and then assert: on a
// loaded machine the data comes later than on the one the sleep was tuned
// on. check may call t.Fatal for errors that waiting cannot fix.
func Await(t testing.TB, within time.Duration, what string, check func() (seen string, ok bool)) {
	t.Helper()
	if seen, ok := AwaitResult(within, check); !ok {
		t.Fatalf("waited %s for %s; last saw: %s", within, what, seen)
	}
}

// AwaitResult is Await for a caller that reports the failure itself (Errorf
// instead of Fatalf, or a message of its own): ok is false when within
// passed first, with what check last saw.
func AwaitResult(within time.Duration, check func() (seen string, ok bool)) (string, bool) {
	deadline := time.Now().Add(within)
	for {
		seen, ok := check()
		if ok {
			return seen, true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return seen, false
		}
		time.Sleep(min(AwaitEvery, left))
	}
}
