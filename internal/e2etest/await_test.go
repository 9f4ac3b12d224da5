package e2etest

import (
	"fmt"
	"testing"
	"time"
)

func TestAwaitResultPollsUntilTheConditionHolds(t *testing.T) {
	calls := 0
	seen, ok := AwaitResult(10*time.Second, func() (string, bool) {
		calls++
		return fmt.Sprint(calls), calls == 3
	})
	if !ok || seen != "3" {
		t.Errorf("AwaitResult = %q, %v after %d calls; want the third call's answer", seen, ok, calls)
	}
}

func TestAwaitResultReportsWhatItLastSaw(t *testing.T) {
	calls := 0
	start := time.Now()
	seen, ok := AwaitResult(1200*time.Millisecond, func() (string, bool) {
		calls++
		return fmt.Sprintf("call %d", calls), false
	})
	if ok {
		t.Fatal("a condition that never holds was met")
	}
	if seen != fmt.Sprintf("call %d", calls) || calls < 3 {
		t.Errorf("AwaitResult saw %q after %d calls; want the last of at least 3", seen, calls)
	}
	if d := time.Since(start); d < 1200*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %s; want the deadline, 1.2s", d)
	}
}
