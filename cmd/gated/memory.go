package main

import (
	"runtime/debug"
	"strconv"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"go.uber.org/zap"
)

// defaultGOGC is the garbage collector's target when GOGC is not set. A
// decision allocates a few dozen kilobytes that die with the request, so
// at Go's default of 100 the collector ran on ~12 % of the CPU under load;
// at 400 gated serves about a quarter more decisions per core for some
// 30 MB more heap (docs/performance.md, "Memory and GC"). The memory limit
// below keeps the larger target from outgrowing a container.
const defaultGOGC = 400

// memLimitRatio is the share of the container's memory (its cgroup limit,
// or the machine's when there is none) that Go's soft memory limit is set
// to: past it the collector runs harder instead of the pod being killed.
const memLimitRatio = 0.9

// tuneMemory sets the collector's target and the soft memory limit unless
// the operator set GOGC or GOMEMLIMIT (or AUTOMEMLIMIT=off) themselves, and
// logs what it chose.
func tuneMemory(getenv func(string) string, log *zap.Logger) {
	gogc := getenv("GOGC")
	if gogc == "" {
		debug.SetGCPercent(defaultGOGC)
		gogc = strconv.Itoa(defaultGOGC)
	}
	limit, err := memlimit.Set(
		memlimit.WithRatio(memLimitRatio),
		memlimit.WithProvider(memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.FromSystem)),
	)
	if err != nil {
		log.Warn("the Go memory limit could not be set from the container; running without one", zap.Error(err))
	}
	log.Info("memory tuning", zap.String("gogc", gogc), zap.Int64("memory_limit_bytes", limit))
}
