package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/metrics"
	pgdb "github.com/gatedhq/gated/internal/postgres"
)

// auditFlags configure where decisions are recorded.
type auditFlags struct {
	databaseURL string
	file        string
	spoolDir    string
	durability  string
	fail        string
	retention   time.Duration
	hmacKey     string
	sealTo      string
	noMigrate   bool
	signingKey  string
	checkpoint  time.Duration
}

func (a *auditFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.databaseURL, "database-url", "", "PostgreSQL URL of the audit store; without it records go to --audit-file")
	fs.StringVar(&a.file, "audit-file", "gated-audit.jsonl", "JSON-lines audit file used when there is no database")
	fs.StringVar(&a.spoolDir, "spool-dir", "gated-spool", "local spool for records PostgreSQL cannot take right now (each process uses a subdirectory named after its host)")
	fs.StringVar(&a.durability, "audit-durability", "async", "async (answer, then record) or sync (answer once the record is durable)")
	fs.StringVar(&a.fail, "audit-fail", "closed", "when a record can be neither stored nor spooled: closed refuses the call, open lets it stand")
	fs.DurationVar(&a.retention, "audit-retention", 90*24*time.Hour, "drop daily partitions older than this")
	fs.StringVar(&a.hmacKey, "audit-hmac-key", "", "key of the HMAC-SHA256 argument fingerprints (at least 32 bytes; required with --database-url)")
	fs.StringVar(&a.sealTo, "audit-seal-to", "", "opt in to sealed arguments: an age recipient (age1…) or a file of them; each record then keeps the call's event, workspace and client address encrypted to it, for gated replay --seal-identity")
	fs.BoolVar(&a.noMigrate, "no-migrate", false, "do not apply pending migrations (by default they are applied at start, or once the database is reachable)")
	fs.StringVar(&a.signingKey, "audit-signing-key", "", "Ed25519 private key (PEM, PKCS #8) that signs the audit chain's checkpoints: a file, or the PEM itself (a secret in GATED_AUDIT_SIGNING_KEY); without it records are chained but unsigned")
	fs.DurationVar(&a.checkpoint, "audit-checkpoint-interval", audit.DefaultCheckpointInterval, "how often the audit chain's head is signed while records arrive (and once as gated stops)")
}

// signer loads --audit-signing-key, or returns nil without one.
func (a *auditFlags) signer() (*chain.Signer, error) {
	if a.signingKey == "" {
		return nil, nil
	}
	data := []byte(a.signingKey)
	if !strings.HasPrefix(strings.TrimSpace(a.signingKey), "-----BEGIN") {
		var err error
		if data, err = os.ReadFile(a.signingKey); err != nil {
			return nil, usageError("--audit-signing-key: %v", err)
		}
	}
	key, err := bundle.ParsePrivateKey(data)
	if err != nil {
		return nil, usageError("--audit-signing-key: %v", err)
	}
	return chain.NewSigner(key), nil
}

const minHMACKey = 32

// openDatabase opens the process's one pool to --database-url, or returns
// nil without one. It does not wait for the database: the pool connects on
// first use.
func openDatabase(ctx context.Context, a *auditFlags) (*pgdb.DB, error) {
	if a.databaseURL == "" {
		return nil, nil
	}
	return pgdb.Open(ctx, a.databaseURL)
}

// openAudit opens the recorder (and, with a database, the store that reads
// records back). Neither waits for the database: the recorder applies the
// migrations (unless told not to) once it can, and the store connects on
// first use.
func openAudit(ctx context.Context, a *auditFlags, db *pgdb.DB, log *zap.Logger, m *metrics.Metrics) (audit.Recorder, *audit.Redactor, audit.Store, error) {
	durability, err := audit.ParseDurability(a.durability)
	if err != nil {
		return nil, nil, nil, usageError("--audit-durability: %v", err)
	}
	fail, err := audit.ParseFailMode(a.fail)
	if err != nil {
		return nil, nil, nil, usageError("--audit-fail: %v", err)
	}
	key := []byte(a.hmacKey)
	switch {
	case len(key) >= minHMACKey:
	case len(key) > 0:
		return nil, nil, nil, usageError("--audit-hmac-key must be at least %d bytes", minHMACKey)
	case a.databaseURL != "":
		return nil, nil, nil, usageError("--audit-hmac-key (GATED_AUDIT_HMAC_KEY) is required with --database-url")
	default:
		if key, err = audit.GenerateKey(); err != nil {
			return nil, nil, nil, err
		}
		log.Warn("no --audit-hmac-key: using a random key for this run, so argument fingerprints will not match across restarts")
	}
	red := audit.NewRedactor(key)
	if a.sealTo != "" {
		sealer, err := readSealer(a.sealTo)
		if err != nil {
			return nil, nil, nil, err
		}
		red = red.SealingTo(sealer)
		log.Info("audit records keep the call's event sealed to the --audit-seal-to recipients")
	}
	// The host name is the pod's name in Kubernetes: each replica spools in
	// a subdirectory of --spool-dir of its own, and one that restarts under
	// the same name picks up what it left there.
	owner, _ := os.Hostname()
	signer, err := a.signer()
	if err != nil {
		return nil, nil, nil, err
	}
	if signer == nil {
		log.Warn("no --audit-signing-key: audit records are chained but no checkpoint is signed, so the trail is only as trustworthy as its store")
	}
	sink, err := openSink(a, db, durability, signer, log)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open audit: %w", err)
	}
	rec, err := audit.NewRecorder(ctx, sink, audit.Config{
		SpoolDir: a.spoolDir, SpoolOwner: owner, Durability: durability,
		Fail: fail, Logger: log.Named("audit"), Metrics: m,
		Signer: signer, CheckpointInterval: a.checkpoint,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open audit: %w", err)
	}
	var store audit.Store
	if db != nil {
		store = postgres.NewStore(db)
	}
	return rec, red, store, nil
}

// readSealer reads --audit-seal-to: one age recipient, or a file of them.
func readSealer(v string) (*audit.Sealer, error) {
	text := v
	if !strings.HasPrefix(v, "age1") {
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, usageError("--audit-seal-to is neither an age recipient (age1…) nor a readable file: %v", err)
		}
		text = string(b)
	}
	s, err := audit.ParseSealer(text)
	if err != nil {
		return nil, usageError("--audit-seal-to: %v", err)
	}
	return s, nil
}

// openSink opens PostgreSQL when there is a database, else the JSON-lines
// file. Migrations run inside the recorder, retried in the background
// while the database is away: gated starts and answers from the spool.
func openSink(a *auditFlags, db *pgdb.DB, durability audit.Durability, signer *chain.Signer, log *zap.Logger) (audit.Sink, error) {
	if db == nil {
		return file.Open(a.file, durability == audit.Sync)
	}
	return postgres.New(db, postgres.Config{
		Migrate: !a.noMigrate, Retention: a.retention, Signer: signer, Logger: log.Named("audit"),
	}), nil
}

// runMigrate is `gated migrate up|down|status --database-url URL`.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("usage: gated migrate up|down|status --database-url URL")
	}
	direction := args[0]
	switch direction {
	case "up", "down", "status":
	default:
		return usageError("usage: gated migrate up|down|status --database-url URL")
	}
	fs := newFlagSet("migrate", stderr)
	url := fs.String("database-url", "", "PostgreSQL URL of the audit store")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if *url == "" {
		return usageError("--database-url (GATED_DATABASE_URL) is required")
	}
	return pgdb.Migrate(ctx, *url, direction, stdout)
}
