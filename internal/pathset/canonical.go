// Package pathset holds what gated knows about file paths it is shown as
// text: the canonical forms a path can take on the platforms an agent runs
// on, compiled sets of path globs matched against every one of those forms,
// the built-in set of secret files, and whether a path leaves a workspace.
//
// Everything here is lexical. gated never sees the agent's file system, so
// a symlink, a hard link, a bind mount or a path a tool builds at run time
// is not resolved.
package pathset

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Home is how the canonical forms spell the agent's home directory, which
// gated does not know: "~", "$HOME", "${HOME}", "%USERPROFILE%", "%HOMEPATH%",
// "/home/<user>", "/Users/<user>", "C:\Users\<user>", "/root" and
// "/var/root" all become it in a path's home form.
const Home = "~"

// homeMark stands for the home directory while a path is cleaned, so that
// "~/../u/.npmrc" is cleaned to "/home/u/.npmrc" (another user's home) and
// not to "u/.npmrc". No user is called "~".
const homeMark = "/home/~"

// Canonical returns the forms of p a deny rule matches, deduplicated, the
// plain one first:
//
//   - the POSIX reading: p cleaned ("a/../.env" is ".env"), a leading home
//     spelling written "~";
//   - the Windows reading, when p has backslashes, a drive letter, an NTFS
//     stream suffix (".env::$DATA", ".env:s") or a name ending in dots or
//     spaces (".env ", ".env."), which Windows treats as separators or
//     ignores;
//   - each of those in lower case, since macOS and Windows disks ignore case
//     by default and open ".ENV" for ".env";
//   - a path through a process's root directory as the path it is:
//     "/proc/self/root/etc/shadow" is also "/etc/shadow";
//   - for a path under a home directory, each of those relative to it:
//     "/home/u/.ssh/id_rsa", "/Users/u/.ssh/id_rsa" and
//     "C:\Users\u\.ssh\id_rsa" all have the home form "~/.ssh/id_rsa".
//
// Both readings are kept because gated does not know which platform the
// agent's tool runs on; a rule that denies fires if any form matches.
func Canonical(p string) []string {
	rs, n := readings(p)
	out := make([]string, 0, 4*n)
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range rs[:n] {
		add(r.full)
		add(r.home)
		add(procRoot(r.full))
	}
	for _, r := range rs[:n] {
		add(strings.ToLower(r.full))
		add(strings.ToLower(r.home))
		add(strings.ToLower(procRoot(r.full)))
	}
	return out
}

// procRoot is a cleaned absolute path seen through a process's root
// directory (/proc/self/root/etc/shadow) as the path it is (/etc/shadow),
// or "" when it is not one.
func procRoot(c string) string {
	rest, seen := c, false
	for {
		after, ok := strings.CutPrefix(rest, "/proc/")
		if !ok {
			break
		}
		pid, r, _ := strings.Cut(after, "/")
		if pid == "" || (r != "root" && !strings.HasPrefix(r, "root/")) {
			break
		}
		rest, seen = r[len("root"):], true
	}
	switch {
	case !seen:
		return ""
	case rest == "":
		return "/"
	}
	return rest
}

// reading is one way to read a path: cleaned, and relative to the home
// directory it is under ("" when none, or when full already starts with
// "~").
type reading struct{ full, home string }

// readings are p's POSIX reading and, when Windows would read it
// differently, its Windows reading; n says how many there are.
func readings(p string) (rs [2]reading, n int) {
	rs[0] = clean(expandHome(p))
	if !windowsShaped(p) {
		return rs, 1
	}
	rs[1] = clean(windows(p))
	return rs, 2
}

// clean cleans a path whose home spelling is expanded.
func clean(expanded string) reading {
	c := path.Clean(expanded)
	if c == homeMark || strings.HasPrefix(c, homeMark+"/") {
		return reading{full: Home + c[len(homeMark):]}
	}
	if expandHome(c) != c {
		// cleaning brought a name to the front ("./~x", "a/../$HOME"):
		// it is a file in the current directory, not a home spelling
		return reading{full: "./" + c}
	}
	h, _ := underHome(c)
	return reading{full: c, home: h}
}

