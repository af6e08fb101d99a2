package main

import (
	"runtime/debug"
	"testing"

	"go.uber.org/zap"
)

// Not parallel: the collector's target is the process's, and parallel
// tests only start once the sequential ones are done.
func TestTuneMemoryRaisesGOGCUnlessTheOperatorSetIt(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	tuneMemory(func(string) string { return "" }, zap.NewNop())
	if got := debug.SetGCPercent(100); got != defaultGOGC {
		t.Fatalf("GOGC unset: the collector's target is %d, want %d", got, defaultGOGC)
	}
	tuneMemory(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}, zap.NewNop())
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=100 set by the operator: the collector's target is %d, want it left at 100", got)
	}
}
