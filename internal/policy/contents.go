package policy

import "slices"

// Documents are the parsed POLICY.md files of the set, in load order. They
// are shared with every decision and must not be modified; `gated policy
// diff` compares two sets' grants, requirements and limits through them.
func (s *Set) Documents() []*Document { return slices.Clone(s.docs) }

// Module is a custom Rego module of the set, by its content hash and its
// file's path below the policy directory (or bundle) it was read from, so
// that two copies of one policy name their modules alike.
type Module struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// Modules are the custom Rego modules of the set, in load order.
func (s *Set) Modules() []Module { return slices.Clone(s.modules) }
