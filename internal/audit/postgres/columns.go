package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/audit"
)

// column is one column of audit_decisions. Its name is also the JSON name
// of the Record field it holds, and its type is the one the migrations
// give it (as format_type spells it); TestColumnsMatchRecord and
// TestColumnsMatchSchema hold the table to both.
type column struct {
	name    string
	sqlType string
	value   func(*audit.Record) any // what a write sends
	target  func(*audit.Record) any // where a read scans: the field's address
}

// field is a column holding a Record field as it is.
func field[T any](name, sqlType string, f func(*audit.Record) *T) column {
	return column{name: name, sqlType: sqlType,
		value:  func(r *audit.Record) any { return *f(r) },
		target: func(r *audit.Record) any { return f(r) }}
}

// list is a column holding a slice field. A nil slice (a record replayed
// from an older spool, or built by hand) is written empty: the column is
// NOT NULL.
func list[T any](name, sqlType string, f func(*audit.Record) *[]T) column {
	return column{name: name, sqlType: sqlType,
		value: func(r *audit.Record) any {
			if s := *f(r); s != nil {
				return s
			}
			return []T{}
		},
		target: func(r *audit.Record) any { return f(r) }}
}

// columns is every column of audit_decisions, in the order of Record's
// fields. Everything that writes or reads records derives from it: the
// COPY column list, the values written, the staging insert, the
// correction upsert and the Store's scan targets. Adding a column is one
// line here plus a migration (docs/development.md).
var columns = []column{
	field("decision_id", "text", func(r *audit.Record) *string { return &r.DecisionID }),
	field("decided_at", "timestamp with time zone", func(r *audit.Record) *time.Time { return &r.DecidedAt }),
	field("request_id", "text", func(r *audit.Record) *string { return &r.RequestID }),
	field("agent_id", "text", func(r *audit.Record) *string { return &r.AgentID }),
	field("tool_name", "text", func(r *audit.Record) *string { return &r.ToolName }),
	field("action_id", "text", func(r *audit.Record) *string { return &r.ActionID }),
	field("action_version", "text", func(r *audit.Record) *string { return &r.ActionVersion }),
	field("declared_category", "text", func(r *audit.Record) *string { return &r.DeclaredCategory }),
	field("effective_category", "text", func(r *audit.Record) *string { return &r.EffectiveCategory }),
	field("declared_auth", "text", func(r *audit.Record) *string { return &r.DeclaredAuth }),
	field("effective_auth", "text", func(r *audit.Record) *string { return &r.EffectiveAuth }),
	field("risk_domain", "text", func(r *audit.Record) *string { return &r.RiskDomain }),
	field("runtime_route", "text", func(r *audit.Record) *string { return &r.RuntimeRoute }),
	field("final_route", "text", func(r *audit.Record) *string { return &r.FinalRoute }),
	field("gate_decision", "text", func(r *audit.Record) *string { return &r.GateDecision }),
	field("execute", "boolean", func(r *audit.Record) *bool { return &r.Execute }),
	field("shadow", "boolean", func(r *audit.Record) *bool { return &r.Shadow }),
	list("hard_blockers", "text[]", func(r *audit.Record) *[]string { return &r.HardBlockers }),
	list("reasons", "text[]", func(r *audit.Record) *[]string { return &r.Reasons }),
	list("finding_codes", "text[]", func(r *audit.Record) *[]string { return &r.FindingCodes }),
	list("evidence", "jsonb", func(r *audit.Record) *[]audit.EvidenceMeta { return &r.Evidence }),
	list("argument_keys", "text[]", func(r *audit.Record) *[]string { return &r.ArgumentKeys }),
	field("arguments_hmac", "text", func(r *audit.Record) *string { return &r.ArgumentsHMAC }),
	field("catalog_revision", "text", func(r *audit.Record) *string { return &r.CatalogRevision }),
	field("policy_revision", "text", func(r *audit.Record) *string { return &r.PolicyRevision }),
	field("token_name", "text", func(r *audit.Record) *string { return &r.TokenName }),
	field("latency_ms", "double precision", func(r *audit.Record) *float64 { return &r.LatencyMS }),
	field("gated_version", "text", func(r *audit.Record) *string { return &r.GatedVersion }),
	field("approval_id", "text", func(r *audit.Record) *string { return &r.ApprovalID }),
	list("bundle_commits", "text[]", func(r *audit.Record) *[]string { return &r.BundleCommits }),
	list("principals", "text[]", func(r *audit.Record) *[]string { return &r.Principals }),
	field("sealed", "text", func(r *audit.Record) *string { return &r.Sealed }),
	field("supersedes", "bigint", func(r *audit.Record) *int64 { return &r.Supersedes }),
	field("chain_id", "text", func(r *audit.Record) *string { return &r.ChainID }),
	field("chain_seq", "bigint", func(r *audit.Record) *int64 { return &r.ChainSeq }),
	field("link_hash", "text", func(r *audit.Record) *string { return &r.LinkHash }),
}

