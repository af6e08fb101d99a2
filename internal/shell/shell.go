// Package shell reads a command line the way bash would run it, without
// running it: every simple command it runs, after quote removal and with
// the wrappers that run another command unwrapped, and the files its
// redirections and `source` name. Rules judge these instead of the raw text,
// so `\rm`, `"rm"`, `r""m` and `eval rm` are all rm.
//
// What cannot be known without running the line (a command word built from
// an expansion, a line that does not parse, one too large to read) makes the
// whole line Dynamic: a caller must not allow what it could not read.
package shell

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Bounds on what one line may cost to read. Past any of them the line is
// Dynamic, which callers refuse or ask about; they are never errors.
const (
	// MaxBytes bounds the line, and separately the text re-parsed from
	// it (bash -c, eval, watch, env -S, here-documents fed to a shell).
	MaxBytes = 64 << 10
	// maxNodes bounds the syntax nodes of the line and its re-parses
	// together.
	maxNodes = 50000
	// maxDepth bounds re-parsing: bash -c "eval 'sh -c …'" nests once per
	// level.
	maxDepth = 4
	// maxCommands bounds the commands a line yields.
	maxCommands = 2048
	// maxNesting bounds brackets open at once, checked before parsing:
	// the parser's cost grows with nesting far faster than with length.
	maxNesting = 64
	// maxOperators bounds the | and & characters of a line, checked
	// before parsing: a chain of pipes or && nests the syntax tree one
	// level per operator, and walking a deep tree costs more than its size.
	maxOperators = 512
	// maxTreeDepth bounds the syntax tree's depth (if inside if …).
	maxTreeDepth = 1000
)

// Word is one argument after quote removal.
type Word struct {
	// Text is the word as the program receives it when Static; otherwise
	// the word with its expansions kept as written ($HOME/x, $(pwd)) and
	// $'…' decoded.
	Text string
	// Static: no expansion, brace or glob changes the word at run time.
	Static bool
	// Glob: the word has unquoted glob characters (*, ?, [), so the shell
	// replaces it with the names it matches.
	Glob bool
	// Alts are the words a brace expansion makes of it ({.,}env is .env
	// and env), when there are few enough to list; rules match them as
	// well as Text.
	Alts []string
	// unlisted: the word has braces that make too many words to list.
	unlisted bool
	// altGlob, altDynamic: some word the braces make has a glob, or an
	// expansion.
	altGlob, altDynamic bool
	// lead is the literal text before the first expansion, brace or glob.
	lead string
}

// Words are the words the shell makes of w: w itself, unless it is
// static but for its braces, and then each word they make (src/{a,b}.go is
// src/a.go and src/b.go).
func (w Word) Words() []Word {
	if w.Static || len(w.Alts) == 0 || w.altDynamic || w.unlisted {
		return []Word{w}
	}
	out := make([]Word, len(w.Alts))
	for i, t := range w.Alts {
		out[i] = Word{Text: t, Static: true, Glob: w.altGlob}
		if !w.altGlob {
			out[i].lead = t
		}
	}
	return out
}

// MayBeOption reports whether the word may be an option (start with '-')
// once the shell has expanded it: a static word that does, or any other
// word whose literal start does not rule it out ("$X", "*", "{-rf,/}").
func (w Word) MayBeOption() bool {
	if w.Static && !w.Glob {
		return strings.HasPrefix(w.Text, "-")
	}
	return w.lead == "" || w.lead[0] == '-'
}

// Command is one simple command the line runs.
type Command struct {
	// Name is the program: the base name of its command word, in lower
	// case and without .exe, so /bin/rm, ./rm, RM and rm.exe are rm.
	Name string
	// Path is the command word as written when it names a file (./cat,
	// /usr/bin/cat, node_modules/.bin/rg) rather than a program the shell
	// looks up.
	Path string
	// Args are the words after the command word. A wrapper's own options
	// stay in the wrapper's Args; the wrapped command is a Command of its
	// own. Arguments xargs adds from its input are one word that is not
	// Static.
	Args []Word
	// Env: the command runs with variable assignments (A=b cmd, env A=b
	// cmd), which may change what it does (PAGER, GIT_EXTERNAL_DIFF …).
	Env bool
	// Pipes are the pipeline stages the command runs in, outermost
	// first: (curl x | cat) | sh has curl and cat in stage 0 of the outer
	// pipeline. A command outside any pipeline has a pipeline of its own;
	// a wrapped command, and the text a shell runs, have its wrapper's.
	Pipes []Stage
	// Recursive: the command calls the function whose body it is in, as
	// a fork bomb does (:(){ :|:& };:).
	Recursive bool
}

// File is a file a redirection or `source` names.
type File struct {
	Word
	Write bool // written (>, >>, &>, <>), not only read
}

// Line is a parsed command line.
type Line struct {
	Commands []Command
	Files    []File
	// Chdir: some command changes the working directory (cd, pushd,
	// popd, env -C, sudo -D), so a relative path may not be relative to
	// where the line starts.
	Chdir bool
	// Assigns: the line sets shell variables for what follows (x=1;
	// export, declare, local, for x in, $((x=1)), ${x:=1}), which changes
	// what later commands run or read: PATH=., LD_PRELOAD, BASH_ENV,
	// GIT_EXTERNAL_DIFF, GLOBIGNORE (which makes * match .env).
	Assigns bool
	// Dynamic says why some of what the line runs could not be read; it
	// is empty when every command word is static and the whole line was
	// read.
	Dynamic string
}

// panicked is the Dynamic reason of a line the reader panicked on.
const panicked = "the command line could not be parsed"

// Parse reads a command line. It never fails: what it cannot read makes
// the Line Dynamic.
func Parse(src string) (line *Line) {
	defer func() {
		// A parser bug on hostile input must not fail open, nor crash a
		// decision: the line is one gated could not read.
		if recover() != nil {
			line = &Line{Dynamic: panicked}
		}
	}()
	r := &reader{line: &Line{}, prev: map[*syntax.Stmt]*syntax.Stmt{}}
	if len(src) > MaxBytes {
		r.dynamic("the command line is longer than %d bytes", MaxBytes)
		return r.line
	}
	r.parse(src, 0, state{})
	return r.line
}

// state is what a wrapper passes to the command it runs.
type state struct {
	env   bool
	pipes []Stage // the pipeline stages the command runs in, outermost first
	depth int
	// recursive: the command calls a function from its own body.
	recursive bool
}

// Stage is a command's place in a pipeline.
type Stage struct {
	Pipe int // the pipeline, unique in a Line
	N    int // the stage, from 0
}

// maxPipeNesting bounds the pipelines one command is a stage of at once.
const maxPipeNesting = 8

type reader struct {
	line  *Line
	nodes int
	pipes int
	// prev is the pipeline stage before each later stage, whose output
	// is that stage's standard input.
	prev map[*syntax.Stmt]*syntax.Stmt
}

func (r *reader) dynamic(format string, args ...any) {
	if r.line.Dynamic == "" {
		r.line.Dynamic = fmt.Sprintf(format, args...)
	}
}

