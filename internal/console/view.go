package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/route"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pageNames are the templates in templates/, each rendered inside
// layout.html with partials.html.
var pageNames = []string{"login", "error", "queue", "history", "approval", "decisions", "decision", "catalog", "kill", "candidate"}

type pages struct {
	byName map[string]*template.Template
}

func loadPages() (*pages, error) {
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/partials.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// view is what every page template gets: the layout's needs, and the
// page's own Data.
type view struct {
	Title  string
	Active string // the navigation entry to mark current
	CSRF   string
	// Error and Notice are shown above the page: a refusal, or what just
	// happened.
	Error  string
	Notice string
	Data   any

	// Filled by render.
	User    *user
	Nav     nav
	Version string
	Now     time.Time
}

// nav is which pages the signed-in token may open: links to the others
// are not shown.
type nav struct {
	Approvals, Decisions, Catalog, Kills bool
	Candidate                            bool // a candidate policy runs
	Name                                 string
}

// render writes page name with v. It renders into a buffer first, so a
// template error is a clean 500, not half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, v *view) {
	v.Version, v.Now = c.opt.Version, c.opt.Now()
	if v.User != nil {
		t := v.User.token
		v.Nav = nav{Approvals: canApprove(t), Decisions: canDecisions(t), Catalog: canCatalog(t), Kills: canKills(t), Name: t.Name,
			Candidate: canDecisions(t) && c.opt.Candidate != nil}
		if v.CSRF == "" {
			v.CSRF = v.User.csrf
		}
	}
	var buf bytes.Buffer
	if err := c.pages.byName[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		c.opt.Logger.Error("console page failed", zap.String("page", name), zap.Error(err))
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// fail shows an error page with status and a sentence for a person.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, u *user, status int, msg string) {
	c.render(w, r, status, "error", &view{Title: http.StatusText(status), Error: msg, User: u,
		Data: errorView{Status: status, SignedIn: u != nil}})
}

type errorView struct {
	Status   int
	SignedIn bool
}

var funcs = template.FuncMap{
	"ts":     timestamp,
	"iso":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"ago":    ago,
	"until":  until,
	"pretty": prettyJSON,
	"short":  shortID,
	"join":   strings.Join,
	"dash": func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	},
	"route":  routeClass,
	"status": func(s any) string { return "status-" + cssToken(fmt.Sprint(s)) },
	"ms":     func(f float64) string { return fmt.Sprintf("%.2f ms", f) },
	// pair is a decision id and whether the viewer may open it.
	"pair": func(link bool, id string) struct {
		Link bool
		ID   string
	} {
		return struct {
			Link bool
			ID   string
		}{link, id}
	},
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// ago says how long before now t was, in the largest whole unit; the
// script keeps it current.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		return "just now"
	}
	return span(d) + " ago"
}

// until says how long after now t is, or that it has passed.
func until(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := t.Sub(now)
	if d <= 0 {
		return "expired"
	}
	return "in " + span(d)
}

func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
}

// prettyJSON indents a preview for reading; anything that is not JSON is
// shown as it is (html/template escapes it either way).
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// shortID is the first block of a UUID, enough to tell rows apart.
func shortID(id string) string {
	if i := strings.IndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// routeClass is the CSS class of a route's badge; an unknown route (a
// stored value gated did not write) gets a neutral one.
func routeClass(r string) string {
	if _, err := route.ParseRoute(r); err == nil {
		return "route route-" + r
	}
	return "route"
}

// cssToken keeps a class name to letters, digits and dashes.
func cssToken(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, s)
}

// asset is one embedded static file, with the ETag browsers revalidate by.
type asset struct {
	body  []byte
	etag  string
	ctype string
}

var assets = func() map[string]asset {
	m := map[string]asset{}
	_ = fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[path.Base(p)] = asset{body: b, etag: fmt.Sprintf(`"%x"`, sum[:12]), ctype: mime.TypeByExtension(path.Ext(p))}
		return nil
	})
	return m
}()

// serveStatic serves the embedded CSS, script and icon. They are
// revalidated on every use (no-cache with an ETag): a few hundred bytes of
// 304s beat a stale script after an upgrade.
func serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
