package catalog

import "github.com/gatedhq/gated/internal/opfile"

// OutputConforms reports whether an output a runtime reported for a call
// to this tool meets its outputSchema (RFC-001 and the Action API both
// treat an output that does not as an error). It returns nil when the view
// has no outputSchema: nothing was checked. An output with more values
// than MaxArgumentValues does not conform: gated bounds what it validates
// for the same reason as arguments, and cannot vouch for what it skipped.
// As with ValidateArguments, numbers must be within the contract's bounds
// (contract.NumbersInRange) before the validator sees them.
func (v *View) OutputConforms(output any) *bool {
	if v == nil || v.output == nil {
		return nil
	}
	ok := countValues(output, MaxArgumentValues) <= MaxArgumentValues &&
		len(opfile.Validate(v.output, output, opfile.Message)) == 0
	return &ok
}
