package catalog

import (
	"embed"

	"github.com/gatedhq/gated/internal/opfile"
)

// The frontmatter schemas of the four formats. action-md is agentproto's
// ACTION.schema.json unchanged; the others say in their description how
// they differ from their source.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

var (
	actionMDSchema    = mustCompileEmbedded("action-md.schema.json")
	toolMDSchema      = mustCompileEmbedded("tool-md.schema.json")
	actionsYAMLSchema = mustCompileEmbedded("actions-yaml.schema.json")
	actionJSONSchema  = mustCompileEmbedded("action-json.schema.json")
)

// mustCompileEmbedded compiles one of the package's own schemas, at start:
// a schema that does not compile fails every test of the package.
func mustCompileEmbedded(name string) *opfile.Schema {
	b, err := schemaFiles.ReadFile("schemas/" + name)
	if err != nil {
		panic(err)
	}
	return opfile.MustCompileSchema(name, b)
}
