package policy

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// The budget of one evaluation. Any part running out stops it and refuses
// the call (policy_budget_exceeded). A decision normally takes well under a
// millisecond, a few hundred steps and some kilobytes; the margins absorb GC
// pauses, CPU contention and large events.
const (
	// DefaultEvalBudget is the time budget.
	DefaultEvalBudget = 250 * time.Millisecond
	// DefaultEvalSteps is the step budget: OPA asks whether to go on before
	// every expression and inside the builtins that loop (numbers.range,
	// concat, replace, net.cidr_merge…), and each time counts as a step. It
	// bounds the work of an evaluation whatever the machine's speed, and so
	// the size of anything a comprehension or range can build.
	DefaultEvalSteps = 1_000_000
	// DefaultEvalMemory is the memory budget: what the process allocates
	// while the evaluation runs, sampled every memorySampleEvery.
	DefaultEvalMemory = 64 << 20
)

const memorySampleEvery = time.Millisecond

// stopReason says which part of the budget stopped an evaluation.
type stopReason int32

const (
	running stopReason = iota
	stopSteps
	stopTime
	stopMemory
	stopCaller // the caller's context ended: not the policy's fault
)

// evalBudget is the topdown.Cancel OPA polls during one evaluation. Every
// poll is a step; stop makes the next poll end the evaluation.
type evalBudget struct {
	steps    atomic.Int64
	maxSteps int64
	reason   atomic.Int32
}

// Cancel implements topdown.Cancel.
func (b *evalBudget) Cancel() { b.stop(stopCaller) }

// Cancelled implements topdown.Cancel: OPA calls it before each expression
// and in the loops of its builtins.
func (b *evalBudget) Cancelled() bool {
	if b.reason.Load() != int32(running) {
		return true
	}
	if b.steps.Add(1) > b.maxSteps {
		b.stop(stopSteps)
		return true
	}
	return false
}

// stop records the first reason only.
func (b *evalBudget) stop(r stopReason) { b.reason.CompareAndSwap(int32(running), int32(r)) }

func (b *evalBudget) stopped() stopReason { return stopReason(b.reason.Load()) }

// errRequestEnded: the caller's context ended first. That is the request's
// deadline or a client gone, not the policy's budget.
var errRequestEnded = errors.New("the request ended before the policy was evaluated")

// budgetError is an evaluation stopped (or refused) by its budget.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

// overrunning counts evaluations that did not stop after their budget ran
// out and were abandoned, still running (OPA cannot be interrupted inside
// some single operations, such as comparing two huge values). While one is,
// no evaluation in the process starts, each refusing instead: stuck
// evaluations cannot pile up, and the operator sees policy_budget_exceeded
// rather than a process slowly running out of CPU.
var overrunning atomic.Int64

