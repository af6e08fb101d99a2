package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/reload"
	"github.com/gatedhq/gated/internal/route"
)

// Decisions keep flowing, each consistent with one revision, while the
// policy is rewritten and reloaded underneath them (run with -race).
func TestReloadUnderLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "POLICY.md")
	versions := map[bool]string{
		true:  policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants:\n  - {principal: x, actions: [{action: \"storage:read\"}]}\n"),
		false: policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants:\n  - {principal: x, actions: [{action: \"storage:read\"}], revoked: true}\n"),
	}
	write := func(content string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(versions[true])
	r, err := reload.New(reload.Config[Set]{Build: func() (*Set, error) {
		// A generous budget: this test is about swap consistency, and -race
		// on two busy cores can stall one evaluation for a while.
		return Load([]string{dir}, nil, WithEvalBudget(time.Minute))
	}, Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	allowRev := r.Current().Revision()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var decisions atomic.Int64
	errs := make(chan string, 1)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				s := r.Current()
				o := route.Combine(s.Evaluate(context.Background(), input("storage:read", "x")).Findings) // not ctx: cancelling it would fail in-flight decisions
				decisions.Add(1)
				wantAccept := s.Revision() == allowRev
				if (o.Route == route.Accept) != wantAccept || (!wantAccept && o.HardBlockers[0] != route.CodePolicyExplicitRevoke) {
					select {
					case errs <- fmt.Sprint(o.Route, o.HardBlockers, s.Revision() == allowRev):
					default:
					}
					return
				}
			}
		}()
	}
	for i := range 40 {
		write(versions[i%2 == 1])
		if err := r.Reload(); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
		if i%10 == 0 {
			write("broken")
			if r.Reload() == nil {
				t.Fatal("a broken policy reloaded")
			}
		}
	}
	cancel()
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatalf("inconsistent decision: %s", e)
	default:
	}
	if decisions.Load() == 0 {
		t.Fatal("no decisions ran during the reloads")
	}
	if r.Current().Revision() != allowRev {
		t.Fatal("after an even number of swaps and failed reloads the allowing revision should be current")
	}
}
