// Package policy decides who may perform which action: operator-written
// POLICY.md files (AIP-38, policy/v1) and custom Rego modules, compiled
// into one query that embedded OPA evaluates once per decision, or, for
// POLICY.md alone, an index that Go evaluates to the same answer. The policy
// only tightens: its findings join the contract's and the catalog's, and
// anything that goes wrong inside it refuses the call
// (policy_evaluation_error). docs/policy.md is the operator's view.
//
// Where to start reading: Load (load.go) for what a revision is made of,
// Set.Evaluate (evaluate.go) for what one decision asks of it.
//
// # From POLICY.md to Rego
//
// Load walks the policy directories and builds a Set: one immutable,
// compiled revision (a reload builds a new one). Each POLICY.md is parsed
// and checked against the AIP-38 schema and gated's own rules
// (document.go). The grants become a generated module, package
// gated.grants (compile.go): one rule per (grant, action) pair whose first
// expression matches the action and whose second the principal, so OPA's
// rule index considers only the grants of the decision's action and
// principals; time comes from input.now_ns, never the clock. Action refs
// that are not bare ids resolve through the catalog's Resolver
// (actionref.go). Requirements and limits stay in Go (Set.compileRules),
// where an unresolved ref is an error, since it would drop a restriction.
// Custom modules live under gated.custom and may call only the builtins
// sandbox.go allows. A generated gated.decision module gathers the grant
// candidates and the custom findings into one document, and prepare
// compiles everything into the one query a decision runs. `gated policy
// compile` prints the generated grants (tooling.go).
//
// # One evaluation
//
// A policy of POLICY.md alone (no custom module) is decided without Rego: the native evaluator (native.go), whose index the
// generator builds from the same (grant, action) pairs it writes rules
// for, finds the same grant candidates the query would, and leaves to the
// query only what the query would fail on, so that it fails the same way.
// Otherwise Set.Evaluate builds the Rego input as an ast.Value straight
// from the Input (input.go), runs the query under the budget (budget.go)
// and reads OPA's answer back (output.go). Then, in Go: the grants (an allowing
// candidate, or default: allow everywhere, allows; otherwise the candidate
// that got furthest explains the deny), the requirements (mfa-recent,
// approval-from, the action's approval policy) and the rate limits, which
// spend from the token buckets of a Limiter (limiter.go) that outlives
// reloads. Without any POLICY.md nothing is enforced but what custom
// modules find. Principals (principals.go) says who a request acts for.
// Only for `gated policy test --coverage` does the query run with a tracer
// (coverage.go), which records the custom rules that held.
//
// # The evaluation budget
//
// Every evaluation has a budget of time (DefaultEvalBudget), of steps
// (DefaultEvalSteps: OPA asks to go on before each expression and inside
// the builtins that loop) and of memory allocated while it runs
// (DefaultEvalMemory), set with WithEvalBudget, WithEvalSteps and
// WithEvalMemory. Whichever runs out first stops the evaluation and the
// call is refused (policy_budget_exceeded). OPA runs on a reused evaluation
// goroutine while the caller watches the clock and the memory; an
// evaluation that does not stop within a grace period is abandoned, and
// while one still runs every new evaluation refuses, so stuck evaluations
// cannot pile up.
package policy