// parse reads src, a whole line or text a command runs as one (bash -c),
// in the pipeline stages st.pipes.
func (r *reader) parse(src string, depth int, st state) {
	if depth > maxDepth {
		r.dynamic("the command line nests shells more than %d deep", maxDepth)
		return
	}
	if len(src) > MaxBytes {
		r.dynamic("a command the line runs is longer than %d bytes", MaxBytes)
		return
	}
	if nesting(src) > maxNesting {
		r.dynamic("the command line nests brackets more than %d deep", maxNesting)
		return
	}
	if strings.Count(src, "|")+strings.Count(src, "&") > maxOperators {
		r.dynamic("the command line has more than %d | and & characters", maxOperators)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		r.dynamic("the command line does not parse as a shell command")
		return
	}
	level, deep := 0, false
	syntax.Walk(f, func(n syntax.Node) bool { // not Preorder, whose cost grows with depth per node
		if n == nil {
			level--
			return true
		}
		if r.nodes++; r.nodes > maxNodes || level >= maxTreeDepth {
			deep = deep || level >= maxTreeDepth
			return false
		}
		level++
		return true
	})
	switch {
	case r.nodes > maxNodes:
		r.dynamic("the command line has more than %d parts", maxNodes)
		return
	case deep:
		r.dynamic("the command line nests commands more than %d deep", maxTreeDepth)
		return
	}
	st.depth = depth
	stages := map[*syntax.Stmt]Stage{}
	chained := map[*syntax.BinaryCmd]bool{}
	pipes := st.pipes
	var funcs []string // the functions whose bodies the walk is in
	var frames []frame // per node entered, what it entered
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			fr := frames[len(frames)-1]
			if fr.stage {
				pipes = pipes[:len(pipes)-1]
			}
			if fr.fn {
				funcs = funcs[:len(funcs)-1]
			}
			frames = frames[:len(frames)-1]
			return true
		}
		if r.line.Dynamic != "" {
			return false
		}
		var fr frame
		switch n := n.(type) {
		case *syntax.ExtGlob:
			r.dynamic("a word has a pattern zsh reads as glob qualifiers, which can run commands")
			return false
		case *syntax.DeclClause:
			r.line.Assigns = true
			r.subscripts(n, src)
			for _, a := range n.Args {
				r.assigned(a, src, st)
			}
		case *syntax.ForClause, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause:
			r.line.Assigns = true
			r.subscripts(n, src)
		case *syntax.TestClause:
			r.subscripts(n, src)
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				r.line.Assigns = true
			}
		case *syntax.FuncDecl:
			if n.Name != nil {
				funcs = append(funcs, n.Name.Value)
				fr.fn = true
			}
		case *syntax.BinaryCmd:
			if isPipe(n) && !chained[n] {
				r.pipes++
				list := flatten(n, chained)
				for i, s := range list {
					stages[s] = Stage{Pipe: r.pipes, N: i}
					if i > 0 && n.Op == syntax.Pipe {
						r.prev[s] = list[i-1]
					}
				}
			}
		case *syntax.Stmt:
			if p, ok := stages[n]; ok {
				if len(pipes) >= maxPipeNesting {
					r.dynamic("the command line nests pipelines more than %d deep", maxPipeNesting)
					return false
				}
				pipes = append(pipes[:len(pipes):len(pipes)], p)
				fr.stage = true
			}
			r.redirects(n, src)
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				for _, a := range call.Assigns {
					r.subscripts(a, src)
					r.assigned(a, src, st)
				}
				if len(call.Args) == 0 {
					r.line.Assigns = true // x=1 alone sets x for the rest of the line
				}
			}
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				cs := st
				cs.pipes = pipes
				if len(pipes) == 0 {
					r.pipes++
					cs.pipes = []Stage{{Pipe: r.pipes}}
				}
				cs.env = st.env || len(call.Assigns) > 0
				words := make([]Word, len(call.Args))
				for i, w := range call.Args {
					words[i] = word(w, src)
				}
				if words[0].Static && subscripts(program(words[0].Text), words[1:]) {
					r.subscripts(n, src) // its here-string too: read x <<< 'a[$(…)]'
				}
				if words[0].Static && slices.Contains(funcs, words[0].Text) {
					cs.recursive = true
				}
				r.run(words, n, src, cs)
			}
		}
		frames = append(frames, fr)
		return true
	})
}

// commandVars are the environment variables whose value a program runs
// as a command: PAGER='rm -rf /' git log runs rm.
var commandVars = map[string]bool{"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "PAGER": true,
	"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "EDITOR": true, "VISUAL": true, "GIT_EXTERNAL_DIFF": true,
	"GIT_PROXY_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "MANPAGER": true,
	"SYSTEMD_PAGER": true, "LESSOPEN": true, "LESSCLOSE": true, "BASH_ENV": true, "PROMPT_COMMAND": true,
	"RSYNC_RSH": true}

// assigned reads an assignment (X=v cmd, X=v alone, export X=v) whose
// variable is one a program runs as a command.
func (r *reader) assigned(a *syntax.Assign, src string, st state) {
	if a.Name == nil || a.Value == nil || a.Index != nil || !commandVars[a.Name.Value] {
		return
	}
	r.commandVar(a.Name.Value, word(a.Value, src), st)
}

// commandVar reads the value of a command variable as shell text; LESSOPEN's
// leading | (or ||) only says how less reads its output.
func (r *reader) commandVar(name string, v Word, st state) {
	if !commandVars[name] || r.line.Dynamic != "" {
		return
	}
	if name == "LESSOPEN" || name == "LESSCLOSE" {
		v.Text = strings.TrimLeft(v.Text, "|")
	}
	if v.Static && strings.TrimSpace(v.Text) == "" {
		return
	}
	r.shellText(v, st)
}

// subscripted are the builtins that read an argument as a variable name,
// whose array subscript bash expands, running what a $(…) there holds:
// printf -v 'a[$(rm -rf /)]' x runs rm though the word is quoted. Some do
// only with an option, which is given ("" for none).
var subscripted = map[string]string{"test": "-v", "[": "-v", "printf": "-v", "wait": "-p", "read": "",
	"declare": "", "typeset": "", "local": "", "export": "", "readonly": "", "let": "", "unset": "",
	"mapfile": "", "readarray": "", "getopts": ""}

// subscripts reports whether a command is a builtin that reads one of its
// arguments as a variable name.
func subscripts(name string, args []Word) bool {
	opt, ok := subscripted[name]
	return ok && (opt == "" || slices.ContainsFunc(args, func(a Word) bool { return !a.Static || a.Text == opt }))
}

// subscriptCode matches a subscript holding a command substitution.
var subscriptCode = regexp.MustCompile(`\[[^\]]*(?:\$\(|` + "`)")

