// Command kubeschema turns the Kubernetes OpenAPI v3 documents (as shipped in
// the k8s.io/kubernetes module, api/openapi-spec/v3) and CRD manifests into
// standalone, strict JSON schemas laid out the way kubeconform looks them up
// ("{{ .ResourceKind }}{{ .KindSuffix }}.json"). It exists so the Helm chart
// is validated offline against the exact API version gated targets, with
// nothing fetched but Go modules.
//
// Strict means every object schema that lists its properties rejects any
// other property, which is what catches a misspelt or misplaced field.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubeschema:", err)
		os.Exit(1)
	}
}

type crdFlags []string

func (c *crdFlags) String() string     { return strings.Join(*c, ",") }
func (c *crdFlags) Set(s string) error { *c = append(*c, s); return nil }

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("kubeschema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	openapi := fs.String("openapi", "", "directory of Kubernetes OpenAPI v3 documents (*_openapi.json)")
	out := fs.String("out", "", "directory to write schemas into")
	var crds crdFlags
	fs.Var(&crds, "crd", "CustomResourceDefinition manifest to add (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *openapi == "" || *out == "" {
		return errors.New("-openapi and -out are required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("create output dir: %w", err)
	}
	docs, err := filepath.Glob(filepath.Join(*openapi, "*_openapi.json"))
	if err != nil {
		return fmt.Errorf("list OpenAPI documents: %w", err)
	}
	if len(docs) == 0 {
		return fmt.Errorf("no *_openapi.json in %s", *openapi)
	}
	n := 0
	emit := func(schemas map[gvk]map[string]any, err error) error {
		if err != nil {
			return err
		}
		n += len(schemas)
		return write(*out, schemas)
	}
	for _, doc := range docs {
		if err := emit(fromOpenAPI(doc)); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := emit(fromCRD(crd)); err != nil {
			return err
		}
	}
	if n == 0 {
		return errors.New("no kinds found")
	}
	return nil
}

// gvk is a group, version and kind; Group is "" for the core API.
type gvk struct{ Group, Version, Kind string }

// fileName is kubeconform's "{{ .ResourceKind }}{{ .KindSuffix }}.json":
// deployment-apps-v1.json, service-v1.json, servicemonitor-monitoring-v1.json.
func (g gvk) fileName() string {
	suffix := "-" + strings.ToLower(g.Version)
	if g.Group != "" {
		suffix = "-" + strings.ToLower(strings.Split(g.Group, ".")[0]) + suffix
	}
	return strings.ToLower(g.Kind) + suffix + ".json"
}

func write(dir string, schemas map[gvk]map[string]any) error {
	for g, s := range schemas {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode schema of %v: %w", g, err)
		}
		if err := os.WriteFile(filepath.Join(dir, g.fileName()), b, 0o644); err != nil {
			return fmt.Errorf("write schema of %v: %w", g, err)
		}
	}
	return nil
}

const openAPIRef = "#/components/schemas/"

// fromOpenAPI returns a standalone schema for every kind an OpenAPI v3
// document defines: a reference to the kind's definition plus every
// definition it reaches, converted to strict JSON schema.
func fromOpenAPI(path string) (map[gvk]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read OpenAPI document: %w", err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	defs := doc.Components.Schemas
	out := map[gvk]map[string]any{}
	for name, def := range defs {
		kinds, err := kindsOf(def)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		if len(kinds) == 0 {
			continue
		}
		reached := map[string]any{}
		if err := reach(name, defs, reached); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, k := range kinds {
			out[k] = map[string]any{
				"allOf":       []any{map[string]any{"$ref": "#/definitions/" + name}},
				"definitions": reached,
			}
		}
	}
	return out, nil
}

// kindsOf reads x-kubernetes-group-version-kind. List kinds and options
// shared by every group (DeleteOptions, WatchEvent…) are skipped: charts
// never render them, and they would overwrite each other's files.
func kindsOf(def map[string]any) ([]gvk, error) {
	raw, ok := def["x-kubernetes-group-version-kind"]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var all []gvk
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("x-kubernetes-group-version-kind: %w", err)
	}
	if len(all) != 1 {
		return nil, nil
	}
	return all, nil
}

// reach converts name and every definition it references into reached.
func reach(name string, defs map[string]map[string]any, reached map[string]any) error {
	if _, done := reached[name]; done {
		return nil
	}
	def, ok := defs[name]
	if !ok {
		return fmt.Errorf("reference to undefined schema %q", name)
	}
	var refs []string
	reached[name] = convert(def, &refs)
	sort.Strings(refs)
	for _, r := range refs {
		if err := reach(r, defs, reached); err != nil {
			return err
		}
	}
	return nil
}

// convert turns one OpenAPI v3 schema object into a strict draft-4 JSON
// schema: component references point into "definitions", Kubernetes
// extensions and descriptions are dropped, nullable becomes a null type,
// int-or-string becomes a oneOf, and objects with known properties reject
// unknown ones unless they preserve unknown fields. Names of referenced
// components are appended to refs.
func convert(node any, refs *[]string) any {
	switch n := node.(type) {
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = convert(v, refs)
		}
		return out
	case map[string]any:
		return convertObject(n, refs)
	default:
		return node
	}
}

func convertObject(n map[string]any, refs *[]string) map[string]any {
	out := map[string]any{}
	for k, v := range n {
		switch {
		case strings.HasPrefix(k, "x-kubernetes-"), k == "description", k == "nullable":
		case k == "$ref":
			s, _ := v.(string)
			name := strings.TrimPrefix(s, openAPIRef)
			*refs = append(*refs, name)
			out[k] = "#/definitions/" + name
		case k == "properties":
			// Property names are not keywords: convert each value, never
			// the map itself (a property may be called "description").
			props, _ := v.(map[string]any)
			conv := make(map[string]any, len(props))
			for pk, pv := range props {
				conv[pk] = convert(pv, refs)
			}
			out[k] = conv
		default:
			out[k] = convert(v, refs)
		}
	}
	if n["nullable"] == true {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	if n["x-kubernetes-int-or-string"] == true && out["anyOf"] == nil && out["oneOf"] == nil {
		delete(out, "type")
		out["oneOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	}
	_, hasProps := out["properties"]
	_, hasAdditional := out["additionalProperties"]
	if hasProps && !hasAdditional && n["x-kubernetes-preserve-unknown-fields"] != true {
		out["additionalProperties"] = false
	}
	return out
}

// fromCRD returns a strict schema for every served version of the
// CustomResourceDefinitions in a manifest.
func fromCRD(path string) (map[gvk]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open CRD: %w", err)
	}
	defer f.Close()
	out := map[gvk]map[string]any{}
	dec := yaml.NewDecoder(f)
	for {
		var crd struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Group string `yaml:"group"`
				Names struct {
					Kind string `yaml:"kind"`
				} `yaml:"names"`
				Versions []struct {
					Name   string `yaml:"name"`
					Served bool   `yaml:"served"`
					Schema struct {
						OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
					} `yaml:"schema"`
				} `yaml:"versions"`
			} `yaml:"spec"`
		}
		err := dec.Decode(&crd)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s: kind %q, want CustomResourceDefinition", path, crd.Kind)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var refs []string
			out[gvk{crd.Spec.Group, v.Name, crd.Spec.Names.Kind}] = convertObject(v.Schema.OpenAPIV3Schema, &refs)
			if len(refs) > 0 {
				return nil, fmt.Errorf("%s: CRD schemas cannot hold references, found %v", path, refs)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no served CRD version with a schema", path)
	}
	return out, nil
}