// run evaluates the prepared query under the budget. OPA runs on an
// evaluation goroutine (runEval) so that this one can watch the clock and
// the memory and, should OPA not stop within a grace period once told to,
// return anyway.
func (s *Set) run(ctx context.Context, input ast.Value) (rego.ResultSet, error) {
	if n := overrunning.Load(); n > 0 {
		return nil, &budgetError{fmt.Sprintf("%d earlier policy evaluation(s) overran their budget and are still running; evaluations refuse until they stop", n)}
	}
	if ctx.Err() != nil {
		return nil, errRequestEnded
	}
	b := &evalBudget{maxSteps: s.steps}
	evalCtx, cancel := context.WithTimeout(ctx, s.budget)
	defer cancel()
	type result struct {
		rs  rego.ResultSet
		err error
	}
	done := make(chan result, 1)
	allocStart := allocatedBytes()
	runEval(func() {
		var r result
		defer func() {
			// This goroutine is not under Evaluate's recover: a panic
			// here would end the process.
			if p := recover(); p != nil {
				r.err = fmt.Errorf("panic: %v", p)
			}
			if s.afterEval != nil {
				s.afterEval(b.steps.Load())
			}
			done <- r
		}()
		if s.cover != nil {
			r.rs, r.err = s.query.Eval(evalCtx, rego.EvalParsedInput(input), rego.EvalExternalCancel(b), rego.EvalQueryTracer(s.cover))
		} else {
			// Without coverage, no tracer: OPA then skips building trace events.
			r.rs, r.err = s.query.Eval(evalCtx, rego.EvalParsedInput(input), rego.EvalExternalCancel(b))
		}
	})
	tick := time.NewTicker(memorySampleEvery)
	defer tick.Stop()
	expired := evalCtx.Done()
	var grace <-chan time.Time
	for {
		select {
		case r := <-done:
			return r.rs, s.budgetFailure(b, r.err)
		case <-expired:
			expired = nil
			if ctx.Err() != nil {
				b.stop(stopCaller)
			} else {
				b.stop(stopTime)
			}
			grace = time.After(s.budget)
		case <-tick.C:
			if allocatedBytes()-allocStart > s.memory {
				b.stop(stopMemory)
			}
		case <-grace:
			overrunning.Add(1)
			go func() {
				<-done
				overrunning.Add(-1)
			}()
			return nil, &budgetError{fmt.Sprintf("policy evaluation did not stop within %s of being told to (%s); it is abandoned, and evaluations refuse until it stops", s.budget, s.budgetMessage(b.stopped()))}
		}
	}
}

// budgetFailure names the budget that stopped the evaluation, if one did;
// otherwise it returns err (nil on success: a budget that ran out after OPA
// had finished changes nothing).
func (s *Set) budgetFailure(b *evalBudget, err error) error {
	if err == nil {
		return nil
	}
	switch r := b.stopped(); r {
	case running:
		return err
	case stopCaller:
		return errRequestEnded
	default:
		return &budgetError{"policy evaluation stopped: " + s.budgetMessage(r)}
	}
}

func (s *Set) budgetMessage(r stopReason) string {
	switch r {
	case stopSteps:
		return fmt.Sprintf("it exceeded its budget of %d steps", s.steps)
	case stopTime:
		return fmt.Sprintf("it exceeded its %s time budget", s.budget)
	case stopMemory:
		return fmt.Sprintf("the process allocated more than its memory budget (%s) while it ran", byteSize(s.memory))
	case stopCaller:
		return "the request ended"
	}
	return "it was told to stop"
}

func byteSize(n uint64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// allocatedBytes is the process's cumulative heap allocation. It is
// process-wide, so a budget can run out early while other requests
// allocate a lot: that refuses (fail closed) and never lets anything
// through. Reading it costs about as much as a map lookup, not a
// stop-the-world (runtime.ReadMemStats would).
func allocatedBytes() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64() // a stable metric; a wrong kind panics, which Evaluate turns into a refusal
}

// evalHandoff gives an evaluation to an idle evaluation goroutine. OPA's
// evaluation is deeply recursive: on a fresh goroutine it grew the stack
// from its first 8 KiB several times per decision, and the copying took
// ~6 % of the CPU of a loaded server. A goroutine kept for the next
// evaluation keeps its grown stack (until the collector shrinks it).
var evalHandoff = make(chan func())

// evalWorkerIdle is how long an evaluation goroutine waits for the next
// evaluation before it exits.
const evalWorkerIdle = 10 * time.Second

// runEval runs f on an idle evaluation goroutine, or on a new one when
// none is idle (one stuck in an overrunning evaluation is not idle), so
// evaluations never wait for one another.
func runEval(f func()) {
	select {
	case evalHandoff <- f:
	default:
		go evalWorker(f)
	}
}

func evalWorker(f func()) {
	idle := time.NewTimer(evalWorkerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(evalWorkerIdle)
		select {
		case f = <-evalHandoff:
		case <-idle.C:
			return
		}
	}
}
