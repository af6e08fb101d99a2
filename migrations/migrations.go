// Package migrations holds gated's SQL schema. It lives at the top level so
// operators find it, and embeds the files because go:embed cannot reach
// parent directories from internal/audit/postgres, which applies them with
// goose.
package migrations

import "embed"

// FS holds the goose migrations (NNNNN_name.sql), applied in version order.
//
//go:embed *.sql
var FS embed.FS
