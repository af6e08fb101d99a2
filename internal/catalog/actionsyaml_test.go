package catalog

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// TestCommandTemplates: RFC-001's template rules are load errors at the
// command, or the argv item, that breaks them.
func TestCommandTemplates(t *testing.T) {
	t.Parallel()
	const urlInput = "{type: object, properties: {url: {type: string}, depth: {type: integer}}}"
	tests := []struct {
		name, command, input string
		field, code          string // "" for a catalog that loads
		msgFragments         []string
	}{
		{"string without templates", `"python main.py --version"`, urlInput, "", "", nil},
		{"argv with templates", `[python, main.py, "{{url}}", --depth, "{{depth}}"]`, urlInput, "", "", nil},
		{"template inside an argument", `[curl, "--url={{url}}&d={{depth}}"]`, urlInput, "", "", nil},
		{"lone closing braces stay literal", `[jq, ".a | {b: {c: .d}}"]`, urlInput, "", "", nil},
		{"string with a template", `"python main.py scrape {{url}}"`, urlInput, "/actions/0/command", "command_template_in_string", []string{"array form"}},
		{"string with an unclosed template", `"echo {{"`, urlInput, "/actions/0/command", "command_template_in_string", nil},
		{"unknown input", `[python, "{{url}}", "{{nope}}"]`, urlInput, "/actions/0/command/2", "command_template_unknown_input", []string{"{{nope}}", "declared: depth, url"}},
		{"unknown input inside an argument", `[curl, "--url={{link}}"]`, urlInput, "/actions/0/command/1", "command_template_unknown_input", []string{"{{link}}"}},
		{"no properties declared", `[x, "{{url}}"]`, "{type: object}", "/actions/0/command/1", "command_template_unknown_input", []string{"declares none"}},
		{"an env name is not an input", `[x, "{{API_KEY}}"]`, urlInput, "/actions/0/command/1", "command_template_unknown_input", []string{"{{API_KEY}}"}},
		{"unclosed", `[x, "{{url"]`, urlInput, "/actions/0/command/1", "command_template_malformed", []string{"never closed"}},
		{"unclosed after a good one", `[x, "{{url}}-{{depth"]`, urlInput, "/actions/0/command/1", "command_template_malformed", []string{"never closed"}},
		{"empty", `[x, "{{}}"]`, urlInput, "/actions/0/command/1", "command_template_malformed", []string{"names nothing"}},
		{"nested", `[x, "{{a{{url}}}}"]`, urlInput, "/actions/0/command/1", "command_template_malformed", []string{"nest"}},
		{"triple braces", `[x, "{{{url}}}"]`, urlInput, "/actions/0/command/1", "command_template_malformed", []string{"nest"}},
		{"white space in a name", `[x, "{{ url }}"]`, urlInput, "/actions/0/command/1", "command_template_malformed", []string{"white space"}},
		// A schema that does not compile is reported once, not again for every template.
		{"invalid input schema", `[x, "{{url}}"]`, "{type: 5}", "/actions/0/inputSchema", "input_schema_invalid", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			yaml := "actions:\n  - {name: ok, description: d, command: [x], inputSchema: {}}\n" +
				"  - {name: a, description: d, command: " + tt.command + ", inputSchema: " + tt.input + "}\n"
			dir := testtree.Write(t, t.TempDir(), map[string]string{"ACTIONS.yaml": yaml})
			if tt.code == "" {
				mustLoad(t, dir)
				return
			}
			ps := loadProblems(t, dir)
			want := strings.Replace(tt.field, "/actions/0/", "/actions/1/", 1)
			if len(ps) != 1 || ps[0].Field != want || ps[0].Code != tt.code {
				t.Fatalf("want the one problem ACTIONS.yaml: %s: %s; got:\n%s", want, tt.code, (&LoadError{Problems: ps}).Error())
			}
			for _, frag := range tt.msgFragments {
				if !strings.Contains(ps[0].Message, frag) {
					t.Errorf("message %q lacks %q", ps[0].Message, frag)
				}
			}
		})
	}
}

