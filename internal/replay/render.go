package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// Format is a rendering of a Report.
type Format string

const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
)

// ParseFormat reads text, json or markdown.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, JSON, Markdown:
		return f, nil
	}
	return "", fmt.Errorf("unknown replay format %q (want text, json or markdown)", s)
}

// Render writes r in format f.
func (r *Report) Render(w io.Writer, f Format) error {
	switch f {
	case JSON:
		return r.WriteJSON(w)
	case Markdown:
		return r.WriteMarkdown(w)
	default:
		return r.WriteText(w)
	}
}

// WriteJSON writes r as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write replay report: %w", err)
	}
	return nil
}

// errWriter keeps the first write error, so a renderer checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

func (e *errWriter) result() error {
	if e.err != nil {
		return fmt.Errorf("write replay report: %w", e.err)
	}
	return nil
}

func (r *Report) summary() string {
	s := fmt.Sprintf("%d decisions replayed from %s to %s: %d changed (%d widened, %d of them resting on what replay could not see; %d narrowed)",
		r.Replayed, r.Window.Since.Format(time.RFC3339), r.Window.Until.Format(time.RFC3339),
		r.Changed, r.Widened, r.WidenedUnseen, r.Narrowed)
	if r.Sealed > 0 || r.Kept > 0 {
		s += fmt.Sprintf("; decided from their sealed event: %d; kept as recorded: %d (invalid events: %d; same revisions, decided with this very catalog and policy: %d)",
			r.Sealed, r.Kept, r.Kept-r.SameRevisions, r.SameRevisions)
	}
	return s + "."
}

// WriteText writes r for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("Replay against catalog %s, policy %s\n%s\n", orNone(r.CatalogRevision), orNone(r.PolicyRevision), r.summary())
	tw := tabwriter.NewWriter(ew.w, 0, 4, 2, ' ', 0)
	tw2 := &errWriter{w: tw}
	tw2.printf("\nRECORDED\tNEW\tDECISIONS\n")
	for _, t := range r.Routes {
		tw2.printf("%s\t%s\t%d\n", t.Recorded, t.New, t.Count)
	}
	for _, g := range []struct {
		title string
		rows  []Group
	}{{"TOOL", r.ByTool}, {"PRINCIPAL", r.ByPrincipal}} {
		tw2.printf("\n%s\tREPLAYED\tCHANGED\tWIDENED\tNARROWED\n", g.title)
		for _, x := range g.rows {
			tw2.printf("%s\t%d\t%d\t%d\t%d\n", plain(x.Name), x.Replayed, x.Changed, x.Widened, x.Narrowed)
		}
	}
	if len(r.Changes) > 0 {
		tw2.printf("\nDECIDED AT\tDECISION\tTOOL\tROUTE\tNEW BLOCKERS\tUNSEEN\n")
		for _, c := range r.Changes {
			tw2.printf("%s\t%s\t%s\t%s\t%s\t%s\n", c.DecidedAt.Format(time.RFC3339), c.DecisionID, plain(c.ToolName),
				arrow(c), orDash(joinPlain(c.NewBlockers)), orDash(joinUnseen(c.Unseen)))
		}
	}
	if tw2.err == nil {
		tw2.err = tw.Flush()
	}
	if ew.err == nil {
		ew.err = tw2.err
	}
	return ew.result()
}

// WriteMarkdown writes r as a Markdown section (headings from level 3), for
// a pull request or `gated policy diff` to embed.
func (r *Report) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("### Replay\n\nAgainst catalog `%s`, policy `%s`. %s\n", orNone(r.CatalogRevision), orNone(r.PolicyRevision), r.summary())
	ew.printf("\n| recorded | new | decisions |\n|---|---|---:|\n")
	for _, t := range r.Routes {
		ew.printf("| %s | %s | %d |\n", t.Recorded, t.New, t.Count)
	}
	for _, g := range []struct {
		title string
		rows  []Group
	}{{"tool", r.ByTool}, {"principal", r.ByPrincipal}} {
		ew.printf("\n#### By %s\n\n| %s | replayed | changed | widened | narrowed |\n|---|---:|---:|---:|---:|\n", g.title, g.title)
		for _, x := range g.rows {
			ew.printf("| %s | %d | %d | %d | %d |\n", cell(x.Name), x.Replayed, x.Changed, x.Widened, x.Narrowed)
		}
	}
	if len(r.Changes) > 0 {
		ew.printf("\n#### Changed decisions\n\n| decided at | decision | tool | route | new blockers | unseen |\n|---|---|---|---|---|---|\n")
		for _, c := range r.Changes {
			ew.printf("| %s | `%s` | %s | %s | %s | %s |\n", c.DecidedAt.Format(time.RFC3339), c.DecisionID, cell(c.ToolName),
				arrow(c), orDash(cell(strings.Join(c.NewBlockers, ", "))), orDash(cell(joinUnseen(c.Unseen))))
		}
	}
	return ew.result()
}

func arrow(c Change) string {
	s := c.Recorded.String() + " → " + c.New.String()
	if c.Widened {
		s += " (widened)"
	}
	return s
}

func joinUnseen(us []Unseen) string {
	ss := make([]string, len(us))
	for i, u := range us {
		ss[i] = string(u)
	}
	return strings.Join(ss, ", ")
}

func joinPlain(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = plain(s)
	}
	return strings.Join(out, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// plain is a caller's text (a tool name, a principal) safe for a
// terminal: quoted when it holds anything but printable characters.
func plain(s string) string {
	if strings.ContainsFunc(s, func(c rune) bool { return !unicode.IsPrint(c) || c == '\t' }) {
		return strconv.Quote(s)
	}
	return s
}

// mdSpecial are the characters that would end a table cell or start
// Markdown or HTML inside one.
var mdSpecial = []rune("\\`*_{}[]<>()#+-!|~&")

// cell is a caller's text as one Markdown table cell, read literally.
func cell(s string) string {
	var b strings.Builder
	for _, c := range plain(s) {
		if slices.Contains(mdSpecial, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
