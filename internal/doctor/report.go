package doctor

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for a person: one line per check, its
// verdict first.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gated doctor %s: is %s asking gated before every tool call?\n", r.Runtime, r.Name)
	if len(r.Read) > 0 {
		fmt.Fprintf(&b, "read %s\n", strings.Join(r.Read, ", "))
	}
	line := func(c Check) {
		fmt.Fprintf(&b, "  %-10s  %-12s  %s\n", c.Status, c.Name, c.Detail)
	}
	for _, c := range r.Checks {
		line(c)
	}
	for _, h := range r.Hooks {
		what := h.Command
		switch h.Type {
		case "http":
			what = "POST " + h.URL
		case "plugin":
			what = h.Command + ", posting to " + h.URL
		}
		fmt.Fprintf(&b, "\n%s hook in %s", h.Type, h.Source)
		if k := strings.TrimPrefix(h.Key, h.Source+":"); k != "" {
			fmt.Fprintf(&b, " (%s)", k)
		}
		fmt.Fprintf(&b, ":\n    %s\n", what)
		for _, c := range h.Checks {
			line(c)
		}
	}
	unverified := 0
	for _, c := range r.all() {
		if c.Status == Unverified {
			unverified++
		}
	}
	b.WriteByte('\n')
	switch {
	case r.Problems > 0 && r.Problems == r.blockedOwn():
		fmt.Fprintf(&b, "%s is protected, but every tool call it makes is blocked: the hook cannot get an answer (see the canary line above). Start gated, or fix what that line says.\n", r.Name)
	case r.Problems == 1:
		fmt.Fprintf(&b, "1 problem: %s is not protected by gated as configured.\n", r.Name)
	case r.Problems > 1:
		fmt.Fprintf(&b, "%d problems: %s is not protected by gated as configured.\n", r.Problems, r.Name)
	case unverified > 0:
		fmt.Fprintf(&b, "No problem found; %d check(s) could not be verified (see above).\n", unverified)
	case !r.Canary:
		fmt.Fprintf(&b, "No problem found in the configuration (no canary was run: --no-canary).\n")
	default:
		fmt.Fprintf(&b, "Everything holds: %s asks gated before every tool call, and gated recorded the canary.\n", r.Name)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// blockedOwn counts the hooks that blocked the canary on a failure of
// their own: they fail closed, so the tool calls are blocked, not unchecked.
func (r *Report) blockedOwn() int {
	n := 0
	for _, c := range r.all() {
		if c.Status == Problem && strings.HasPrefix(c.Detail, blockedOwn) {
			n++
		}
	}
	return n
}

func (r *Report) all() []Check {
	all := append([]Check(nil), r.Checks...)
	for _, h := range r.Hooks {
		all = append(all, h.Checks...)
	}
	return all
}
