// Package testwait is the one way tests wait for a condition: poll it, and
// fail the test if it has not held within a deadline that only guards
// against hanging (no test asserts how long anything takes).
package testwait

import (
	"testing"
	"time"
)

// Deadline bounds every wait; generous, for two busy cores.
const Deadline = 30 * time.Second

// Until polls cond every few milliseconds until it holds, and fails the
// test naming what it waited for if it never does.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
