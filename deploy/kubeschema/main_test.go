package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const openAPIDoc = `{"components": {"schemas": {
  "io.k8s.api.apps.v1.Widget": {
    "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Widget"}],
    "description": "dropped",
    "properties": {
      "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.WidgetSpec"}]},
      "description": {"type": "string"}
    }
  },
  "io.k8s.api.apps.v1.WidgetSpec": {
    "properties": {
      "size": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
      "labels": {"type": "object", "additionalProperties": {"type": "string"}},
      "raw": {"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": true},
      "note": {"type": "string", "nullable": true}
    },
    "required": ["size"]
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
  "io.k8s.api.apps.v1.Unused": {"properties": {"x": {"type": "string"}}}
}}}`

func TestFromOpenAPI(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "apis__apps__v1_openapi.json")
	if err := os.WriteFile(doc, []byte(openAPIDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := fromOpenAPI(doc)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := got[gvk{"apps", "v1", "Widget"}]
	if !ok || len(got) != 1 {
		t.Fatalf("schemas for %v, want only apps/v1 Widget", keys(got))
	}
	defs := s["definitions"].(map[string]any)
	if _, ok := defs["io.k8s.api.apps.v1.Unused"]; ok {
		t.Error("an unreferenced definition was included")
	}
	want := map[string]any{
		"properties": map[string]any{
			"size":   map[string]any{"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
			"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"raw":    map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
			"note":   map[string]any{"type": []any{"string", "null"}},
		},
		"required":             []any{"size"},
		"additionalProperties": false,
	}
	if spec := defs["io.k8s.api.apps.v1.WidgetSpec"]; !reflect.DeepEqual(spec, want) {
		b, _ := json.Marshal(spec)
		t.Errorf("WidgetSpec converted to %s", b)
	}
	widget := defs["io.k8s.api.apps.v1.Widget"].(map[string]any)
	if _, ok := widget["description"]; ok {
		t.Error("description keyword kept")
	}
	if _, ok := widget["properties"].(map[string]any)["description"]; !ok {
		t.Error("a property named description was dropped")
	}
}

func TestFromCRD(t *testing.T) {
	dir := t.TempDir()
	crd := filepath.Join(dir, "crd.yaml")
	if err := os.WriteFile(crd, []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor}
  versions:
    - name: v1
      served: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                port: {x-kubernetes-int-or-string: true}
    - name: v0
      served: false
      schema: {openAPIV3Schema: {type: object}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := fromCRD(crd)
	if err != nil {
		t.Fatal(err)
	}
	g := gvk{"monitoring.coreos.com", "v1", "ServiceMonitor"}
	if len(got) != 1 || got[g] == nil {
		t.Fatalf("schemas for %v, want only %v", keys(got), g)
	}
	if name := g.fileName(); name != "servicemonitor-monitoring-v1.json" {
		t.Errorf("file name %s", name)
	}
	b, _ := json.Marshal(got[g])
	for _, want := range []string{`"additionalProperties":false`, `"oneOf":[{"type":"integer"},{"type":"string"}]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema %s lacks %s", b, want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	empty := t.TempDir()
	notCRD := filepath.Join(empty, "x.yaml")
	if err := os.WriteFile(notCRD, []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no flags":       nil,
		"no documents":   {"-openapi", empty, "-out", t.TempDir()},
		"missing dir":    {"-openapi", filepath.Join(empty, "nope"), "-out", t.TempDir()},
		"not a CRD":      {"-openapi", writeDoc(t), "-out", t.TempDir(), "-crd", notCRD},
		"missing CRD":    {"-openapi", writeDoc(t), "-out", t.TempDir(), "-crd", filepath.Join(empty, "nope.yaml")},
		"undefined ref":  {"-openapi", writeDocText(t, `{"components":{"schemas":{"A":{"x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"A"}],"$ref":"#/components/schemas/B"}}}}`), "-out", t.TempDir()},
		"malformed json": {"-openapi", writeDocText(t, `{"components":`), "-out", t.TempDir()},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("%s: run succeeded", name)
		}
	}
}

func TestRunWritesKubeconformLayout(t *testing.T) {
	out := t.TempDir()
	if err := run([]string{"-openapi", writeDoc(t), "-out", out}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "widget-apps-v1.json")); err != nil {
		t.Errorf("kubeconform file missing: %v", err)
	}
	if got := (gvk{"", "v1", "Service"}).fileName(); got != "service-v1.json" {
		t.Errorf("core file name %s", got)
	}
}

func writeDoc(t *testing.T) string { return writeDocText(t, openAPIDoc) }

func writeDocText(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "apis__apps__v1_openapi.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func keys(m map[gvk]map[string]any) []gvk {
	var ks []gvk
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
