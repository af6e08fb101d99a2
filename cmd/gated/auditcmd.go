package main

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/bundle"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/strictjson"
)

const auditUse = `usage: gated audit verify (--database-url URL | --audit-file FILE) [--public-key PEM]... [--require-signed [--signed-grace D]]
       gated audit receipt (--database-url URL | --audit-file FILE) DECISION_ID
       gated audit verify-receipt --public-key PEM [--public-key PEM]... [RECEIPT.json]
       gated audit public-key --audit-signing-key KEY`

// runAudit is `gated audit`: verify the trail's chains, export one
// decision's receipt, check a receipt offline, print the signing key's
// public half.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError(auditUse)
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet("audit "+sub, stderr)
	var keys listFlag
	switch sub {
	case "verify", "receipt":
		var st trailFlags
		st.register(fs)
		var req signedFlags
		if sub == "verify" {
			fs.Var(&keys, "public-key", "PEM Ed25519 public key the checkpoints may be signed with (repeat for rotated keys); without one, checkpoints are not checked")
			fs.BoolVar(&req.on, "require-signed", false, "fail when a chain holds records no signed checkpoint vouches for, beyond --signed-grace of the newest record (needs --public-key)")
			fs.DurationVar(&req.grace, "signed-grace", defaultSignedGrace, "with --require-signed: how long before the newest record an unsigned record may have been decided (the writers' heads the next checkpoint signs)")
		}
		if err := parseFlags(fs, args, getenv); err != nil {
			return err
		}
		if sub == "verify" {
			if fs.NArg() != 0 {
				return usageError(auditUse)
			}
			if req.on && len(keys) == 0 {
				return usageError("--require-signed needs --public-key: a signature not checked proves nothing")
			}
			pubs, err := publicKeys(keys)
			if err != nil {
				return err
			}
			return st.verify(ctx, pubs, req, stdout)
		}
		if fs.NArg() != 1 {
			return usageError(auditUse)
		}
		return st.receipt(ctx, fs.Arg(0), stdout)
	case "verify-receipt":
		fs.Var(&keys, "public-key", "PEM Ed25519 public key the receipt's checkpoint must be signed with (repeat for rotated keys)")
		if err := parseFlags(fs, args, getenv); err != nil {
			return err
		}
		if len(keys) == 0 || fs.NArg() > 1 {
			return usageError(auditUse)
		}
		pubs, err := publicKeys(keys)
		if err != nil {
			return err
		}
		return verifyReceipt(fs.Arg(0), stdin, pubs, stdout)
	case "public-key":
		var af auditFlags
		fs.StringVar(&af.signingKey, "audit-signing-key", "", "the Ed25519 private key (PEM, PKCS #8) gated signs checkpoints with: a file, or the PEM itself")
		if err := parseFlags(fs, args, getenv); err != nil {
			return err
		}
		s, err := af.signer()
		if err != nil || s == nil {
			return errors.Join(err, usageError(auditUse))
		}
		der, err := x509.MarshalPKIXPublicKey(s.Public())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s# key id %s\n", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), s.KeyID())
		return nil
	}
	return usageError(auditUse)
}

// trailFlags say which store to read: the database, else the file.
type trailFlags struct {
	databaseURL, file string
}

func (t *trailFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.databaseURL, "database-url", "", "PostgreSQL URL of the audit store")
	fs.StringVar(&t.file, "audit-file", "gated-audit.jsonl", "JSON-lines audit file, when there is no --database-url")
}

func (t *trailFlags) open(ctx context.Context) (*pgdb.DB, error) {
	if t.databaseURL == "" {
		return nil, nil
	}
	db, err := pgdb.Open(ctx, t.databaseURL)
	if err != nil {
		return nil, fmt.Errorf("open the audit database: %w", err)
	}
	return db, nil
}

// signedFlags are verify's --require-signed and its grace.
type signedFlags struct {
	on    bool
	grace time.Duration
}

// defaultSignedGrace is five of the default --audit-checkpoint-interval:
// a running writer's head is signed within one.
const defaultSignedGrace = 5 * time.Minute

