package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testwait"

	"github.com/gatedhq/gated/internal/reload"
	"github.com/gatedhq/gated/internal/reload/reloadtest"
	"github.com/gatedhq/gated/internal/testtree"
)

// actionsYAMLChunks renders version v of an ACTIONS.yaml in three pieces
// that each end on a whole entry, so that every prefix past the first piece
// is a valid catalog file: only the last piece defines "probe". A reload that
// reads the file between two pieces builds a catalog without that tool.
func actionsYAMLChunks(v int) []string {
	entry := func(name string) string {
		return fmt.Sprintf("  - {name: %s, description: \"version %d\", command: x, inputSchema: {type: object}}\n", name, v)
	}
	var first, second strings.Builder
	first.WriteString("actions:\n")
	for i := range 8 {
		first.WriteString(entry(fmt.Sprintf("filler_a%d", i)))
		second.WriteString(entry(fmt.Sprintf("filler_b%d", i)))
	}
	return []string{first.String(), second.String(), entry("probe")}
}

// rewriteInPlace writes the chunks over path the way a careless writer
// does: truncate, then write piece by piece with pauses, never renaming.
func rewriteInPlace(t *testing.T, path string, chunks []string, pause time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chunks {
		if i > 0 {
			time.Sleep(pause)
		}
		if _, err := f.WriteString(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInPlaceRewritesNeverPublishAHalfCatalog rewrites a catalog file in
// place 1,000 times while readers look up a tool that every version of the
// file defines. Before the fix a reload could read the file between two
// pieces and publish a catalog without the tool: 13.9% of decisions got
// tool_not_in_catalog, and with --unknown-tools allow they ran unchecked.
//
// One rewrite in twenty starts the moment a rebuild starts, so that the two
// race; one in fifty waits for a publication first, so the reloader must
// publish the versions that did settle, not merely refuse everything.
func TestInPlaceRewritesNeverPublishAHalfCatalog(t *testing.T) {
	t.Parallel()
	const (
		rewrites   = 1000
		debounce   = 30 * time.Millisecond
		chunkPause = 300 * time.Microsecond // well inside the debounce: a writer still writing
	)
	// Fixed files first in walk order make a build read for a while before
	// it reaches the rewritten file.
	files := map[string]string{}
	for i := range 10 {
		files[fmt.Sprintf("a/%02d/ACTION.md", i)] = action(fmt.Sprintf("x:act%02d", i), "risk_level: 1")
		files[fmt.Sprintf("a/%02d/TOOL.md", i)] = tool(fmt.Sprintf("x.tool%02d", i), fmt.Sprintf("implements: x:act%02d", i))
	}
	files["z/ACTIONS.yaml"] = strings.Join(actionsYAMLChunks(0), "")
	dir := testtree.Write(t, t.TempDir(), files)
	path := filepath.Join(dir, "z", "ACTIONS.yaml")

	var r *reload.Reloader[Catalog]
	buildStarted := make(chan struct{}, 1)
	var published, publishedWithoutProbe atomic.Int64
	r = reloadtest.Start(t, reload.Config[Catalog]{
		Build: func() (*Catalog, error) {
			select {
			case buildStarted <- struct{}{}:
				// Let the writer just woken start before the scan does;
				// otherwise it waits for this goroutine to block.
				runtime.Gosched()
			default:
			}
			return Load([]string{dir})
		},
		Dirs:     []string{dir},
		Debounce: debounce,
		OnResult: func(err error) {
			if err != nil {
				return
			}
			published.Add(1)
			// OnResult runs on the reloader's goroutine right after the
			// swap: Current is the catalog just published.
			if _, ok := r.Current().Lookup("probe"); !ok {
				publishedWithoutProbe.Add(1)
			}
		},
	})

	// guard bounds every wait so that the test stops by itself.
	guard := time.Now().Add(2 * time.Minute)
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if time.Now().After(guard) {
				t.Fatalf("gave up waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// One triggered reload puts the watches in place.
	before, _ := r.LastError()
	r.Trigger()
	waitUntil("the triggered reload", func() bool { at, _ := r.LastError(); return at.After(before) })

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var lookups, missing atomic.Int64
	revisions := sync.Map{}
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var last *Catalog
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := r.Current()
				if _, ok := c.Lookup("probe"); !ok {
					missing.Add(1)
				}
				if c != last {
					revisions.Store(c.Revision(), true)
					last = c
				}
				lookups.Add(1)
				runtime.Gosched() // two cores: leave the writer and the reloader room to run
			}
		}()
	}

	for i := 1; i <= rewrites; i++ {
		switch {
		case i%50 == 0:
			n := published.Load()
			waitUntil(fmt.Sprintf("a publication before rewrite %d", i), func() bool { return published.Load() > n })
		case i%20 == 5:
			select {
			case <-buildStarted: // a stale signal: wait for the next build
			default:
			}
			select {
			case <-buildStarted:
			case <-time.After(time.Until(guard)):
				t.Fatalf("no rebuild started before rewrite %d", i)
			}
		}
		rewriteInPlace(t, path, actionsYAMLChunks(i), chunkPause)
	}

	// The last version is published once the files settle.
	want := mustLoad(t, dir).Revision()
	waitUntil("the last version", func() bool { return r.Current().Revision() == want })
	close(stop)
	readers.Wait()

	n := 0
	revisions.Range(func(any, any) bool { n++; return true })
	t.Logf("%d lookups over %d revisions; %d publications", lookups.Load(), n, published.Load())
	if m := missing.Load(); m != 0 {
		t.Errorf("%d of %d lookups found a catalog without the tool every version defines", m, lookups.Load())
	}
	if m := publishedWithoutProbe.Load(); m != 0 {
		t.Errorf("%d of %d publications were built from a half-written file", m, published.Load())
	}
	if published.Load() < rewrites/50 {
		t.Errorf("%d publications, want at least one per pause (%d)", published.Load(), rewrites/50)
	}
	if lookups.Load() == 0 {
		t.Error("no lookups ran")
	}
}

// TestConfigMapSwapsReload replays a kubelet ConfigMap update three times:
// the data lives in "..<timestamp>", "..data" links to it, the visible
// files link into "..data", and an update renames a fresh "..data" link over
// the old one, then deletes the old directory. Each swap reloads, whether
// gated watches the mount itself or was pointed at its "..data" (then the
// watch must move to each new target: after the first swap the old target
// is gone and changes would show up nowhere it watches).
func TestConfigMapSwapsReload(t *testing.T) {
	t.Parallel()
	for _, viaData := range []bool{false, true} {
		t.Run(fmt.Sprintf("dir_is_data_link=%v", viaData), func(t *testing.T) {
			mount := t.TempDir()
			version := func(v int) string { return fmt.Sprintf("..2026_01_0%d_00_00_00.%d", v, v) }
			publish := func(v int) {
				testtree.Write(t, filepath.Join(mount, version(v)), map[string]string{
					"ACTIONS.yaml": fmt.Sprintf("actions:\n  - {name: tool_v%d, description: d, command: x, inputSchema: {type: object}}\n", v),
				})
				tmp := filepath.Join(mount, "..data_tmp")
				check(t, os.Symlink(version(v), tmp))
				check(t, os.Rename(tmp, filepath.Join(mount, "..data")))
				if v > 1 {
					check(t, os.RemoveAll(filepath.Join(mount, version(v-1))))
				}
			}
			publish(1)
			check(t, os.Symlink(filepath.Join("..data", "ACTIONS.yaml"), filepath.Join(mount, "ACTIONS.yaml")))
			dir := mount
			if viaData {
				dir = filepath.Join(mount, "..data")
			}

			r := reloadtest.Start(t, reload.Config[Catalog]{
				Build:    func() (*Catalog, error) { return Load([]string{dir}) },
				Dirs:     []string{dir},
				Debounce: 20 * time.Millisecond,
			})
			before, _ := r.LastError()
			r.Trigger()
			testwait.Until(t, "the triggered reload", func() bool { at, _ := r.LastError(); return at.After(before) })

			for v := 2; v <= 4; v++ {
				publish(v)
				testwait.Until(t, fmt.Sprintf("ConfigMap version %d", v), func() bool {
					c := r.Current()
					_, now := c.Lookup(fmt.Sprintf("tool_v%d", v))
					_, old := c.Lookup(fmt.Sprintf("tool_v%d", v-1))
					return now && !old && c.Len() == 1
				})
			}
		})
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
