package postgres

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
)

// The column table and Record agree: one column per field, in field order,
// named by the field's JSON name and reading and writing that very field.
// A field added to Record without its column (or the reverse) fails here.
func TestColumnsMatchRecord(t *testing.T) {
	t.Parallel()
	rt := reflect.TypeFor[audit.Record]()
	var jsonNames []string
	for f := range rt.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		jsonNames = append(jsonNames, name)
	}
	if !slices.Equal(jsonNames, columnNames) {
		t.Fatalf("Record's JSON names\n %v\nthe column table\n %v", jsonNames, columnNames)
	}
	rec := new(audit.Record)
	rv := reflect.ValueOf(rec).Elem()
	for i, c := range columns {
		field := rv.Field(i)
		if got := reflect.ValueOf(c.target(rec)); got.Pointer() != field.Addr().Pointer() || got.Type().Elem() != field.Type() {
			t.Errorf("column %s scans into another field than Record.%s", c.name, rt.Field(i).Name)
		}
		if got := reflect.TypeOf(c.value(rec)); got != field.Type() {
			t.Errorf("column %s writes a %v, Record.%s is a %v", c.name, got, rt.Field(i).Name, field.Type())
		}
	}
}

// The column table and the migrated schema agree on every column's name and
// type: a column added to one but not the other fails here.
func TestColumnsMatchSchema(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// format_type spells a type as SQL does (text[], where
	// information_schema.columns says ARRAY).
	rows, err := c.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'audit_decisions'::regclass AND attnum > 0 AND NOT attisdropped`)
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]string{}
	var name, typ string
	if _, err := pgx.ForEachRow(rows, []any{&name, &typ}, func() error {
		schema[name] = typ
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	table := map[string]string{}
	for _, c := range columns {
		table[c.name] = c.sqlType
	}
	for n, typ := range schema {
		if table[n] != typ {
			t.Errorf("audit_decisions.%s is %s; the column table has %q", n, typ, table[n])
		}
	}
	for n := range table {
		if _, ok := schema[n]; !ok {
			t.Errorf("column %s is in the table but not in the migrated schema: a migration is missing", n)
		}
	}
}

// InsertRecords stores records inside the caller's transaction: they roll
// back with it, and commit with it, to read back as written.
func TestInsertRecordsInCallersTransaction(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	if err := openSink(t, u, 0).Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rec := audittest.Record(1, now)
	rec.Evidence = []audit.EvidenceMeta{{SourceID: "doc:7", Kind: "approval", TrustTier: "verified", RedactionStatus: "redacted", Freshness: "fresh"}}

	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := InsertRecords(ctx, tx, []*audit.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 0 {
		t.Fatalf("%d rows after the caller rolled back, want 0", n)
	}

	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error { return InsertRecords(ctx, tx, []*audit.Record{rec}) })
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(pgtest.DB(t, u))
	defer st.Close()
	got, err := st.Get(ctx, rec.DecisionID)
	if err != nil {
		t.Fatal(err)
	}
	got.DecidedAt = got.DecidedAt.UTC()
	if !reflect.DeepEqual(got, rec) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, rec)
	}
}
