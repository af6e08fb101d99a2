package server

import (
	"net/http"

	"github.com/gatedhq/gated/internal/adapter/hook"
)

// hookDeny answers a hook call gated could not decide. The status is always
// 200: Claude Code runs the tool on any non-2xx answer or a timeout, so a
// failure must say deny in a 2xx body to block. The body is the runtime's
// own deny.
func hookDeny(rt hook.Runtime) failWriter {
	return func(w http.ResponseWriter, status int, msg string) {
		writeJSON(w, http.StatusOK, rt.Fail(msg, "").Body)
	}
}

// hookBinds is what an approval of a hook call binds besides the event.
type hookBinds struct {
	Workspace string `json:"workspace"`
}

// handleHook decides one pre-tool hook call of runtime rt.
func handleHook(d *Deps, rt hook.Runtime) http.HandlerFunc {
	deny := hookDeny(rt)
	return func(w http.ResponseWriter, r *http.Request) {
		doc, berr := decodeEvent(w, r, d.HookMaxBodyBytes, d.MaxDepth)
		if berr != nil {
			deny(w, berr.status, berr.msg)
			return
		}
		in, err := rt.Parse(doc)
		if err != nil {
			deny(w, http.StatusBadRequest, err.Error())
			return
		}
		pick := d.Engine.CallCategory(in.Tool, in.Input, in.Cwd)
		opts := hook.Options{AuthorizationState: d.HookAuthorizationState, Category: pick.Category}
		c := callerOf(d, r)
		if rt.CanAsk(in.Event) {
			// The person at the keyboard answers the ask where it is asked.
			c.req.NoApproval = true
		} else {
			// The runtime denies; a person approves in gated, and the agent's
			// retry is the identical call, with no ref to carry. The workspace
			// decides what a command's relative paths name, so the approval
			// binds it too.
			c.req.RetryByDigest, c.req.Binds = true, hookBinds{Workspace: in.Cwd}
		}
		c.req.Workspace, c.req.Pick = in.Cwd, &pick
		dec := c.decide(r.Context(), d.Engine, rt.Event(in, opts).Doc())
		writeJSON(w, http.StatusOK, rt.Answer(dec, in.Event).Body)
	}
}
