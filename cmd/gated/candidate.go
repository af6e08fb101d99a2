package main

import (
	"context"
	"flag"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/candidate"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/metrics"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/sources"
)

// candidateFlags name a candidate policy to run beside the live one.
type candidateFlags struct {
	policy  listFlag
	catalog listFlag
	queue   int
}

func (f *candidateFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.policy, "candidate", "the candidate policy: a policy directory (repeatable) or one bundle manifest, decided beside the live policy for every decision without changing its route (docs/policy.md#candidate)")
	fs.Var(&f.catalog, "candidate-catalog", "the candidate's catalog, as --catalog takes it; without it the candidate loads the live --catalog")
	fs.IntVar(&f.queue, "candidate-queue", candidate.DefaultQueue, "answered decisions waiting for the candidate; past it the candidate skips them (and counts)")
}

func (f *candidateFlags) on() bool { return len(f.policy) > 0 || len(f.catalog) > 0 }

func (f *candidateFlags) check() error {
	if f.queue <= 0 {
		return usageError("--candidate-queue must be positive")
	}
	return nil
}

// candidateRun is a running candidate and what it reads.
type candidateRun struct {
	*candidate.Candidate
	sources *sources.Sources
	store   audit.CandidateStore // nil without a database
}

// loadCandidateSources loads the candidate's sources, nil without a
// candidate: the live ones where the flags name none (loaded again, so
// that they reload like the live ones).
func loadCandidateSources(ctx context.Context, c *serveConfig, log *zap.Logger) (*sources.Sources, error) {
	f := c.candidate
	if !f.on() {
		return nil, nil
	}
	sf := c.sources
	if len(f.policy) > 0 {
		sf.policyDirs = f.policy
	}
	if len(f.catalog) > 0 {
		sf.catalogDirs = f.catalog
	}
	log = log.Named("candidate")
	src, err := loadSources(&sf, log, nil)
	if err != nil {
		return nil, err
	}
	src.Watch(ctx, log)
	return src, nil
}

// startCandidate starts the candidate on src. Its engine counts rate
// limits of its own, in this process, and reads the live kill switch;
// its rows go to the database, or to the file beside the audit file.
// stop ends it once the live engine no longer decides.
func startCandidate(ctx context.Context, c *serveConfig, src *sources.Sources, db *pgdb.DB, red *audit.Redactor, board *kill.Board, m *metrics.Metrics, log *zap.Logger) (run *candidateRun, stop func(), err error) {
	opts := src.Opts
	if board != nil {
		opts = append(opts, gate.WithKillSwitch(board))
	}
	run = &candidateRun{sources: src}
	var w audit.CandidateWriter
	closeWriter := func() {}
	if db != nil {
		run.store = postgres.NewCandidates(db)
		w = run.store
	} else {
		fw, err := file.OpenCandidates(file.CandidatesPath(c.audit.file))
		if err != nil {
			return nil, nil, err
		}
		w, closeWriter = fw, func() { _ = fw.Close() }
	}
	log = log.Named("candidate")
	run.Candidate = candidate.New(candidate.Config{
		Engine: gate.New(opts...), Revisions: src.Revisions, Writer: w, Redactor: red, Queue: c.candidate.queue, Metrics: m, Log: log,
	})
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go run.Run(cctx)
	cat, pol := src.Revisions()
	log.Info("candidate running beside the live policy", zap.String("catalog_revision", cat), zap.String("policy_revision", pol))
	return run, func() { cancel(); run.Wait(); closeWriter() }, nil
}

// candidate is the running candidate for the server, nil without one.
func (r *candidateRun) candidate() *candidate.Candidate {
	if r == nil {
		return nil
	}
	return r.Candidate
}

// storeOrNil is where the candidate's rows are read back, nil without a
// candidate or a database.
func (r *candidateRun) storeOrNil() audit.CandidateStore {
	if r == nil {
		return nil
	}
	return r.store
}