func (t *trailFlags) verify(ctx context.Context, keys chain.Keys, req signedFlags, stdout io.Writer) error {
	db, err := t.open(ctx)
	if err != nil {
		return err
	}
	var tr *audit.Trail
	if db != nil {
		defer db.Close()
		tr, err = postgres.ReadTrail(ctx, db)
	} else {
		tr, err = file.ReadTrail(t.file)
	}
	if err != nil {
		return err
	}
	v := tr.Verify(keys)
	for _, c := range v.Chains {
		fmt.Fprintln(stdout, describe(c))
	}
	if len(v.Chains) == 0 {
		fmt.Fprintln(stdout, "no chained records")
	}
	if v.Predating > 0 {
		fmt.Fprintf(stdout, "%d record(s) predate the chain: stored before gated linked its records, not verified\n", v.Predating)
	}
	if n := len(v.Unlinked); n > 0 {
		fmt.Fprintf(stdout, "inserted: %d record(s) carry no chain link although decided after the chain began (inserted, or an approval's record whose link was lost): %s\n",
			n, strings.Join(v.Unlinked[:min(n, 10)], ", "))
	}
	if n := len(v.Duplicated); n > 0 {
		fmt.Fprintf(stdout, "duplicated: %d decision(s) stored more than once other than by a correction (a reader keeping one record per decision could be shown the other): %s\n",
			n, strings.Join(v.Duplicated[:min(n, 10)], ", "))
	}
	ok := v.OK()
	if req.on {
		for _, u := range v.UnsignedBeyond(req.grace) {
			ok = false
			fmt.Fprintf(stdout, "unsigned: chain %s holds %d record(s) no signed checkpoint vouches for, the oldest decided at %s, more than %s before the newest record\n",
				u.Chain, u.Records, u.Oldest.Format(time.RFC3339), req.grace)
		}
	}
	if !ok {
		return exitError{code: 1}
	}
	return nil
}

// describe is one chain's line of the verify report.
func describe(c chain.Report) string {
	head := fmt.Sprintf("chain %s: ", c.Chain)
	if c.Problem != nil {
		return head + "BROKEN: " + c.Problem.Error()
	}
	s := fmt.Sprintf("%d record(s), seq %d–%d hold", c.Records, c.From, c.Through)
	if c.From > 1 {
		s += fmt.Sprintf(" (seq 1–%d purged by retention)", c.From-1)
	}
	if c.Signed == 0 {
		return head + s + "; unsigned: no signed checkpoint vouches for them, so they are only as trustworthy as the store"
	}
	s += fmt.Sprintf(" up to the checkpoint signed at %s by key %s (seq %d)", c.SignedAt.Format(time.RFC3339), c.KeyID, c.Signed)
	if c.Through > c.Signed {
		s += fmt.Sprintf("; seq %d–%d are chained but not signed yet", c.Signed+1, c.Through)
	}
	if c.Unchecked {
		s += "; signatures not checked (no --public-key)"
	}
	return head + s
}

func (t *trailFlags) receipt(ctx context.Context, id string, stdout io.Writer) error {
	db, err := t.open(ctx)
	if err != nil {
		return err
	}
	var rc *audit.Receipt
	if db != nil {
		defer db.Close()
		rc, err = postgres.Receipt(ctx, db, id)
	} else {
		rc, err = file.Receipt(t.file, id)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rc)
}

// maxReceipt bounds a receipt read: a record and a hash per link up to a
// checkpoint fit far below it.
const maxReceipt = 64 << 20

func verifyReceipt(path string, stdin io.Reader, keys chain.Keys, stdout io.Writer) error {
	in := stdin
	if path != "" && path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return usageError("receipt: %v", err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, maxReceipt+1))
	if err != nil {
		return fmt.Errorf("read the receipt: %w", err)
	}
	if len(data) > maxReceipt {
		return fmt.Errorf("the receipt is larger than %d bytes", maxReceipt)
	}
	var rc audit.Receipt
	if err := strictjson.Unmarshal(data, &rc); err != nil {
		return fmt.Errorf("the receipt is not JSON gated wrote: %w", err)
	}
	if err := audit.VerifyReceipt(&rc, keys); err != nil {
		return exitError{code: 1, msg: "the receipt does not hold: " + err.Error()}
	}
	fmt.Fprintf(stdout, "the receipt holds: decision %s (%s) is link %d of chain %s, under the checkpoint signed at %s by key %s\n",
		rc.Record.DecisionID, rc.Record.FinalRoute, rc.Record.ChainSeq, rc.Record.ChainID,
		rc.Checkpoint.At.Format(time.RFC3339), rc.Checkpoint.KeyID)
	return nil
}

// publicKeys reads the PEM public keys named by --public-key.
func publicKeys(paths []string) (chain.Keys, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	pubs := make([]ed25519.PublicKey, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, usageError("--public-key: %v", err)
		}
		pub, err := bundle.ParsePublicKey(data)
		if err != nil {
			return nil, usageError("--public-key %s: %v", p, err)
		}
		pubs = append(pubs, pub)
	}
	return chain.NewKeys(pubs...), nil
}
