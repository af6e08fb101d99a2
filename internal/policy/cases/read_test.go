package cases

import (
	"errors"
	"testing"
)

// TestReadNamesFilesBelowTheirDirectory: two copies of a policy name their
// cases alike, and a directory without test files is no error for Read.
func TestReadNamesFilesBelowTheirDirectory(t *testing.T) {
	t.Parallel()
	a := writeFiles(t, map[string]string{"sub/x_test.yaml": cases, "POLICY.md": "-"})
	b := writeFiles(t, map[string]string{"sub/x_test.yaml": cases})
	ra, err := Read([]string{a})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Read([]string{b})
	if err != nil || len(ra) == 0 || len(ra) != len(rb) {
		t.Fatalf("%d and %d cases, %v", len(ra), len(rb), err)
	}
	for i := range ra {
		if ra[i].File != "sub/x_test.yaml" || ra[i].File != rb[i].File || ra[i].Name != rb[i].Name {
			t.Errorf("case %d: %s %q and %s %q", i, ra[i].File, ra[i].Name, rb[i].File, rb[i].Name)
		}
	}
	none, err := Read([]string{writeFiles(t, map[string]string{"POLICY.md": "-"})})
	if err != nil || none != nil {
		t.Errorf("no test files: %v, %v", none, err)
	}
	if _, _, err := Run([]string{writeFiles(t, map[string]string{"POLICY.md": "-"})}, nil, nil); !errors.Is(err, ErrNoTestFiles) {
		t.Errorf("Run without test files: %v", err)
	}
	if _, err := Read([]string{writeFiles(t, map[string]string{"bad_test.yaml": "cases: [{name: x}]"})}); err == nil {
		t.Error("a malformed file read")
	}
}
