// Package api holds gated's published contract files, embedded so the binary
// serves and validates against exactly what is documented.
package api

import _ "embed"

// ContractSchema is the Agent Action Contract v1 JSON schema (draft 2020-12),
// byte for byte as the reference publishes it.
//
//go:embed agent_action_contract_v1.schema.json
var ContractSchema []byte

// OpenAPI is gated's HTTP API description (OpenAPI 3.0.3), served at
// /openapi.yaml and used by the tests to validate every response.
//
//go:embed openapi.yaml
var OpenAPI []byte
