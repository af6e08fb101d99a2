package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestSubset(t *testing.T) {
	stored := map[string]any{
		"spec": map[string]any{
			"replicas": 3.0, "paused": false, // defaulted by the server
			"ports": []any{map[string]any{"port": 80.0, "protocol": "TCP"}},
		},
	}
	cases := []struct {
		name     string
		rendered map[string]any
		diffs    []string
	}{
		{"equal fields", map[string]any{"spec": map[string]any{"replicas": 3.0}}, nil},
		{"server defaults are fine", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": 80.0}}}}, nil},
		{"empty rendered map", map[string]any{"data": map[string]any{}}, nil},
		{"changed value", map[string]any{"spec": map[string]any{"replicas": 2.0}}, []string{"X.spec.replicas: rendered 2, stored 3"}},
		{"missing field", map[string]any{"spec": map[string]any{"minReadySeconds": 5.0}}, []string{"X.spec.minReadySeconds: rendered 5, stored <nil>"}},
		{"missing object", map[string]any{"status": map[string]any{"a": "b"}}, []string{"X.status: missing"}},
		{"list length", map[string]any{"spec": map[string]any{"ports": []any{}}}, []string{"X.spec.ports: 0 items rendered, 1 stored"}},
	}
	for _, c := range cases {
		var diffs []string
		subset(c.rendered, stored, "X", &diffs)
		if strings.Join(diffs, "|") != strings.Join(c.diffs, "|") {
			t.Errorf("%s: diffs %q, want %q", c.name, diffs, c.diffs)
		}
	}
}

func TestStringDataToData(t *testing.T) {
	o := map[string]any{"stringData": map[string]any{"k": "v"}, "data": map[string]any{"x": "eQ=="}}
	stringDataToData(o)
	data := o["data"].(map[string]any)
	if data["k"] != base64.StdEncoding.EncodeToString([]byte("v")) || data["x"] != "eQ==" || o["stringData"] != nil {
		t.Errorf("got %v", o)
	}
}

func TestCheckKinds(t *testing.T) {
	objs, err := decode([]byte("kind: Service\nmetadata: {name: a}\n---\n---\nkind: Deployment\nmetadata: {name: b}\n"))
	if err != nil || len(objs) != 2 {
		t.Fatalf("decode: %d objects, %v", len(objs), err)
	}
	if err := checkKinds(objs, []string{"Service", "Deployment"}); err != nil {
		t.Error(err)
	}
	if err := checkKinds(objs, []string{"Service", "Job"}); err == nil {
		t.Error("a missing kind was not reported")
	}
}
