package contract

import "testing"

// Valid events skip the library: the contract schema has a fast path.
func TestContractSchemaHasFastPath(t *testing.T) {
	t.Parallel()
	if err := contractSchema.FastPath(); err != nil {
		t.Fatal(err)
	}
}
