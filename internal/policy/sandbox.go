package policy

import (
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// allowedBuiltins are the only builtins a custom module may call. Each is
// deterministic (same input, same answer), touches neither the network nor
// the host, and costs at most about its operands' size or polls the
// evaluation budget while it works (numbers.range, concat, replace, walk…).
// The list is closed on purpose: a builtin a newer OPA adds stays out until
// someone has checked it.
var allowedBuiltins = []string{
	// Operators: = := == != < <= > >= + - * / % & | in
	"eq", "assign", "equal", "neq", "lt", "lte", "gt", "gte",
	"plus", "minus", "mul", "div", "rem", "and", "or",
	"internal.member_2", "internal.member_3",
	// Numbers
	"abs", "ceil", "floor", "round", "to_number", "format_int",
	"numbers.range", "numbers.range_step",
	"bits.and", "bits.or", "bits.xor", "bits.negate", "bits.rsh",
	"units.parse", "units.parse_bytes",
	// Aggregates, arrays, sets, objects
	"count", "sum", "product", "max", "min", "sort", "all", "any",
	"array.concat", "array.slice", "array.reverse",
	"intersection", "union",
	"object.get", "object.keys", "object.remove", "object.filter", "object.subset",
	"walk", "graph.reachable",
	// Strings
	"concat", "contains", "startswith", "endswith", "indexof", "indexof_n",
	"lower", "upper", "replace", "split", "substring",
	"trim", "trim_left", "trim_right", "trim_prefix", "trim_suffix", "trim_space",
	"strings.count", "strings.replace_n", "strings.reverse", "strings.split_n",
	"strings.any_prefix_match", "strings.any_suffix_match",
	"regex.match", "re_match", "regex.is_valid", "regex.split", "regex.find_n",
	"regex.find_all_string_submatch_n", "regex.replace", "regex.template_match",
	"glob.match", "glob.quote_meta",
	// Types
	"is_string", "is_number", "is_boolean", "is_array", "is_set", "is_object", "is_null", "type_name",
	// Encodings and hashes of values already in hand
	"base64.encode", "base64.decode", "base64.is_valid",
	"base64url.encode", "base64url.encode_no_pad", "base64url.decode",
	"hex.encode", "hex.decode",
	"urlquery.encode", "urlquery.decode", "urlquery.encode_object", "urlquery.decode_object",
	"json.unmarshal", "json.is_valid", "uri.is_valid", "uri.parse",
	"crypto.md5", "crypto.sha1", "crypto.sha256",
	"crypto.hmac.md5", "crypto.hmac.sha1", "crypto.hmac.sha256", "crypto.hmac.sha512", "crypto.hmac.equal",
	// Addresses
	"net.cidr_contains", "net.cidr_contains_matches", "net.cidr_intersects",
	"net.cidr_is_valid", "net.cidr_merge", "net.cidr_overlap", "net.cidr_expand",
	// Time, always of a given instant (input.now_ns); a zone name reads Go's
	// time-zone database, which Go confines to zone files.
	"time.add_date", "time.clock", "time.date", "time.diff", "time.format",
	"time.parse_duration_ns", "time.parse_ns", "time.parse_rfc3339_ns", "time.weekday",
	// Versions and identifiers
	"semver.compare", "semver.is_valid", "uuid.parse",
	// Annotations; print and trace go nowhere (no print hook, no tracer)
	"rego.metadata.chain", "rego.metadata.rule", "print", "internal.print", "trace",
}

// Why the builtins that matter are refused; any other builtin outside
// allowedBuiltins gets the generic reason.
const (
	whyHost     = "it reaches the network or the host"
	whyRandom   = "its answer changes from one evaluation to the next"
	whyFormat   = "it formats a whole value in one call that the budget cannot interrupt, and a value that shares structure formats to an exponential size; build messages with concat and format_int"
	whyUnbound  = "one call can run or allocate without bound, and the budget cannot interrupt it"
	whyNotInSet = "it is not among the builtins custom Rego may call (docs/policy.md lists them)"
)

var refusedBecause = map[string]string{
	"http.send":          whyHost + " (HTTP requests)",
	"net.lookup_ip_addr": whyHost + " (DNS)",
	"opa.runtime":        whyHost + " (the process's environment and configuration)",
	"json.match_schema":  whyHost + " (a schema's $ref is fetched from files and URLs)",
	"json.verify_schema": whyHost + " (a schema's $ref is fetched from files and URLs)",

	"time.now_ns":            whyRandom + " (the wall clock: use input.now_ns)",
	"rand.intn":              whyRandom + " (random)",
	"uuid.rfc4122":           whyRandom + " (random)",
	"io.jwt.encode_sign":     whyRandom + " (random signatures)",
	"io.jwt.decode_verify":   whyRandom + " (it reads the wall clock)",
	"io.jwt.encode_sign_raw": whyRandom + " (random signatures)",
	"crypto.x509.parse_and_verify_certificates":              whyRandom + " (it reads the wall clock)",
	"crypto.x509.parse_and_verify_certificates_with_options": whyRandom + " (it reads the wall clock)",

	"sprintf":                   whyFormat,
	"internal.template_string":  whyFormat + " (this is a template string)",
	"json.marshal":              whyFormat,
	"json.marshal_with_options": whyFormat,
	"yaml.marshal":              whyFormat,

	"graph.reachable_paths":   whyUnbound + " (it lists every path: exponential in the graph)",
	"bits.lsh":                whyUnbound + " (a large shift allocates that many bits at once)",
	"strings.render_template": whyUnbound + " (a Go template loops on its own)",
	"object.union":            whyUnbound + " (it copies nested objects recursively)",
	"object.union_n":          whyUnbound + " (it copies nested objects recursively)",
}

// sandboxCapabilities are this OPA's capabilities with only the allowed
// builtins: the compiler then rejects anything checkBuiltins missed
// (a builtin used as a `with` target, say).
func sandboxCapabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		return !slices.Contains(allowedBuiltins, b.Name)
	})
	return caps
}

// checkBuiltins reports every call in m to a builtin outside
// allowedBuiltins, with its line and the reason. Calls to the module's own
// functions are not builtins and pass; a module that imports a package
// under a builtin's name (`import data.x as http`) is refused, which is safe.
func checkBuiltins(file string, m *ast.Module) []Problem {
	var out []Problem
	report := func(op *ast.Term, loc *ast.Location) {
		ref, ok := op.Value.(ast.Ref)
		if !ok {
			return
		}
		name := ref.String()
		if _, builtin := ast.BuiltinMap[name]; !builtin || slices.Contains(allowedBuiltins, name) {
			return
		}
		why, ok := refusedBecause[name]
		if !ok {
			why = whyNotInSet
		}
		p := Problem{File: file, Code: "rego_builtin_forbidden",
			Message: fmt.Sprintf("custom Rego may not call %s: %s", name, why)}
		if op.Location != nil {
			loc = op.Location
		}
		if loc != nil {
			p.Line = loc.Row
		}
		out = append(out, p)
	}
	ast.NewGenericVisitor(func(x any) bool {
		switch x := x.(type) {
		case *ast.Expr:
			if x.IsCall() {
				report(x.OperatorTerm(), x.Location)
			}
		case ast.Call:
			if len(x) > 0 {
				report(x[0], x[0].Location)
			}
		}
		return false
	}).Walk(m)
	return out
}
