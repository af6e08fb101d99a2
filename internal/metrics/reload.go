package metrics

const (
	resultSuccess = "success"
	resultFailure = "failure"
)

func result(ok bool) string {
	if ok {
		return resultSuccess
	}
	return resultFailure
}

// CatalogReload counts one catalog reload attempt.
func (m *Metrics) CatalogReload(ok bool) { m.catalogReloads.WithLabelValues(result(ok)).Inc() }

// PolicyReload counts one policy reload attempt.
func (m *Metrics) PolicyReload(ok bool) { m.policyReloads.WithLabelValues(result(ok)).Inc() }

// SetRevisions names the catalog and policy revisions now in use. The
// previous pair is removed so exactly one gated_revision_info series exists.
func (m *Metrics) SetRevisions(catalog, policy string) {
	m.revisionInfo.Reset()
	m.revisionInfo.WithLabelValues(clamp(catalog), clamp(policy)).Set(1)
}
