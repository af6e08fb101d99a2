package sources_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/sources"
)

// Issue 25 §7: with --bundle-public-key, a --catalog or --policy
// directory loaded unsigned and nothing said so. Now it loads with a
// warning naming the flag, and --require-signed refuses it.
func TestDirectoriesWithAPublicKey(t *testing.T) {
	t.Parallel()
	key := bundletest.NewKeys(t).Public
	cfg := sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{"../../examples/policy"},
		Bundles: sources.Bundles{PublicKey: key}}

	core, logs := observer.New(zapcore.WarnLevel)
	if _, err := sources.Load(cfg, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "carry no signature") {
			warned = append(warned, strings.Fields(e.Message)[0])
		}
	}
	if strings.Join(warned, " ") != "--catalog --policy" {
		t.Fatalf("warnings for %q, want --catalog and --policy: %+v", warned, logs.All())
	}

	cfg.Bundles.RequireSigned = true
	if _, err := sources.Load(cfg, zap.NewNop()); err == nil || !strings.Contains(err.Error(), "--catalog ../../examples/catalog: --require-signed loads only bundle manifests") {
		t.Fatalf("--require-signed with a catalog directory: %v", err)
	}
	cfg.CatalogDirs = nil
	if _, err := sources.Load(cfg, zap.NewNop()); err == nil || !strings.Contains(err.Error(), "--policy ../../examples/policy: --require-signed") {
		t.Fatalf("--require-signed with a policy directory: %v", err)
	}
}

// Without a key nothing is said: directories are how most run gated.
func TestDirectoriesWithoutAKeyLoadQuietly(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.WarnLevel)
	if _, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}}, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	if n := logs.Len(); n != 0 {
		t.Fatalf("%d warnings: %+v", n, logs.All())
	}
}

// The log says which evaluator decides the policy's grants: the examples'
// custom module keeps them on Rego, their POLICY.md files alone go native.
func TestPolicyEvaluatorLogged(t *testing.T) {
	t.Parallel()
	grantsOnly := t.TempDir()
	for _, name := range []string{"POLICY.md", "devops.POLICY.md", "production-deploys.POLICY.md"} {
		raw, err := os.ReadFile(filepath.Join("../../examples/policy", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(grantsOnly, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]string{"../../examples/policy": "rego", grantsOnly: "native"} {
		core, logs := observer.New(zapcore.InfoLevel)
		if _, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{dir}}, zap.New(core)); err != nil {
			t.Fatal(err)
		}
		got := logs.FilterMessage("policy evaluator").All()
		if len(got) != 1 || got[0].ContextMap()["evaluator"] != want || got[0].ContextMap()["why"] == "" {
			t.Errorf("%s: logged %+v, want evaluator %s and why", dir, got, want)
		}
	}
}