// TestSecretEnvNeverInCatalogView: an env entry shows its name and how it is
// provided; no value, secret or not, and nothing derived from one.
func TestSecretEnvNeverInCatalogView(t *testing.T) {
	t.Parallel()
	const secret, plain = "sk-live-0123456789abcdefSECRET", "verbose-plain-default"
	actionsYAML := func(secretDefault string) string {
		return "env:\n" +
			"  API_TOKEN: {description: the token, secret: true, required: true, default: " + secretDefault + "}\n" +
			"  DEBUG: {description: logging, default: " + plain + "}\n" +
			"actions:\n  - {name: fetch, description: d, command: [x, \"{{url}}\"], inputSchema: {properties: {url: {type: string}}}}\n"
	}
	document := func(secretDefault string) (Document, []byte) {
		c := mustLoad(t, testtree.Write(t, t.TempDir(), map[string]string{"ACTIONS.yaml": actionsYAML(secretDefault)}))
		d := c.Document(nil, time.Time{})
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return d, b
	}
	d, b := document(secret)

	want := []EnvVar{{Name: "API_TOKEN", Secret: true, Required: true}, {Name: "DEBUG"}}
	if len(d.Tools) != 1 || !slices.Equal(d.Tools[0].Env, want) {
		t.Fatalf("env view %+v, want %+v", d.Tools[0].Env, want)
	}
	if !bytes.Contains(b, []byte(`"env":[{"name":"API_TOKEN","secret":true,"required":true},{"name":"DEBUG"}]`)) {
		t.Errorf("catalog JSON lacks the env names: %s", b)
	}
	s256, s1, m5 := sha256.Sum256([]byte(secret)), sha1.Sum([]byte(secret)), md5.Sum([]byte(secret))
	for _, leak := range []string{
		secret, plain, "sk-live",
		hex.EncodeToString(s256[:]), hex.EncodeToString(s1[:]), hex.EncodeToString(m5[:]),
		base64.StdEncoding.EncodeToString([]byte(secret)), base64.StdEncoding.EncodeToString(s256[:]),
		base64.RawURLEncoding.EncodeToString(s256[:]),
	} {
		if bytes.Contains(b, []byte(leak)) {
			t.Errorf("catalog JSON holds %q: %s", leak, b)
		}
	}
	// Nothing in the view depends on the value: another secret gives the same
	// JSON but for the revision, a hash over whole files, not over the value.
	other, ob := document("sk-live-another-value-entirely")
	if other.Revision == d.Revision {
		t.Fatal("the revision ignores file content")
	}
	if string(bytes.Replace(ob, []byte(other.Revision), []byte(d.Revision), 1)) != string(b) {
		t.Errorf("the catalog JSON depends on the secret's value:\n%s\n%s", b, ob)
	}

	// The example catalog's token is secret, and shows as such.
	if v, _ := mustLoad(t, examples).Lookup("search_kb"); !slices.Equal(v.Env, []EnvVar{{Name: "KB_API_TOKEN", Secret: true, Required: true}}) {
		t.Errorf("search_kb env %+v", v.Env)
	}
}

// TestEnvProblemsDoNotQuoteValues: a malformed env entry is a load error
// that names the field, never the value written there.
func TestEnvProblemsDoNotQuoteValues(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-0123456789abcdefSECRET"
	const actions = "actions:\n  - {name: a, description: d, command: [x], inputSchema: {}}\n"
	tests := []struct {
		name, env, field, code string
	}{
		{"a bare value instead of an entry", "API_TOKEN: " + secret, "/env/API_TOKEN", "invalid_type"},
		{"a value in the secret flag", "API_TOKEN: {secret: " + secret + "}", "/env/API_TOKEN/secret", "invalid_type"},
		{"a value under an unknown key", "API_TOKEN: {secret: true, value: " + secret + "}", "/env/API_TOKEN/value", "unknown_field"},
		{"a default that is not a string", "API_TOKEN: {secret: true, default: [" + secret + "]}", "/env/API_TOKEN/default", "invalid_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ps := loadProblems(t, testtree.Write(t, t.TempDir(), map[string]string{"ACTIONS.yaml": "env:\n  " + tt.env + "\n" + actions}))
			list := (&LoadError{Problems: ps}).Error()
			if len(ps) != 1 || ps[0].Field != tt.field || ps[0].Code != tt.code {
				t.Fatalf("want ACTIONS.yaml: %s: %s; got:\n%s", tt.field, tt.code, list)
			}
			if strings.Contains(list, "sk-live") {
				t.Errorf("problem quotes the value: %s", list)
			}
		})
	}
}

