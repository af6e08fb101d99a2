package policydiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Marker opens the markdown report, so that a CI job can find the comment
// it posted before and edit it rather than post another.
const Marker = "<!-- gated-policy-diff -->"

// MarkdownRows caps the rows of each markdown table, so that a comment on
// a sweeping change stays within what a pull-request comment may hold
// (GitHub: 65,536 characters).
const MarkdownRows = 100

// sections are the report's parts, widenings first.
var sections = []struct {
	dir   Direction
	title string
}{
	{Widens, "Widens"},
	{Tightens, "Tightens"},
	{Changes, "Changes gated cannot order"},
}

// summary is the report in one line.
func (r Report) summary() string {
	s := fmt.Sprintf("%d widening, %d tightening, %d other; %d of %d test-case decisions change",
		r.count(Widens), r.count(Tightens), r.count(Changes), len(r.Decisions), r.Cases)
	if r.Replay != nil {
		s += fmt.Sprintf("; %d of %d replayed decisions change, %d widen", r.Replay.Changed, r.Replay.Decisions, r.Replay.Widened)
	}
	return s
}

// Markdown writes the report as a pull-request comment: a summary line,
// then a table per direction, widenings first, structural changes before
// the decisions they cause, then the replay's section.
func (r Report) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(Marker + "\n")
	fmt.Fprintf(&b, "### gated policy diff: %s → %s\n\n", code(r.Old), code(r.New))
	verdict := "No widening."
	switch {
	case r.count(Widens) > 0 || (r.Replay != nil && r.Replay.Widened > 0):
		verdict = "⚠️ **This change widens what gated lets through.**"
	case r.Widens():
		verdict = "⚠️ **This change edits a custom module, which may widen what gated lets through.**"
	}
	fmt.Fprintf(&b, "%s %s.\n", verdict, r.summary())
	for _, s := range sections {
		rows := r.rows(s.dir)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n#### %s (%d)\n\n| | What | Change |\n|---|---|---|\n", s.title, len(rows))
		for i, row := range rows {
			if i == MarkdownRows {
				fmt.Fprintf(&b, "\n…and %d more: `gated policy diff` prints them all in text or JSON.\n", len(rows)-i)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", row.area, row.subjectMD, cell(row.what))
		}
	}
	if r.Replay != nil {
		b.WriteString("\n" + r.Replay.Markdown)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Text writes the report for a terminal: the summary, then one line per
// change, widenings first.
func (r Report) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gated policy diff: %s → %s\n%s\n", r.Old, r.New, r.summary())
	for _, s := range sections {
		for _, row := range r.rows(s.dir) {
			fmt.Fprintf(&b, "%-9s %-11s %s: %s\n", s.dir, row.area, row.subject, row.what)
		}
	}
	if r.Replay != nil {
		b.WriteString("\n" + r.Replay.Text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes the report as one JSON document, with widens: whether
// anything lets more through.
func (r Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Widens bool `json:"widens"`
		Report
	}{r.Widens(), r})
}

type row struct {
	area, subject, subjectMD, what string
}

// rows are the structural changes, then the decisions, going in d.
func (r Report) rows(d Direction) []row {
	var out []row
	for _, c := range r.Changes {
		if c.Direction == d {
			out = append(out, row{c.Area, c.Subject, code(c.Subject), c.What})
		}
	}
	for _, c := range r.Decisions {
		if c.Direction == d {
			out = append(out, row{"decision", fmt.Sprintf("%q (%s)", c.Case, c.File),
				cell(c.Case) + " (" + code(c.File) + ")", outcome(c.Old) + " → " + outcome(c.New)})
		}
	}
	return out
}

func outcome(o Outcome) string {
	if len(o.HardBlockers) == 0 {
		return o.Route
	}
	return o.Route + " [" + strings.Join(o.HardBlockers, ", ") + "]"
}

// cell makes text safe in a markdown table cell: policy files are the
// pull request's own text, so nothing in them may end the table or open
// HTML.
var cellEscaper = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "&", "&amp;", "`", "'", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)

func cell(s string) string { return cellEscaper.Replace(s) }

// code is s as an inline code span in a table cell.
var codeEscaper = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "`", "'")

func code(s string) string { return "`" + codeEscaper.Replace(s) + "`" }