// homeSpellings are the leading words that name the agent's home
// directory, and what they stand for. A longer spelling comes before any
// it starts with.
var homeSpellings = []struct{ word, means string }{
	{"${HOME}", homeMark},
	{"$HOME", homeMark},
	{"${XDG_CONFIG_HOME}", homeMark + "/.config"},
	{"$XDG_CONFIG_HOME", homeMark + "/.config"},
	{"%USERPROFILE%", homeMark},
	{"%HOMEDRIVE%%HOMEPATH%", homeMark},
	{"%HOMEPATH%", homeMark},
	{"$env:HOMEPATH", homeMark},
	{"${env:HOMEPATH}", homeMark},
	{"$env:USERPROFILE", homeMark},
	{"${env:USERPROFILE}", homeMark},
	{"%APPDATA%", homeMark + "/AppData/Roaming"},
	{"$env:APPDATA", homeMark + "/AppData/Roaming"},
	{"${env:APPDATA}", homeMark + "/AppData/Roaming"},
	{"~", homeMark},
}

// expandHome replaces a leading home spelling (in any case: Windows ignores
// it in variable names) with homeMark, and a leading "~user" with
// /home/user. The spelling must be the whole path or be followed by a
// separator: "$HOMEDIR/x" is not home.
func expandHome(p string) string {
	for _, s := range homeSpellings {
		if len(p) < len(s.word) || !strings.EqualFold(p[:len(s.word)], s.word) {
			continue
		}
		rest := p[len(s.word):]
		if rest == "" || rest[0] == '/' {
			return s.means + rest
		}
		if s.word == "~" {
			user, after, _ := strings.Cut(rest, "/")
			if after != "" || strings.HasSuffix(rest, "/") {
				return "/home/" + user + "/" + after
			}
			return "/home/" + user
		}
	}
	return p
}

// underHome reports the home form of a cleaned absolute path under a home
// directory: /home/<user>, /Users/<user> (any case, as macOS and Windows
// write it, with or without a drive), /root or /var/root, also seen
// through a process's root directory (/proc/<pid>/root/home/<user>).
func underHome(c string) (string, bool) {
	rest := c
	if len(rest) >= 3 && rest[1] == ':' && rest[2] == '/' && isLetter(rest[0]) {
		rest = rest[2:] // a drive
	}
	if r := procRoot(rest); r != "" {
		rest = r
	}
	for _, root := range []string{"/root", "/var/root"} {
		if r, ok := strings.CutPrefix(rest, root); ok && (r == "" || r[0] == '/') {
			return Home + r, true
		}
	}
	for _, parent := range []string{"/home/", "/users/"} {
		if len(rest) <= len(parent) || !strings.EqualFold(rest[:len(parent)], parent) {
			continue
		}
		user, after, found := strings.Cut(rest[len(parent):], "/")
		if user == "" {
			continue
		}
		if !found {
			return Home, true
		}
		return Home + "/" + after, true
	}
	return "", false
}

// windowsShaped reports whether Windows would read p differently from a
// POSIX system: it has a backslash or a colon, or a name that ends in a
// dot or a space (other than "." and "..").
func windowsShaped(p string) bool {
	if strings.ContainsAny(p, `\:`) {
		return true
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg != "." && seg != ".." && seg != "" && (seg[len(seg)-1] == '.' || seg[len(seg)-1] == ' ') {
			return true
		}
	}
	return false
}

// windows rewrites p as Windows reads it, in POSIX spelling: backslashes
// are separators; a \\?\ or \\.\ prefix goes; a drive letter is kept
// ("C:\x" is "C:/x") except on a drive-relative path ("C:x" is "x"); each
// name loses an NTFS stream suffix (from its first colon) and its trailing
// dots and spaces.
func windows(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	for _, prefix := range []string{"//?/", "//./", "/??/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			p = rest
			break
		}
	}
	if len(p) >= 4 && strings.EqualFold(p[:4], "unc/") {
		p = "//" + p[4:] // \\?\UNC\server\share is \\server\share
	}
	if m := localShare.FindStringSubmatch(p); m != nil {
		p = m[1] + ":/" + strings.TrimPrefix(p[len(m[0]):], "/") // \\localhost\c$\x is C:\x
	}
	var b strings.Builder
	b.Grow(len(p) + len(homeMark))
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		if len(p) > 2 && p[2] == '/' {
			b.WriteString(p[:2])
		}
		p = p[2:]
	}
	p = expandHome(p) // before streams are cut: "$env:USERPROFILE" has a colon
	for i, seg := range strings.Split(p, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if name, _, ok := strings.Cut(seg, ":"); ok {
			seg = name
		}
		if seg != "." && seg != ".." {
			seg = strings.TrimRight(seg, ". ")
			if seg == "" && i > 0 {
				seg = "."
			}
		}
		b.WriteString(seg)
	}
	return b.String()
}

// localShare matches a UNC path to a drive's administrative share on this
// machine: \\localhost\c$, \\127.0.0.1\C$.
var localShare = regexp.MustCompile(`(?i)^//(?:localhost|127\.0\.0\.1|\[?::1\]?)/([a-z])\$(?:/|$)`)

func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
