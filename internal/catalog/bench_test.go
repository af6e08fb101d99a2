package catalog

import (
	"fmt"
	"testing"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// benchFiles is a catalog of n tools spread over actions of every risk
// level, each tool with an input schema and an alias; it also returns the
// aliases.
func benchFiles(n int) (map[string]string, []string) {
	files := map[string]string{
		"actions/read.ACTION.md":   action("bench:read"),
		"actions/write.ACTION.md":  action("bench:write", "risk_level: 1", `mutates: ["database:bench"]`),
		"actions/send.ACTION.md":   action("bench:send", "risk_level: 2", `mutates: ["external:mail"]`, "approval: on-mutate"),
		"actions/delete.ACTION.md": action("bench:delete", "risk_level: 3", `mutates: ["external:*"]`, "approval: always"),
	}
	impls := []string{"bench:read", "bench:write", "bench:send", "bench:delete"}
	names := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("bench.tool-%d", i)
		names[i] = fmt.Sprintf("bench_tool_%d", i)
		files[fmt.Sprintf("tools/%03d/%d.TOOL.md", i%1000, i)] = fmt.Sprintf(
			"---\nname: %s\nid: %s\ndescription: bench\nversion: 1.0.0\nimplements: %s\n"+
				"inputs: {type: object, required: [id], properties: {id: {type: string, pattern: '^[a-z0-9-]+$'}, n: {type: integer, maximum: 100}}}\n"+
				"outputs: {type: object}\nmetadata: {gated: {aliases: [%s]}}\n---\n",
			id, id, impls[i%len(impls)], names[i])
	}
	return files, names
}

// BenchmarkLookupFloors is the catalog's share of a decision: join the
// tool_name, apply the category rule and every floor, including argument
// validation. Both sizes call the same ten tools (an agent uses a handful),
// so the only difference is the catalog around them: ns/op must not grow
// with it. BenchmarkLookup cycles through every tool instead.
func BenchmarkLookupFloors(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			files, names := benchFiles(n)
			c := mustLoad(b, testtree.Write(b, b.TempDir(), files))
			names = names[:10]
			ev := &route.Event{
				ToolCategory:      route.Write,
				ProposedArguments: map[string]any{"id": "order-1234", "n": 7.0},
				EvidenceRefs:      []route.EvidenceRef{{Kind: "approval", TrustTier: "verified"}},
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				v, ok := c.Lookup(names[i%len(names)])
				if !ok {
					b.Fatal("lookup missed")
				}
				_, cf := EffectiveCategory(v, ev.ToolCategory)
				fs, _ := Floors(v.Call(nil, ""), ev, route.AuthConfirmed, ArgumentsEnforce)
				if len(cf)+len(fs) != 0 {
					b.Fatalf("unexpected findings %v %v", cf, fs)
				}
				i++
			}
		})
	}
}

// BenchmarkLoad measures a full load (scan, parse, validate, compile,
// resolve) of a 1,000-tool catalog: the cost of a reload.
func BenchmarkLoad(b *testing.B) {
	files, _ := benchFiles(1000)
	dir := testtree.Write(b, b.TempDir(), files)
	for b.Loop() {
		if _, err := Load([]string{dir}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup isolates the join of tool_name to its view.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			files, names := benchFiles(n)
			c := mustLoad(b, testtree.Write(b, b.TempDir(), files))
			i := 0
			for b.Loop() {
				if _, ok := c.Lookup(names[i%len(names)]); !ok {
					b.Fatal("lookup missed")
				}
				i++
			}
		})
	}
}