// TestRFC001CrawlerExample: the SKILL.md and ACTIONS.yaml of RFC-001's
// specification section, read from the vendored RFC, load into the three
// actions its text describes, with the outputSchema two of them declare.
func TestRFC001CrawlerExample(t *testing.T) {
	t.Parallel()
	rfc, err := os.ReadFile(filepath.Join("..", "..", "spec", "rfc-001-agent-actions.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"firecrawl/SKILL.md":     rfcYAMLBlock(t, string(rfc), "### 1. SKILL.md"),
		"firecrawl/ACTIONS.yaml": rfcYAMLBlock(t, string(rfc), "### 2. ACTIONS.yaml"),
	})
	c := mustLoad(t, dir)
	if c.Len() != 3 {
		t.Fatalf("%d views, want scrape, crawl and search", c.Len())
	}
	env := []EnvVar{{Name: "API_KEY", Secret: true, Required: true}, {Name: "DEBUG"}}
	tests := []struct {
		name     string
		risk     int
		mutates  []string
		category route.Category
		good     map[string]any
		bad      map[string]any
		output   any // a conforming output, nil for no outputSchema
		badOut   any
	}{
		// readOnlyHint: true.
		{"scrape", 0, []string{}, route.PrivateRead, map[string]any{"url": "https://example.com"}, map[string]any{},
			map[string]any{"content": "# Example", "metadata": map[string]any{"status": 200}}, map[string]any{"content": []any{"# Example"}}},
		// No hints: a write with external side effects.
		{"crawl", 2, []string{"external:*"}, route.Write, map[string]any{"url": "https://example.com", "depth": 3}, map[string]any{"url": "https://example.com", "depth": "deep"},
			map[string]any{"pages": []any{"https://example.com/a"}}, "pages"},
		{"search", 2, []string{"external:*"}, route.Write, map[string]any{"query": "go", "limit": 5}, map[string]any{"limit": 5}, nil, nil},
	}
	for _, tt := range tests {
		v, ok := c.Lookup("mendable/firecrawl/" + tt.name)
		if !ok {
			t.Errorf("no view for mendable/firecrawl/%s", tt.name)
			continue
		}
		if bare, _ := c.Lookup(tt.name); bare != v {
			t.Errorf("%s: the bare name does not match the qualified view", tt.name)
		}
		if v.ActionID != v.ToolID || v.RiskLevel != tt.risk || v.Approval != "auto" || !slices.Equal(v.Mutates, tt.mutates) ||
			v.Category() != tt.category || !v.InputSchema || v.Format != FormatActionsYAML || !slices.Equal(v.Env, env) {
			t.Errorf("%s: view %+v", tt.name, v)
		}
		if errs := v.ValidateArguments(tt.good); len(errs) != 0 {
			t.Errorf("%s: valid arguments refused: %v", tt.name, errs)
		}
		if errs := v.ValidateArguments(tt.bad); len(errs) == 0 {
			t.Errorf("%s: invalid arguments %v accepted", tt.name, tt.bad)
		}
		if v.OutputSchema != (tt.output != nil) {
			t.Errorf("%s: output_schema %v", tt.name, v.OutputSchema)
		}
		if tt.output == nil {
			if got := v.OutputConforms(map[string]any{"anything": 1}); got != nil {
				t.Errorf("%s: an output was checked without an outputSchema: %v", tt.name, *got)
			}
			continue
		}
		if got := v.OutputConforms(tt.output); got == nil || !*got {
			t.Errorf("%s: a conforming output %v did not conform", tt.name, tt.output)
		}
		if got := v.OutputConforms(tt.badOut); got == nil || *got {
			t.Errorf("%s: output %v conformed", tt.name, tt.badOut)
		}
	}
}

// TestActionJSONOutputSchema: the Action API's minimum contract writes
// outputSchema {}, which every output meets; a schema that says more is
// checked, up to MaxArgumentValues values.
func TestActionJSONOutputSchema(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"a/action.json": `{"name": "example_action", "riskTier": "R2", "inputSchema": {}, "outputSchema": {}}`,
		"b/action.json": `{"name": "count_lines", "riskTier": "R0", "outputSchema": {"type": "object", "required": ["lines"], "properties": {"lines": {"type": "integer"}}}}`,
	})
	c := mustLoad(t, dir)
	open, _ := c.Lookup("example_action")
	strict, _ := c.Lookup("count_lines")
	many := make([]any, MaxArgumentValues)
	for _, tt := range []struct {
		name   string
		v      *View
		output any
		want   bool
	}{
		{"empty schema, object", open, map[string]any{"files": []any{"a.go"}}, true},
		{"empty schema, string", open, "done", true},
		{"declared shape", strict, map[string]any{"lines": 12}, true},
		{"wrong type", strict, map[string]any{"lines": "12"}, false},
		{"missing field", strict, map[string]any{}, false},
		{"more values than gated checks", strict, map[string]any{"lines": 1, "rest": many}, false},
	} {
		got := tt.v.OutputConforms(tt.output)
		if !tt.v.OutputSchema || got == nil || *got != tt.want {
			t.Errorf("%s: output_schema %v, conforms %v, want %v", tt.name, tt.v.OutputSchema, got, tt.want)
		}
	}
}

// rfcYAMLBlock returns the first ```yaml block after heading in the RFC.
func rfcYAMLBlock(t *testing.T, rfc, heading string) string {
	t.Helper()
	_, after, ok := strings.Cut(rfc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("the RFC has no heading %q", heading)
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if ok {
		block, _, ok = strings.Cut(block, "\n```\n")
	}
	if !ok {
		t.Fatalf("no yaml block after %q", heading)
	}
	return block + "\n"
}
