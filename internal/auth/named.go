package auth

// Named returns the token called name. The web console finds a session's
// token by it on every request, so a token removed from the tokens file
// ends its sessions. Tokens are few: a scan costs less than keeping a
// second index in step.
func (ts *Tokens) Named(name string) (*Token, bool) {
	if ts == nil || name == "" {
		return nil, false
	}
	for _, t := range ts.byDigest {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Approver gives the principals of the token called name when it exists
// and holds scope approve: whoever approved a call, as their token stands
// now (gate.WithApprovers).
func (ts *Tokens) Approver(name string) ([]string, bool) {
	t, ok := ts.Named(name)
	if !ok || !t.Has(ScopeApprove) {
		return nil, false
	}
	return t.Principals, true
}
