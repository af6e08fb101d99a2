package catalog

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/reload"
	"github.com/gatedhq/gated/internal/reload/reloadtest"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// TestHotReloadUnderConcurrentDecisions runs decisions against the reloaded
// catalog while its files change: every decision sees one whole catalog
// (the tool's risk level and its revision agree), a broken change keeps the
// last good catalog, and fixing it is picked up.
func TestHotReloadUnderConcurrentDecisions(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"actions/ACTION.md": action("x:act", "risk_level: 1"),
		"tools/TOOL.md":     tool("x.tool", "implements: x:act"),
	})
	r := reloadtest.Start(t, reload.Config[Catalog]{
		Build:    func() (*Catalog, error) { return Load([]string{dir}) },
		Dirs:     []string{dir},
		Debounce: 20 * time.Millisecond,
	})

	// seen records which risk level each revision carried; a
	// revision seen with two risk levels would be a torn catalog.
	var seen sync.Map
	var torn, decisions atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := &route.Event{ToolName: "x.tool"}
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := r.Current()
				v, ok := c.Lookup(ev.ToolName)
				if !ok {
					torn.Add(1)
					continue
				}
				Floors(v.Call(nil, ""), ev, route.AuthValidated, ArgumentsEnforce)
				if prev, loaded := seen.LoadOrStore(c.Revision(), v.RiskLevel); loaded && prev.(int) != v.RiskLevel {
					torn.Add(1)
				}
				decisions.Add(1)
				runtime.Gosched() // two cores: leave the reloader room to run
			}
		}()
	}

	risk := func() int { v, _ := r.Current().Lookup("x.tool"); return v.RiskLevel }
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Rebuild once by trigger so the watches are known to be in place.
	before, _ := r.LastError()
	r.Trigger()
	waitUntil("the triggered reload", func() bool { at, _ := r.LastError(); return at.After(before) })

	toolPath := filepath.Join(dir, "tools", "TOOL.md")
	for _, level := range []string{"2", "3"} {
		replaceFile(t, toolPath, tool("x.tool", "implements: x:act", "risk_level: "+level))
		waitUntil("risk_level "+level, func() bool { return risk() == int(level[0]-'0') })
	}

	good := r.Current().Revision()
	// A tool that lowers the action's risk level: a load error (and one
	// that stays an error whichever of the two writes a reload sees).
	replaceFile(t, toolPath, tool("x.tool", "implements: x:act", "risk_level: 0"))
	replaceFile(t, filepath.Join(dir, "actions", "ACTION.md"), action("x:act", "risk_level: 3"))
	waitUntil("the failed reload", func() bool { _, err := r.LastError(); return err != nil })
	if got := r.Current().Revision(); got != good || risk() != 3 {
		t.Fatalf("after a broken change: revision %s risk %d, want the last good %s at 3", got, risk(), good)
	}
	at, lastErr := r.LastError()
	doc := r.Current().Document(lastErr, at)
	if doc.LastReloadError == nil || len(doc.LastReloadError.Problems) == 0 || doc.LastReloadError.Problems[0].Code != "widens_risk_level" {
		t.Fatalf("document reload error %+v", doc.LastReloadError)
	}

	replaceFile(t, toolPath, tool("x.tool", "implements: x:act"))
	waitUntil("the repaired catalog", func() bool { _, err := r.LastError(); return err == nil && r.Current().Revision() != good })

	close(stop)
	wg.Wait()
	if torn.Load() != 0 {
		t.Fatalf("%d decisions saw an inconsistent catalog", torn.Load())
	}
	if decisions.Load() == 0 {
		t.Fatal("no decisions ran")
	}
}

// replaceFile writes a file the way editors and the kubelet do: into a
// temporary file, then renamed over the old one, so a reload never reads
// half a file.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
