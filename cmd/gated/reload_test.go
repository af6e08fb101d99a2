package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatedhq/gated/internal/testwait"
)

const weatherTool = `---
name: Weather
id: ops.weather
description: "Read the public weather forecast."
version: 1.0.0
risk_level: 0
inputs: {type: object, properties: {city: {type: string}}}
outputs: {type: object}
metadata:
  gated:
    aliases: [get_weather]
---
`

// TestCatalogHotReload edits a served catalog on disk: a new tool appears
// without a restart, and a broken edit keeps the last good catalog while
// /v1/catalog reports the problem.
func TestCatalogHotReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/catalog")); err != nil {
		t.Fatal(err)
	}
	base, _ := startServe(t, []string{"--catalog", dir}, nil)
	_, doc := get(t, base+"/v1/catalog", nil)
	rev := doc["revision"]
	ev := `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none","evidence_refs":[],` +
		`"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`
	if _, d := post(t, base+"/pre-tool-check", ev, nil); d["route"] != "defer" {
		t.Fatalf("an uncatalogued tool: route %v, want defer", d["route"])
	}

	if err := os.WriteFile(filepath.Join(dir, "weather.TOOL.md"), []byte(weatherTool), 0o644); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the new tool", func() bool {
		_, d := post(t, base+"/pre-tool-check", ev, nil)
		return d["route"] == "accept"
	})
	_, doc = get(t, base+"/v1/catalog", nil)
	good := doc["revision"]
	if good == rev {
		t.Fatal("the revision did not change")
	}

	if err := os.WriteFile(filepath.Join(dir, "broken.TOOL.md"), []byte("---\nid: Not Valid\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the reload error", func() bool {
		_, doc = get(t, base+"/v1/catalog", nil)
		return doc["last_reload_error"] != nil
	})
	if doc["revision"] != good {
		t.Fatalf("a broken edit replaced the catalog: revision %v, want %v", doc["revision"], good)
	}
	if code, d := post(t, base+"/pre-tool-check", ev, nil); code != http.StatusOK || d["route"] != "accept" {
		t.Fatalf("decisions after a broken edit: %d %v", code, d["route"])
	}
}