// subscripts makes the line Dynamic when a word under n, as bash reads it
// after quote removal, is an array subscript holding a command
// substitution: in a test ([[ -v 'a[$(…)]' ]]), an arithmetic context, an
// assignment's value (which arithmetic later evaluates) or an argument of a
// builtin that takes a variable name, bash runs that command, which gated
// would not see.
func (r *reader) subscripts(n syntax.Node, src string) {
	syntax.Walk(n, func(m syntax.Node) bool {
		if w, ok := m.(*syntax.Word); ok && r.line.Dynamic == "" && subscriptCode.MatchString(literal(w)) {
			r.dynamic("a quoted array subscript holds a command substitution, which bash runs")
		}
		return r.line.Dynamic == ""
	})
}

// literal is a word's quoted and unquoted text after quote removal, with
// each expansion a NUL: a $( in it was quoted, so the walk did not see a
// command there.
func literal(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			unquoted(&b, p.Value)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar { // $'a[\x24(…)]': decoded, every % a plain one
				v, _, _ = printfFormat(strings.ReplaceAll(v, "%", "%%"), nil)
			}
			b.WriteString(v)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, `$`+"`"+`"\`))
				} else {
					b.WriteByte(0)
				}
			}
		default:
			b.WriteByte(0)
		}
	}
	return b.String()
}

// frame is what entering a syntax node entered.
type frame struct{ stage, fn bool }

// nesting is the most brackets of src open at once, quoted or not: an
// over-estimate, which is safe.
func nesting(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			most = max(most, depth)
		case ')', '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return most
}

func isPipe(b *syntax.BinaryCmd) bool { return b.Op == syntax.Pipe || b.Op == syntax.PipeAll }

// flatten lists the stages of a pipeline a | b | c, marking the nested
// pipe nodes of the same chain so they are not taken for pipelines of
// their own.
func flatten(b *syntax.BinaryCmd, chained map[*syntax.BinaryCmd]bool) []*syntax.Stmt {
	chained[b] = true
	var out []*syntax.Stmt
	for _, s := range []*syntax.Stmt{b.X, b.Y} {
		if inner, ok := s.Cmd.(*syntax.BinaryCmd); ok && isPipe(inner) && !s.Negated && len(s.Redirs) == 0 {
			out = append(out, flatten(inner, chained)...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// redirects records the files a statement's redirections name.
func (r *reader) redirects(s *syntax.Stmt, src string) {
	for _, rd := range s.Redirs {
		if rd.Word == nil {
			continue
		}
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue // text on stdin, not a file
		case syntax.DplIn, syntax.DplOut:
			w := word(rd.Word, src)
			if w.Static && (w.Text == "-" || isDigits(w.Text)) {
				continue // 2>&1, >&-
			}
			r.line.Files = append(r.line.Files, File{Word: w, Write: rd.Op == syntax.DplOut})
		case syntax.RdrIn:
			r.line.Files = append(r.line.Files, File{Word: word(rd.Word, src)})
		default:
			r.line.Files = append(r.line.Files, File{Word: word(rd.Word, src), Write: true})
		}
	}
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// program is the name a command word runs, as rules match it: its base
// name, in lower case and without .exe, since macOS and Windows file
// systems ignore case (RM runs rm there) and Windows finds rm.exe as rm.
func program(word string) string {
	// zsh runs =rm as the rm its PATH finds (EQUALS, set by default)
	if len(word) > 1 && word[0] == '=' {
		word = word[1:]
	}
	name := strings.ToLower(path.Base(word))
	if trimmed := strings.TrimSuffix(name, ".exe"); trimmed != "" {
		name = trimmed
	}
	return name
}

// run records the command words run and unwraps what it runs in turn.
func (r *reader) run(words []Word, s *syntax.Stmt, src string, st state) {
	for len(words) > 0 && r.line.Dynamic == "" {
		w := words[0]
		if !w.Static || w.Glob {
			r.dynamic("a command word is not static: it is built from an expansion, a glob or a brace")
			return
		}
		if len(r.line.Commands) >= maxCommands {
			r.dynamic("the command line runs more than %d commands", maxCommands)
			return
		}
		name := program(w.Text)
		args := words[1:]
		if slices.ContainsFunc(args, func(a Word) bool { return a.unlisted }) {
			r.dynamic("an argument expands to more than %d words", maxAlts)
			return
		}
		if changesDir(name, args) {
			r.line.Chdir = true
		}
		var at string
		if strings.ContainsAny(w.Text, `/\`) {
			at = w.Text
		}
		r.line.Commands = append(r.line.Commands, Command{Name: name, Path: at, Args: args, Env: st.env,
			Pipes: st.pipes, Recursive: st.recursive})
		words = r.unwrap(name, args, s, src, &st)
	}
}

// changesDir reports whether a command may change the working directory
// of what follows it or of the command it runs.
func changesDir(name string, args []Word) bool {
	switch name {
	case "cd", "pushd", "popd":
		return true
	case "env", "sudo":
		return slices.ContainsFunc(args, func(a Word) bool {
			return !a.Static || a.Text == "-C" || a.Text == "-D" || strings.HasPrefix(a.Text, "--chdir") ||
				name == "env" && strings.HasPrefix(a.Text, "-C") || name == "sudo" && strings.HasPrefix(a.Text, "-D")
		})
	}
	return false
}

// A wrapper's options: the short letters and long names that take a
// value, and how many operands come before the wrapped command.
type wrapper struct {
	short    string
	long     []string
	operands int
}

var wrappers = map[string]wrapper{
	// sudo's getopt string, "+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv":
	// -h takes a value only when attached
	"sudo": {short: "aCcDgpRrTtUu", long: []string{"--auth-type", "--close-from", "--login-class", "--chdir", "--group",
		"--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"}},
	"doas":         {short: "auC"},
	"nice":         {short: "n", long: []string{"--adjustment"}},
	"nohup":        {},
	"timeout":      {short: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
	"command":      {},
	"builtin":      {},
	"exec":         {short: "a"},
	"busybox":      {},
	"toybox":       {},
	"stdbuf":       {short: "ioe", long: []string{"--input", "--output", "--error"}},
	"setsid":       {},
	"time":         {short: "fo", long: []string{"--format", "--output"}},
	"nocorrect":    {},
	"noglob":       {},
	"-":            {}, // zsh's precommand modifier: - rm runs rm
	"repeat":       {operands: 1},
	"ionice":       {short: "cnp", long: []string{"--class", "--classdata", "--pid"}},
	"chroot":       {long: []string{"--userspec", "--groups"}, operands: 1},
	"taskset":      {operands: 1},
	"unbuffer":     {},
	"caffeinate":   {short: "tw"},
	"torsocks":     {},
	"proxychains":  {short: "f"},
	"proxychains4": {short: "f"},
	"firejail":     {},
	"strace":       {short: "abeEIoOpPsSuUX"},
	"ltrace":       {short: "aAbDeEnoOpsSuwX"},
	"flock":        {short: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}, operands: 1},
	"chrt":         {short: "TPD", long: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}, operands: 1},
	"numactl":      {short: "NmCipP", long: []string{"--cpunodebind", "--membind", "--physcpubind", "--interleave", "--preferred", "--preferred-many", "--weighted-interleave"}},
	"taskpolicy":   {short: "cdgbt"},
	"cpulimit":     {short: "lpe", long: []string{"--limit", "--pid", "--exe", "--cpu"}},
	"pkexec":       {long: []string{"--user"}},
	"fakeroot":     {short: "lsi", long: []string{"--lib", "--faked"}},
	"nsenter":      {short: "tSG", long: []string{"--target", "--setuid", "--setgid"}},
	"unshare":      {short: "RwSG", long: []string{"--root", "--wd", "--setuid", "--setgid", "--propagation", "--setgroups"}},
	"systemd-run": {short: "upEMH", long: []string{"--unit", "--property", "--setenv", "--machine", "--host", "--description",
		"--slice", "--uid", "--gid", "--nice", "--working-directory", "--on-active", "--on-boot", "--on-startup",
		"--on-unit-active", "--on-unit-inactive", "--on-calendar", "--on-timer-property", "--path-property",
		"--socket-property", "--timer-property", "--service-type", "--expand-environment"}},
	"valgrind":     {},
	"catchsegv":    {},
	"aa-exec":      {short: "pn", long: []string{"--profile", "--namespace"}},
	"sandbox-exec": {short: "fpD"},
	"ssh-agent":    {short: "aEtP"},
	"dbus-launch":  {},
	"xvfb-run":     {short: "nsfepw", long: []string{"--server-num", "--server-args", "--auth-file", "--error-file", "--wait"}},
	"with-contenv": {},
	"tini":         {short: "sgpe"},
	"dumb-init":    {short: "r", long: []string{"--rewrite"}},
	"gosu":         {operands: 1},
	"su-exec":      {operands: 1},
	"setpriv":      {long: []string{"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule"}},
}

// shells run their -c text, a script file, or their standard input, in
// a language close enough to bash's for the parser to read what they run.
var shells = map[string]bool{"sh": true, "bash": true, "rbash": true, "zsh": true, "dash": true, "ksh": true,
	"ksh93": true, "mksh": true, "pdksh": true, "oksh": true, "lksh": true, "ash": true, "yash": true, "posh": true, "hush": true}

// foreignShells run code in a language gated does not parse.
var foreignShells = map[string]bool{"fish": true, "csh": true, "tcsh": true, "pwsh": true, "pwsh.exe": true,
	"powershell": true, "powershell.exe": true, "cmd": true, "cmd.exe": true, "nu": true, "xonsh": true,
	"elvish": true, "rc": true, "es": true}

// unwrap returns the words of the command that name runs with args, or
// nil when it runs none (or what it runs was read another way).
func (r *reader) unwrap(name string, args []Word, s *syntax.Stmt, src string, st *state) []Word {
	if (name == "flock" || name == "script") && slices.ContainsFunc(args, func(a Word) bool {
		t := a.Text
		return !a.Static || strings.HasPrefix(t, "--command") || len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.IndexByte(t, 'c') > 0
	}) {
		r.su(args, *st) // -c text, run by a shell
		return nil
	}
	if w, ok := wrappers[name]; ok {
		rest, flags := options(args, w.short, w.long)
		if len(rest) == 0 && (name == "sudo" && (strings.ContainsAny(flags, "si") || slices.ContainsFunc(args, func(a Word) bool {
			return a.Text == "--shell" || a.Text == "--login"
		})) || name == "doas" && strings.Contains(flags, "s")) {
			r.stdin(s, src, *st) // sudo -s, sudo -i, doas -s: a shell, reading its input
			return nil
		}
		if len(rest) < w.operands {
			return nil
		}
		return rest[w.operands:]
	}
	switch {
	case shells[name]:
		return r.shell(args, s, src, *st)
	case foreignShells[name]:
		r.foreign(name, args)
	case name == "env":
		return r.env(args, st)
	case name == "eval":
		r.reparse(args, *st)
	case name == "emulate":
		r.su(args, *st) // zsh's emulate sh -c TEXT runs TEXT
	case name == "su" || name == "runuser":
		if !r.su(args, *st) && name == "su" {
			r.stdin(s, src, *st) // a login shell, reading its input
		}
	case name == "alias" && len(args) > 0:
		r.dynamic("the line defines an alias, which gated does not follow")
	case name == "source" || name == ".":
		if len(args) > 0 {
			if !args[0].Static {
				r.dynamic("source runs a file gated cannot name")
				return nil
			}
			if r.descriptor(args[0], s, src, *st) {
				return nil
			}
			r.line.Files = append(r.line.Files, File{Word: args[0]})
		}
	case name == "hash" && slices.ContainsFunc(args, func(a Word) bool {
		return !a.Static || len(a.Text) > 1 && a.Text[0] == '-' && strings.Contains(a.Text, "p")
	}):
		r.dynamic("the line binds a command name to another program (hash -p), which gated does not follow")
	case name == "xargs":
		// GNU's -e, -i and -l (--eof, --replace) take a value only when
		// attached (-i{}), so `xargs -i rm -rf {}` runs rm; BSD's -J, -R
		// and -S take the next word.
		rest, _ := options(args, "adEILnPsJRS", []string{"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"})
		if len(rest) == 0 {
			return nil
		}
		// xargs appends what it reads, which gated cannot see, or puts it
		// in place of -I's string, inside words too: xargs -I{} sh -c
		// 'rm -rf {}' runs text gated cannot read
		cmd := slices.Clone(rest)
		if repl := xargsReplace(args[:len(args)-len(rest)]); repl != "" {
			for i, w := range cmd {
				if w.Static && strings.Contains(w.Text, repl) {
					cmd[i].Static = false
				}
			}
		}
		return append(cmd, Word{Text: "", Static: false})
	case name == "watch":
		rest, flags := options(args, "nq", []string{"--interval", "--equexit", "--chgexit"})
		if strings.Contains(flags, "x") {
			return rest
		}
		r.reparse(rest, *st)
	case name == "find":
		r.find(args, *st)
	case name == "fd" || name == "fdfind":
		return fdExec(args)
	case name == "parallel":
		r.parallel(args, *st)
	case name == "sg":
		// sg [-] GROUP [-c] COMMAND: COMMAND is run by /bin/sh -c
		rest := args
		if len(rest) > 0 && rest[0].Static && rest[0].Text == "-" {
			rest = rest[1:]
		}
		if len(rest) > 1 {
			if rest = rest[1:]; rest[0].Static && rest[0].Text == "-c" {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				r.shellText(rest[0], *st)
			}
		}
	case name == "trap":
		// trap ACTION SIGNAL…: ACTION is shell text run later
		rest := args
		if len(rest) > 0 && rest[0].Static && rest[0].Text == "--" {
			rest = rest[1:]
		}
		if len(rest) > 1 && !(rest[0].Static && strings.HasPrefix(rest[0].Text, "-") && rest[0].Text != "-") {
			r.shellText(rest[0], *st)
		}
	case name == "git":
		r.gitConfig(args, *st)
	case textOptions[name] != nil:
		r.optionTexts(name, args, *st)
	}
	return nil
}

// textOptions are, per program, the options whose value it runs as a
// shell command: tar's --to-command, -I and --checkpoint-action=exec=…,
// rsync's -e, zip's -TT, ssh's -o ProxyCommand=….
var textOptions = map[string]*textOption{
	"tar":    {short: "IF", long: []string{"--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--checkpoint-action"}},
	"gtar":   {short: "IF", long: []string{"--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--checkpoint-action"}},
	"bsdtar": {long: []string{"--use-compress-program"}},
	"rsync":  {short: "e", long: []string{"--rsh"}},
	"zip":    {long: []string{"-TT", "--unzip-command"}},
	"ssh":    {short: "o", sshOption: true},
	"scp":    {short: "oS", sshOption: true},
	"sftp":   {short: "oS", sshOption: true},
}

type textOption struct {
	short     string   // letters whose value (attached or the next word) is run
	long      []string // options whose value (--x=v or the next word) is run
	sshOption bool     // -o's value is KEY=VALUE, run for the ssh_config keys that run commands
}

// sshCommandKeys are the ssh_config keys whose value ssh runs with the
// user's shell.
var sshCommandKeys = []string{"proxycommand", "localcommand", "knownhostscommand"}

// optionTexts reads, as shell text, the option values a program runs.
func (r *reader) optionTexts(name string, args []Word, st state) {
	spec := textOptions[name]
	for i := 0; i < len(args) && r.line.Dynamic == ""; i++ {
		a := args[i]
		if a.Static && a.Text == "--" {
			return
		}
		if !a.Static || !strings.HasPrefix(a.Text, "-") {
			continue
		}
		var val Word
		found := false
		next := func() {
			if i+1 < len(args) {
				i++
				val, found = args[i], true
			}
		}
		switch t := a.Text; {
		case slices.Contains(spec.long, t):
			next()
		case strings.HasPrefix(t, "--") || slices.ContainsFunc(spec.long, func(l string) bool { return strings.HasPrefix(t, l+"=") }):
			if k, v, ok := strings.Cut(t, "="); ok && slices.Contains(spec.long, k) {
				val, found = Word{Text: v, Static: true}, true
			}
		default:
			for j := 1; j < len(t); j++ {
				if strings.IndexByte(spec.short, t[j]) < 0 {
					continue
				}
				if j+1 < len(t) {
					val, found = Word{Text: t[j+1:], Static: true}, true
				} else {
					next()
				}
				if spec.sshOption && t[j] == 'o' {
					val, found = sshCommand(val, found)
				}
				break
			}
		}
		if !found {
			continue
		}
		if strings.HasPrefix(a.Text, "--checkpoint-action") && val.Static {
			v, ok := strings.CutPrefix(val.Text, "exec=")
			if !ok {
				continue // another action: dot, echo, ttyout …
			}
			val.Text = v
		}
		r.shellText(val, st)
	}
}

// sshCommand is the command an ssh -o value runs: the value of a key that
// runs one (ProxyCommand=…, "ProxyCommand …"), or none.
func sshCommand(v Word, found bool) (Word, bool) {
	if !found {
		return v, false
	}
	if !v.Static {
		return v, true // any key, any command
	}
	key, val, ok := strings.Cut(strings.TrimSpace(v.Text), "=")
	if !ok {
		key, val, ok = strings.Cut(strings.TrimSpace(v.Text), " ")
	}
	if !ok || !slices.Contains(sshCommandKeys, strings.ToLower(strings.TrimSpace(key))) {
		return v, false
	}
	return Word{Text: strings.TrimSpace(val), Static: true}, true
}

// xargsReplace is the string xargs' options say to replace with what it
// reads (-I R, -IR, -i, -iR, --replace, --replace=R, BSD's -J R), "" for
// none.
func xargsReplace(opts []Word) string {
	repl := ""
	for i, a := range opts {
		t := a.Text
		switch {
		case !a.Static || !strings.HasPrefix(t, "-") || t == "--":
		case t == "--replace":
			repl = "{}"
		case strings.HasPrefix(t, "--replace="):
			repl = strings.TrimPrefix(t, "--replace=")
		case strings.HasPrefix(t, "--"):
		default:
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'i':
					if repl = t[j+1:]; repl == "" {
						repl = "{}"
					}
				case 'I', 'J':
					if repl = t[j+1:]; repl == "" && i+1 < len(opts) {
						repl = opts[i+1].Text
					}
				default:
					if strings.IndexByte("adELnPsRS", t[j]) < 0 {
						continue // a flag: the cluster goes on
					}
				}
				break // the rest of the word is this option's value
			}
		}
	}
	return repl
}

// placeholder stands for what fd and parallel put in place of {} (a path
// or an input line), which gated cannot know.
var placeholder = Word{Text: "{}", Static: false}

// fdExec is the command fd -x/-X (--exec, --exec-batch) runs, with its
// placeholders ({}, {/}, {//}, {.}, {/.}) and the paths fd appends when
// there is none standing for what gated cannot know.
func fdExec(args []Word) []Word {
	for i, a := range args {
		if !a.Static || !slices.Contains([]string{"-x", "-X", "--exec", "--exec-batch"}, a.Text) {
			continue
		}
		var cmd []Word
		placed := false
		for _, w := range args[i+1:] {
			if w.Static && w.Text == ";" {
				break
			}
			if w.Static && strings.Contains(w.Text, "{") && strings.Contains(w.Text, "}") {
				cmd, placed = append(cmd, placeholder), true
				continue
			}
			cmd = append(cmd, w)
		}
		if !placed && len(cmd) > 0 {
			cmd = append(cmd, placeholder)
		}
		return cmd
	}
	return nil
}

// parallel runs its command, the words after its options and before
// :::, as shell text, with each {…} replacement string, and the argument
// it appends, standing for an input gated cannot know.
func (r *reader) parallel(args []Word, st state) {
	rest, _ := options(args, "adEIjLlnNPSsC", []string{"--arg-file", "--delimiter", "--eof", "--jobs", "--max-args",
		"--max-replace-args", "--max-lines", "--sshlogin", "--results", "--joblog", "--tmpdir", "--workdir", "--colsep",
		"--env", "--timeout", "--delay", "--retries", "--tag-string", "--basefile", "--transferfile", "--return",
		"--memfree", "--load", "--halt", "--replace", "--tmux", "--sshloginfile", "--arg-sep", "--arg-file-sep"})
	var cmd []string
	for _, w := range rest {
		if w.Static && strings.HasPrefix(w.Text, ":::") {
			break
		}
		if !w.Static {
			r.dynamic("parallel runs a command gated cannot read")
			return
		}
		cmd = append(cmd, w.Text)
	}
	if len(cmd) == 0 {
		return
	}
	r.parse(replacement.ReplaceAllString(strings.Join(cmd, " "), `"$$PARALLEL_ARG"`)+` "$PARALLEL_ARG"`, st.depth+1, st)
}

var echoOption = regexp.MustCompile(`^-[neE]+$`)

var replacement = regexp.MustCompile(`\{[^{}\s]*\}`)

// gitShellKeys are git config keys whose value git runs with a shell.
var gitShellKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "sequence.editor", "diff.external"}

// gitConfig reads git -c KEY=VALUE: an alias whose value starts with !,
// a credential helper that does, and the keys git runs as shell
// commands (core.pager, core.sshCommand …) run VALUE as shell text. An
// alias of another git command (alias.p=push, then git p -f) and any of
// those keys given by --config-env (whose value is in the environment)
// make the line Dynamic: gated would judge the alias's name, not what
// git runs.
func (r *reader) gitConfig(args []Word, st state) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		var v Word
		fromEnv := false
		switch {
		case !a.Static:
			continue
		case a.Text == "-c" || a.Text == "--config-env":
			if i+1 == len(args) {
				return
			}
			i++
			v, fromEnv = args[i], a.Text == "--config-env"
		case strings.HasPrefix(a.Text, "--config-env="):
			v, fromEnv = Word{Text: strings.TrimPrefix(a.Text, "--config-env="), Static: a.Static}, true
		default:
			continue
		}
		key, val, _ := strings.Cut(v.Text, "=")
		key = strings.ToLower(key)
		alias := strings.HasPrefix(key, "alias.")
		bang := alias || strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper") || key == "credential.helper"
		shellKey := slices.Contains(gitShellKeys, key) || strings.HasPrefix(key, "pager.")
		switch {
		case !v.Static:
			r.dynamic("git is run with configuration gated cannot read")
		case fromEnv && (bang || shellKey):
			r.dynamic("git is run with an alias or a command in configuration taken from the environment")
		case fromEnv:
		case bang && strings.HasPrefix(val, "!"):
			r.shellText(Word{Text: val[1:], Static: true}, st)
		case alias:
			r.dynamic("git is run with an alias the line defines, which gated does not follow")
		case shellKey:
			r.shellText(Word{Text: val, Static: true}, st)
		}
	}
}

// options skips the options of a wrapper: getopt clusters (-nq, -u root,
// -uroot) and long options (--user root, --user=root), up to the first
// operand or "--". It returns the rest and the short option letters seen.
func options(args []Word, short string, long []string) (rest []Word, flags string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static || a.Text == "-" || !strings.HasPrefix(a.Text, "-") {
			return args[i:], flags
		}
		if a.Text == "--" {
			return args[i+1:], flags
		}
		if strings.HasPrefix(a.Text, "--") {
			if !strings.Contains(a.Text, "=") && slices.Contains(long, a.Text) {
				i++
			}
			continue
		}
		for j := 1; j < len(a.Text); j++ {
			flags += a.Text[j : j+1]
			if strings.IndexByte(short, a.Text[j]) >= 0 {
				if j == len(a.Text)-1 {
					i++
				}
				break
			}
		}
	}
	return nil, flags
}

// shell reads what bash, sh … run: the -c text, re-parsed; a script file,
// recorded as a file; or standard input, which gated reads when it is a
// here-document or here-string.
func (r *reader) shell(args []Word, s *syntax.Stmt, src string, st state) []Word {
	command, fromStdin := false, false // -c, -s
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			if a.MayBeOption() && !command {
				r.dynamic("a shell is run with options gated cannot read")
				return nil
			}
			break
		}
		if a.Text == "--" || a.Text == "-" {
			i++
			break
		}
		if !strings.HasPrefix(a.Text, "-") && !strings.HasPrefix(a.Text, "+") {
			break
		}
		switch {
		case a.Text == "--rcfile" || a.Text == "--init-file":
			i++
		case strings.HasPrefix(a.Text, "--"):
		default:
			if strings.Contains(a.Text, "c") {
				command = true
			}
			if a.Text[0] == '-' && strings.Contains(a.Text, "s") {
				fromStdin = true // the operands are its arguments, not a script
			}
			if strings.ContainsAny(a.Text, "oO") {
				i++
			}
		}
	}
	rest := args[min(i, len(args)):]
	switch {
	case command:
		if len(rest) == 0 {
			return nil
		}
		r.shellText(rest[0], st)
	case len(rest) > 0 && !fromStdin:
		if !rest[0].Static {
			r.dynamic("a shell runs a script gated cannot name")
			return nil
		}
		if r.descriptor(rest[0], s, src, st) {
			return nil
		}
		r.line.Files = append(r.line.Files, File{Word: rest[0]})
	case !onlyAsksAbout(args):
		r.stdin(s, src, st)
	}
	return nil
}

// fdPath matches the paths that name an open descriptor: /dev/stdin,
// /dev/fd/N, /proc/self/fd/N.
var fdPath = regexp.MustCompile(`^/+(?:dev/+(?:stdin|fd/+(\d+))|proc/+[^/]+/+fd/+(\d+))/*$`)

// descriptor reads a script a shell or source is given as a path to a
// descriptor: standard input's (bash /dev/stdin <<< 'rm -rf /') is read as
// a shell's input is, any other's is Dynamic. It reports whether the path
// was one.
func (r *reader) descriptor(w Word, s *syntax.Stmt, src string, st state) bool {
	m := fdPath.FindStringSubmatch(path.Clean(w.Text))
	switch {
	case m == nil:
		return false
	case m[1] == "" && m[2] == "" || m[1] == "0" || m[2] == "0":
		r.stdin(s, src, st)
	default:
		r.dynamic("a shell reads a script from a descriptor gated cannot see")
	}
	return true
}

// onlyAsksAbout reports whether a shell is run only to print its version
// or help, which runs no script.
func onlyAsksAbout(args []Word) bool {
	return len(args) > 0 && !slices.ContainsFunc(args, func(a Word) bool {
		return !a.Static || a.Text != "--version" && a.Text != "--help"
	})
}

// stdin reads the script a shell reads from its standard input: a
// here-document or here-string, a file (< script.sh, or cat script.sh |
// sh, read as sh script.sh is), or the text a static echo or printf pipes
// to it. Anything else (a download, a decoded blob, a variable, another
// descriptor, whatever the line itself is given) is a script nobody can
// read in the line, so the line is Dynamic.
func (r *reader) stdin(s *syntax.Stmt, src string, st state) {
	if s == nil { // run by find -exec: its input is find's
		r.dynamic("a shell reads a script from standard input gated cannot see")
		return
	}
	var in *syntax.Redirect // the last redirection of standard input wins
	for _, rd := range s.Redirs {
		if rd.N != nil && rd.N.Value != "0" {
			continue
		}
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			in = rd
		}
	}
	if in == nil {
		r.piped(r.prev[s], src, st)
		return
	}
	switch in.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		body := in.Hdoc
		if in.Op == syntax.WordHdoc {
			body = in.Word
		}
		w := words(body, src, in.Op != syntax.WordHdoc)
		if !w.Static {
			r.dynamic("a shell runs standard input gated cannot read")
			return
		}
		r.parse(w.Text, st.depth+1, st)
	case syntax.DplIn:
		r.dynamic("a shell reads a script from a descriptor gated cannot see")
	default: // < script.sh, recorded with the line's files
		if w := word(in.Word, src); !w.Static || w.Glob {
			r.dynamic("a shell runs a script gated cannot name")
		}
	}
}

// piped reads the script the pipeline stage prev writes to a shell: the
// text of an echo or printf of static words, parsed, or the files cat
// reads, recorded as script files. Anything else is Dynamic, as is a
// shell that is not a later stage of a pipeline (nil).
func (r *reader) piped(prev *syntax.Stmt, src string, st state) {
	var args []Word
	if prev != nil && len(prev.Redirs) == 0 {
		if call, ok := prev.Cmd.(*syntax.CallExpr); ok && len(call.Assigns) == 0 {
			for _, w := range call.Args {
				args = append(args, word(w, src))
			}
		}
	}
	if len(args) == 0 || slices.ContainsFunc(args, func(a Word) bool { return !a.Static || a.Glob }) {
		r.dynamic("a shell reads a script from standard input gated cannot see")
		return
	}
	name, args := program(args[0].Text), args[1:]
	if name == "cat" && len(args) > 0 && !slices.ContainsFunc(args, func(a Word) bool { return strings.HasPrefix(a.Text, "-") }) {
		for _, a := range args {
			r.line.Files = append(r.line.Files, File{Word: a})
		}
		return
	}
	text, ok := printed(name, args)
	if !ok {
		r.dynamic("a shell reads a script from standard input gated cannot see")
		return
	}
	r.parse(text, st.depth+1, st)
}

// printed is what echo or printf print with static args, when gated can
// tell: not echo with a backslash, which dash's echo decodes and bash's
// does not, nor printf -v.
func printed(name string, args []Word) (string, bool) {
	var text []string
	for _, a := range args {
		text = append(text, a.Text)
	}
	switch name {
	case "echo":
		for len(text) > 0 && echoOption.MatchString(text[0]) {
			text = text[1:]
		}
		s := strings.Join(text, " ")
		return s, !strings.Contains(s, `\`)
	case "printf":
		if len(text) > 0 && text[0] == "--" {
			text = text[1:]
		}
		if len(text) == 0 || strings.HasPrefix(text[0], "-") {
			return "", false
		}
		format, rest := text[0], text[1:]
		var b strings.Builder
		for {
			s, n, err := printfFormat(format, rest)
			if err != nil {
				return "", false
			}
			b.WriteString(s)
			if rest = rest[n:]; n == 0 || len(rest) == 0 {
				return b.String(), true
			}
		}
	}
	return "", false
}

// foreign reads what a shell of another language runs (fish, csh, pwsh
// …): gated does not parse that language, so a script file named first is
// recorded as a file, as sh script.sh is, and code given any other way
// (-c, standard input, an option gated does not know) makes the line
// Dynamic.
func (r *reader) foreign(name string, args []Word) {
	if onlyAsksAbout(args) {
		return
	}
	rest := args
	switch name = strings.TrimSuffix(name, ".exe"); name {
	case "cmd": // no script operand: cmd runs /c text, or its input
		rest = nil
	case "pwsh", "powershell":
		// options are case-insensitive; -File takes the script, and a
		// bare operand is -File to pwsh but -Command to Windows PowerShell
		for len(rest) > 0 && rest[0].Static && slices.Contains([]string{"-noprofile", "-nop", "-nologo", "-nol", "-noninteractive", "-noni"}, strings.ToLower(rest[0].Text)) {
			rest = rest[1:]
		}
		if len(rest) > 1 && rest[0].Static && slices.Contains([]string{"-file", "-f"}, strings.ToLower(rest[0].Text)) {
			rest = rest[1:]
		} else if name == "powershell" {
			rest = nil
		}
	}
	if len(rest) > 0 && rest[0].Static && !rest[0].Glob && !strings.HasPrefix(rest[0].Text, "-") && !strings.HasPrefix(rest[0].Text, "+") &&
		!fdPath.MatchString(path.Clean(rest[0].Text)) { // fish /dev/stdin reads its input
		r.line.Files = append(r.line.Files, File{Word: rest[0]})
		return
	}
	r.dynamic("%s runs code in a language gated does not read", name)
}

// su runs its -c (--command) text as a shell does; so do runuser, flock
// and script. -c may end a cluster (-lc TEXT) or carry the text (-cTEXT).
// It reports whether there was -c text to run.
func (r *reader) su(args []Word, st state) bool {
	for i, a := range args {
		t := a.Text
		switch {
		case !a.Static:
			if a.MayBeOption() {
				r.dynamic("a command that runs -c text is run with options gated cannot read")
				return true
			}
		case t == "--command" || t == "-c":
			if i+1 < len(args) {
				r.shellText(args[i+1], st)
			}
			return true
		case strings.HasPrefix(t, "--command="):
			r.shellText(Word{Text: strings.TrimPrefix(t, "--command="), Static: true}, st)
			return true
		case len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.IndexByte(t, 'c') > 0:
			if rest := t[strings.IndexByte(t, 'c')+1:]; rest != "" {
				r.shellText(Word{Text: rest, Static: true}, st)
			} else if i+1 < len(args) {
				r.shellText(args[i+1], st)
			}
			return true
		}
	}
	return false
}

// shellText re-parses the text a shell runs with -c.
func (r *reader) shellText(w Word, st state) {
	if !w.Static {
		r.dynamic("a shell runs -c text gated cannot read")
		return
	}
	r.parse(w.Text, st.depth+1, st)
}

// env skips env's options and assignments; -S text is split and run.
// Short options cluster as getopt's do (-iu NAME, -iS 'text'), and BSD's
// -P, -L and -U take a value as -u and -C do.
func (r *reader) env(args []Word, st *state) []Word {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.Static:
			return args[i:]
		case a.Text == "--":
			return args[i+1:]
		case a.Text == "--split-string" || strings.HasPrefix(a.Text, "--split-string="):
			r.reparse(args[i:], *st)
			return nil
		case a.Text == "--unset" || a.Text == "--chdir":
			i++
		case strings.HasPrefix(a.Text, "--") || a.Text == "-":
		case strings.HasPrefix(a.Text, "-"):
			for j := 1; j < len(a.Text); j++ {
				c := a.Text[j]
				if c == 'S' {
					// the text runs with the words after it
					text := Word{Text: "-S" + a.Text[j+1:], Static: true}
					r.reparse(append([]Word{text}, args[i+1:]...), *st)
					return nil
				}
				if strings.IndexByte("uCPLU", c) >= 0 {
					if j == len(a.Text)-1 {
						i++
					}
					break
				}
			}
		case strings.Contains(a.Text, "=") && syntax.ValidName(a.Text[:strings.IndexByte(a.Text, '=')]):
			st.env = true
			name, val, _ := strings.Cut(a.Text, "=")
			r.commandVar(name, Word{Text: val, Static: true}, *st)
		default:
			return args[i:]
		}
	}
	return nil
}

// reparse runs words joined by spaces as a command line (eval, watch,
// env -S): each static word is one word of the new line as it is.
func (r *reader) reparse(words []Word, st state) {
	parts := make([]string, len(words))
	for i, w := range words {
		if !w.Static {
			r.dynamic("a command runs text gated cannot read")
			return
		}
		parts[i] = w.Text
	}
	text := strings.Join(parts, " ")
	if t, ok := strings.CutPrefix(text, "--split-string="); ok {
		text = t
	} else if t, ok := strings.CutPrefix(text, "--split-string "); ok {
		text = t
	} else if t, ok := strings.CutPrefix(text, "-S"); ok {
		text = t
	}
	r.parse(text, st.depth+1, st)
}

// find's actions that run a command, up to ";" or "{} +".
var findExec = map[string]bool{"-exec": true, "-execdir": true, "-ok": true, "-okdir": true}

// find records what its actions run: -exec and the like as commands, with
// {} standing for the paths find starts from; -delete as rm -r -f of them.
func (r *reader) find(args []Word, st state) {
	var starts []Word
	i := 0
	for ; i < len(args); i++ {
		t := args[i].Text
		if args[i].Static && (strings.HasPrefix(t, "-") || t == "(" || t == "!") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []Word{{Text: ".", Static: true, lead: "."}}
	}
	for ; i < len(args) && r.line.Dynamic == ""; i++ {
		a := args[i]
		switch {
		case a.Static && a.Text == "-delete":
			r.line.Commands = append(r.line.Commands, Command{Name: "rm",
				Args: append([]Word{{Text: "-r", Static: true, lead: "-r"}, {Text: "-f", Static: true, lead: "-f"}}, starts...),
				Env:  st.env, Pipes: st.pipes})
		case a.Static && findExec[a.Text]:
			var cmd []Word
			braces := false // the word before was {}
			for i++; i < len(args); i++ {
				t := args[i].Text
				if args[i].Static && (t == ";" || (t == "+" && braces)) {
					break
				}
				braces = args[i].Static && t == "{}"
				switch {
				case braces:
					cmd = append(cmd, starts...)
				case args[i].Static && strings.Contains(t, "{}"):
					// GNU find replaces {} inside a word too: sh -c 'rm -rf {}'
					w := args[i]
					if len(starts) == 1 && starts[0].Static {
						w.Text = strings.ReplaceAll(t, "{}", starts[0].Text)
					} else {
						w.Static = false
					}
					cmd = append(cmd, w)
				default:
					cmd = append(cmd, args[i])
				}
			}
			r.run(cmd, nil, "", st)
		case a.Static && (a.Text == "-fprint" || a.Text == "-fprint0" || a.Text == "-fls" || a.Text == "-fprintf"):
			if i+1 < len(args) {
				r.line.Files = append(r.line.Files, File{Word: args[i+1], Write: true})
			}
		}
	}
}

// word is w after quote removal; src is the text it was parsed from.
func word(w *syntax.Word, src string) Word {
	return words(w, src, false)
}

// words reads a word; hdoc reads a here-document body, where quotes are
// plain text and nothing is globbed or brace-expanded.
func words(w *syntax.Word, src string, hdoc bool) Word {
	if w == nil {
		return Word{Static: true}
	}
	if hdoc {
		return read(w, src, true)
	}
	// on a copy: the walk that is reading the syntax tree knows no brace
	// nodes
	w = &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(w) {
		return read(w, src, false)
	}
	out := read(w, src, false)
	// what the braces make of the word, matched besides it: cat {.,}env
	// reads .env
	if countBraces(w, 0) > maxBraces {
		out.unlisted = true
		return out
	}
	for alt, err := range expand.BracesSeq(nil, w) {
		if err != nil || len(out.Alts) == maxAlts {
			out.Alts, out.unlisted = nil, true
			break
		}
		a := read(alt, src, false)
		out.Alts = append(out.Alts, a.Text)
		out.altGlob = out.altGlob || a.Glob
		out.altDynamic = out.altDynamic || !a.Static
	}
	return out
}

// countBraces counts the brace expansions of w, nested ones too, adding
// to n and stopping past maxBraces (syntax.Walk does not know brace nodes).
func countBraces(w *syntax.Word, n int) int {
	for _, p := range w.Parts {
		if b, ok := p.(*syntax.BraceExp); ok {
			n++
			for _, e := range b.Elems {
				if n > maxBraces {
					return n
				}
				n = countBraces(e, n)
			}
		}
	}
	return n
}

// Bounds on the words a brace expansion is matched as: the braces of one
// word, and the words they make. Past them the line is Dynamic.
const (
	maxBraces = 8
	maxAlts   = 64
)

// read reads a word whose braces, if any, are split; hdoc reads a
// here-document body.
func read(w *syntax.Word, src string, hdoc bool) Word {
	out := Word{Static: true}
	var b strings.Builder
	lead := true
	expansion := func(n syntax.Node) {
		out.Static, lead = false, false
		b.WriteString(slice(src, n))
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if hdoc {
				b.WriteString(unescape(p.Value, `$`+"`"+`\`))
				continue
			}
			glob := unquoted(&b, p.Value)
			if glob {
				out.Glob, lead = true, false
			}
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				// $'\x2eenv': matched as what it decodes to, but never
				// proven, since gated decodes it only approximately
				out.Static, lead = false, false
				b.WriteString(ansiC(p.Value))
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, `$`+"`"+`"\`))
					continue
				}
				expansion(q)
			}
		case *syntax.BraceExp:
			// written out, not sliced from the source: a brace node made
			// by SplitBraces has no usable position (and one with an empty
			// element, {.,}env, panics when asked for its end)
			out.Static, lead = false, false
			sep := ","
			if p.Sequence {
				sep = ".."
			}
			b.WriteByte('{')
			for i, e := range p.Elems {
				if i > 0 {
					b.WriteString(sep)
				}
				b.WriteString(read(e, src, false).Text)
			}
			b.WriteByte('}')
		default: // $x, ${x}, $(…), `…`, $((…)), <(…), @(…)
			expansion(p)
		}
		if lead {
			out.lead = b.String()
		}
	}
	out.Text = b.String()
	if lead {
		out.lead = out.Text
	}
	return out
}

// printfFormat expands a printf format with args, as expand.Format does,
// with a config of its own: given nil, Format prepares and writes into one
// config the whole process shares, its string builder included, so
// concurrent decisions raced on it and could read each other's text.
func printfFormat(format string, args []string) (string, int, error) {
	return expand.Format(&expand.Config{}, format, args)
}

// ansiC decodes the text of $'…' as printf decodes its format, which is
// close to what bash does; a % would be read as a directive, so text with
// one is kept as written.
func ansiC(s string) string {
	if strings.Contains(s, "%") {
		return "$'" + s + "'"
	}
	v, _, err := printfFormat(s, nil)
	if err != nil {
		return "$'" + s + "'"
	}
	v, _, _ = strings.Cut(v, "\x00") // bash ends the word at a NUL
	return v
}

// unquoted writes an unquoted literal after removing its backslashes, and
// reports whether it has glob characters the backslashes did not quote.
func unquoted(b *strings.Builder, s string) (glob bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
		case c == '*' || c == '?' || c == '[':
			glob = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return glob
}

// unescape removes the backslashes that quote one of special (and a
// backslash before a newline with it), as inside double quotes.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\n' || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// slice is the source text of n, as written.
func slice(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return "$"
	}
	return src[start:end]
}
