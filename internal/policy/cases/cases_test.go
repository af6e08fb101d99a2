package cases

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testtree"
)

func writeFiles(t *testing.T, files map[string]string) string {
	return testtree.Write(t, t.TempDir(), files)
}

// echo "decides" whatever the event's `want` field says, so the runner's
// counting and printing can be checked without any policy semantics.
func echo(t *testing.T) Decider {
	return func(ev map[string]any, principals []string, now time.Time) (string, []string) {
		if now.IsZero() || len(principals) == 0 {
			t.Errorf("case reached the decider without now/principals")
		}
		var bl []string
		if raw, ok := ev["blockers"].([]any); ok {
			for _, b := range raw {
				bl = append(bl, b.(string))
			}
		}
		return ev["want"].(string), bl
	}
}

const cases = `cases:
  - name: pass
    event: {want: accept, n: 5}
    principals: [a]
    now: 2026-05-04T10:00:00Z
    expect: {route: accept}
  - name: blockers in any order
    event: {want: refuse, blockers: [x, y]}
    principals: [a]
    now: "2026-05-04T10:00:00Z"
    expect: {route: refuse, hard_blockers: [y, x]}
  - name: wrong route
    event: {want: ask}
    principals: [a]
    now: 2026-05-04T10:00:00Z
    expect: {route: accept}
  - name: missing blocker
    event: {want: defer}
    principals: [a]
    now: 2026-05-04T10:00:00Z
    expect: {route: defer, hard_blockers: [z]}
`

func TestRunCountsAndPrints(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"a_test.yaml": cases, "sub/b_test.yaml": "cases: []\n", "ignored.yaml": "nonsense: ["})
	var out bytes.Buffer
	passed, failed, err := Run([]string{dir}, echo(t), &out)
	if err != nil {
		t.Fatal(err)
	}
	if passed != 2 || failed != 2 {
		t.Fatalf("passed %d failed %d, want 2 and 2\n%s", passed, failed, out.String())
	}
	for _, want := range []string{"FAIL ", ": wrong route: got ask [], want accept []", ": missing blocker: got defer [], want defer [z]", "2 passed, 2 failed\n"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunRejectsMalformedFiles(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"yaml":           "cases: [",
		"unknown field":  "cases: [{name: a, event: {}, now: 2026-05-04T10:00:00Z, expect: {route: accept}, extra: 1}]",
		"no name":        "cases: [{event: {}, now: 2026-05-04T10:00:00Z, expect: {route: accept}}]",
		"no event":       "cases: [{name: a, now: 2026-05-04T10:00:00Z, expect: {route: accept}}]",
		"no now":         "cases: [{name: a, event: {}, expect: {route: accept}}]",
		"bad route":      "cases: [{name: a, event: {}, now: 2026-05-04T10:00:00Z, expect: {route: allow}}]",
		"bad now":        "cases: [{name: a, event: {}, now: tomorrow, expect: {route: accept}}]",
		"non-string key": "cases: [{name: a, event: {1: x}, now: 2026-05-04T10:00:00Z, expect: {route: accept}}]",
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"x_test.yaml": content})
			if _, _, err := Run([]string{dir}, echo(t), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "x_test.yaml") {
				t.Fatalf("error %v does not name the file", err)
			}
		})
	}
	if _, _, err := Run([]string{t.TempDir()}, echo(t), &bytes.Buffer{}); err == nil {
		t.Fatal("no test files must be an error")
	}
}

func TestCatalogsResolvesRelativeToTheTestFile(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"a/one_test.yaml":   "catalog: ../cat\ncases: []\n",
		"a/b/two_test.yaml": "catalog: ../../cat/\ncases: []\n",
		"a/three_test.yaml": "cases: []\n",
	})
	got, err := Catalogs([]string{dir + "/a"})
	if err != nil || len(got) != 1 || got[0] != filepath.Join(dir, "cat") {
		t.Fatalf("Catalogs = %v, %v; want [%s]", got, err, filepath.Join(dir, "cat"))
	}
	again, err := Catalogs([]string{dir + "/a/b", dir + "/a/three_test.yaml"})
	if err != nil || len(again) != 1 || again[0] != got[0] {
		t.Fatalf("Catalogs = %v, %v", again, err)
	}
	dir2 := writeFiles(t, map[string]string{
		"one_test.yaml": "catalog: x\ncases: []\n",
		"two_test.yaml": "catalog: y\ncases: []\n",
	})
	if _, err := Catalogs([]string{dir2}); err == nil || !strings.Contains(err.Error(), "names catalog") {
		t.Fatalf("conflicting catalogs: err = %v", err)
	}
	dir3 := writeFiles(t, map[string]string{"one_test.yaml": "cases: []\n"})
	if got, err := Catalogs([]string{dir3}); err != nil || got != nil {
		t.Fatalf("no catalog key: %v, %v", got, err)
	}
}

// On disk, a catalog named that is not there is an error naming the test
// file and its `catalog:`; one that is there is returned as Catalogs does.
func TestCatalogsOnDisk(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"policy/p_test.yaml": "catalog: ../cat\ncases: []\n"})
	_, err := CatalogsOnDisk([]string{filepath.Join(dir, "policy")})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "policy", "p_test.yaml")+` names the catalog "../cat"`) ||
		!strings.Contains(err.Error(), "--catalog") {
		t.Fatalf("missing catalog: err = %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "cat"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := CatalogsOnDisk([]string{filepath.Join(dir, "policy")})
	if err != nil || len(got) != 1 || got[0] != filepath.Join(dir, "cat") {
		t.Fatalf("CatalogsOnDisk = %v, %v", got, err)
	}
}