// columnNames and columnList name the columns in table order, for COPY and
// for SQL.
var (
	columnNames = func() []string {
		names := make([]string, len(columns))
		for i, c := range columns {
			names[i] = c.name
		}
		return names
	}()
	columnList = strings.Join(columnNames, ", ")
)

func values(r *audit.Record) []any {
	v := make([]any, len(columns))
	for i, c := range columns {
		v[i] = c.value(r)
	}
	return v
}

func scanTargets(r *audit.Record) []any {
	t := make([]any, len(columns))
	for i, c := range columns {
		t[i] = c.target(r)
	}
	return t
}

// InsertRecords stores new records by COPY inside the caller's
// transaction, so a record can commit or roll back with the caller's own
// rows. A record already stored fails the COPY (the primary key): unlike
// Sink.Write, which must take replays, it stores each decision once. The
// partitions of the records' days must exist; a running Sink keeps them
// up to three days ahead.
func InsertRecords(ctx context.Context, tx pgx.Tx, recs []*audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := copyRecords(ctx, tx, "audit_decisions", recs); err != nil {
		return fmt.Errorf("insert audit records: %w", err)
	}
	return nil
}

func copyRecords(ctx context.Context, tx pgx.Tx, table string, recs []*audit.Record) error {
	rows := pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) { return values(recs[i]), nil })
	_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, columnNames, rows)
	return err
}

// stageTable receives each batch by COPY; the insert from it skips rows
// already stored (COPY itself has no ON CONFLICT). Being a per-connection
// temporary table emptied at commit, made by the first batch that needs it
// on its connection, it costs no catalog churn per batch.
const stageTable = "audit_stage"

var createStage = "CREATE TEMP TABLE IF NOT EXISTS " + stageTable + " (LIKE audit_decisions INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"

var insertFromStage = "INSERT INTO audit_decisions (" + columnList + ") SELECT " + columnList +
	" FROM " + stageTable + " ON CONFLICT (decided_at, decision_id) DO NOTHING"

// fixColumns are what a correction changes: the answer and why, and the
// link, the correction's own (the superseded link goes to
// audit_superseded).
var fixColumns = []string{"final_route", "gate_decision", "execute", "hard_blockers", "reasons", "finding_codes",
	"supersedes", "chain_id", "chain_seq", "link_hash"}

var upsertFix = func() string {
	params := make([]string, len(columns))
	for i := range columns {
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	set := make([]string, len(fixColumns))
	for i, c := range fixColumns {
		set[i] = c + " = EXCLUDED." + c
	}
	return "INSERT INTO audit_decisions (" + columnList + ") VALUES (" + strings.Join(params, ", ") +
		") ON CONFLICT (decided_at, decision_id) DO UPDATE SET " + strings.Join(set, ", ")
}()

const insertSuperseded = `INSERT INTO audit_superseded (chain_id, chain_seq, decided_at, decision_id, record)
	VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`

// applyFixes writes corrections, and keeps each superseded record (as the
// recorder held it: it may never have been stored) for its link. An
// upsert waits for a concurrent transaction that holds the same key, so a
// correction always lands after the record it corrects, whichever commits
// first.
func applyFixes(ctx context.Context, tx pgx.Tx, fixes []audit.Fix) error {
	if len(fixes) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, f := range fixes {
		b.Queue(upsertFix, values(f.Record)...)
		if o := f.Superseded; o != nil && o.ChainID != "" {
			doc, err := json.Marshal(o)
			if err != nil {
				return fmt.Errorf("encode superseded audit record: %w", err)
			}
			b.Queue(insertSuperseded, o.ChainID, o.ChainSeq, o.DecidedAt, o.DecisionID, doc)
		}
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("correct audit records: %w", err)
	}
	return nil
}
