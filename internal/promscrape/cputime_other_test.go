//go:build !unix

package promscrape

import (
	"testing"
	"time"
)

func reportCPU(*testing.B, time.Duration) {}

func cpuTime() time.Duration { return 0 }
