package main

import (
	"flag"
	"time"

	killpg "github.com/gatedhq/gated/internal/kill/postgres"
	"github.com/gatedhq/gated/internal/kill/watch"
	"github.com/gatedhq/gated/internal/server"
)

// killFlags configure the kill switch.
type killFlags struct {
	mode       string
	staleAfter time.Duration
	maxStale   time.Duration
	startFail  string
}

// Defaults of the kill switch's bounds: past DefaultKillStaleAfter without
// confirming its list a process warns and decides from the last list it
// read; past DefaultKillMaxStale it refuses every call. Minutes, not
// seconds: a database blip must not stop every agent.
const (
	DefaultKillStaleAfter = 10 * time.Second
	DefaultKillMaxStale   = 10 * time.Minute
)

func (k *killFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.mode, "kill-switch", "auto", "auto: the kill switch is on with --database-url (gated serve: and --tokens); on: with --database-url, tokens or not; off: never (a database outage then never refuses calls for it)")
	fs.DurationVar(&k.staleAfter, "kill-stale-after", DefaultKillStaleAfter, "once the kill list could not be confirmed for this long, warn every minute and decide from the last list read (kept beside the spool, so a restart finds it)")
	fs.DurationVar(&k.maxStale, "kill-max-stale", DefaultKillMaxStale, "refuse every call (kill_switch_unavailable) once the kill list could not be confirmed for this long")
	fs.StringVar(&k.startFail, "kill-start-fail", "closed", "starting with neither the database nor a saved kill list: closed refuses every call until a list is read; open decides as if no kill were set, for at most --kill-max-stale")
}

// check validates the flags; on reports whether the kill switch will be
// on, given whether gated has a database and tokens (a surface without
// tokens passes true: its kills come from the database alone).
func (k *killFlags) check(database, tokens bool) (on bool, err error) {
	switch k.mode {
	case "auto":
		on = database && tokens
	case "on":
		if !database {
			return false, usageError("--kill-switch on needs --database-url: the kill list lives in PostgreSQL")
		}
		on = true
	case "off":
	default:
		return false, usageError("--kill-switch must be auto, on or off, not %q", k.mode)
	}
	// Below two reloads a quiet, healthy list would go stale between them.
	if minStale := 2 * killpg.DefaultResync; k.staleAfter < minStale {
		return false, usageError("--kill-stale-after must be at least %v (the list is reloaded every %v), got %v", minStale, killpg.DefaultResync, k.staleAfter)
	}
	if k.maxStale < k.staleAfter {
		return false, usageError("--kill-max-stale (%v) must be at least --kill-stale-after (%v); equal to it, gated never decides from an unconfirmed list", k.maxStale, k.staleAfter)
	}
	if k.startFail != "closed" && k.startFail != "open" {
		return false, usageError("--kill-start-fail must be closed or open, not %q", k.startFail)
	}
	return on, nil
}

// config is the kill switch's configuration by the flags, its list saved
// in spoolDir.
func (k *killFlags) config(spoolDir string) watch.Config {
	return watch.Config{StaleAfter: k.staleAfter, MaxStale: k.maxStale, StartOpen: k.startFail == "open", Dir: spoolDir}
}

// serverKills is ks as server.Deps holds it: a nil interface when the kill
// switch is off, not an interface holding a nil pointer.
func serverKills(ks *watch.Switch) server.Kills {
	if ks == nil {
		return nil
	}
	return ks
}
