package opfile

import (
	"github.com/gatedhq/gated/internal/testtree"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var roomy = Limits{FileBytes: 1 << 10, Files: 100, TotalBytes: 1 << 20, Depth: 4}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func isMD(name string) bool { return strings.HasSuffix(name, ".md") }

// walk walks dir once with a fresh Walker and returns the relative paths
// read and the problems' codes.
func walk(t *testing.T, lim Limits, dir string) (rels, codes []string) {
	t.Helper()
	w := Walker{Limits: lim, Match: isMD}
	files, ps, err := w.Walk(dir)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	for _, f := range files {
		rels = append(rels, f.Rel)
	}
	for _, p := range ps {
		codes = append(codes, p.Code)
	}
	return rels, codes
}

func TestWalkReadsMatchingFilesInOrder(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{"b/x.md": "b", "a.md": "a", "a/z.md": "z", "notes.txt": "no"})
	w := Walker{Limits: roomy, Match: isMD}
	files, ps, err := w.Walk(dir)
	if err != nil || len(ps) != 0 {
		t.Fatalf("Walk: %v %v", err, ps)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Rel+"="+string(f.Data))
		if f.Path != filepath.Join(dir, filepath.FromSlash(f.Rel)) || !filepath.IsAbs(f.Root) {
			t.Errorf("file %+v: path is not the directory as given joined with rel", f)
		}
	}
	if want := []string{"a/z.md=z", "a.md=a", "b/x.md=b"}; !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
}

// The symlink policy, on a Kubernetes ConfigMap volume given as its
// "..data" link and as the mount: each key is read once, through the
// visible link; a symlinked directory is not entered, even one pointing
// outside the tree.
func TestWalkSymlinkPolicy(t *testing.T) {
	t.Parallel()
	mount := t.TempDir()
	testtree.Write(t, mount, map[string]string{"..2026_11_20_v1/a.md": "a", "..2026_11_20_v1/sub/b.md": "b"})
	symlink(t, "..2026_11_20_v1", filepath.Join(mount, "..data"))
	symlink(t, filepath.Join("..data", "a.md"), filepath.Join(mount, "a.md"))
	outside := testtree.Write(t, t.TempDir(), map[string]string{"secret.md": "s"})
	symlink(t, outside, filepath.Join(mount, "elsewhere"))

	if rels, codes := walk(t, roomy, mount); !slices.Equal(rels, []string{"a.md"}) || codes != nil {
		t.Fatalf("the mount: read %v, problems %v; want a.md only", rels, codes)
	}
	data := filepath.Join(mount, "..data")
	w := Walker{Limits: roomy, Match: isMD}
	files, _, err := w.Walk(data)
	if err != nil || len(files) != 2 || files[0].Path != filepath.Join(data, "a.md") || files[1].Rel != "sub/b.md" {
		t.Fatalf("the ..data link: %+v, %v; want a.md and sub/b.md named through the link", files, err)
	}
	if real, _ := filepath.EvalSymlinks(data); files[0].Root != real {
		t.Fatalf("root %s, want the link's target %s", files[0].Root, real)
	}
}

func TestWalkDirectoryProblems(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file.md")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(t.TempDir(), "link")
	symlink(t, "nowhere", dangling)
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), file, dangling} {
		w := Walker{Limits: roomy, Match: isMD}
		if _, _, err := w.Walk(dir); err == nil {
			t.Errorf("Walk(%s) succeeded", dir)
		}
	}
}

// TestWalkFile: with File set, a file root is the one file read (when its
// name matches); without it, a file root is refused as before.
func TestWalkFile(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{"a.md": "a", "b.txt": "b"})
	w := Walker{Limits: roomy, Match: isMD, File: true}
	files, ps, err := w.Walk(filepath.Join(dir, "a.md"))
	if err != nil || len(ps) != 0 || len(files) != 1 || string(files[0].Data) != "a" || files[0].Path != filepath.Join(dir, "a.md") {
		t.Fatalf("Walk(a.md) = %+v, %v, %v; want the one file", files, ps, err)
	}
	if _, _, err := w.Walk(filepath.Join(dir, "b.txt")); err == nil {
		t.Fatal("Walk(b.txt) read a file Match refuses")
	}
}

func TestWalkLimits(t *testing.T) {
	t.Parallel()
	t.Run("file too large", func(t *testing.T) {
		dir := testtree.Write(t, t.TempDir(), map[string]string{"big.md": strings.Repeat("x", 1025), "ok.md": "x"})
		if rels, codes := walk(t, roomy, dir); !slices.Equal(rels, []string{"ok.md"}) || !slices.Equal(codes, []string{"file_too_large"}) {
			t.Fatalf("read %v, problems %v", rels, codes)
		}
	})
	t.Run("a gigabyte is never read", func(t *testing.T) {
		dir := t.TempDir()
		f, err := os.Create(filepath.Join(dir, "huge.md"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(1 << 30); err != nil { // sparse: no disk, but a gigabyte to read
			t.Fatal(err)
		}
		f.Close()
		if _, codes := walk(t, roomy, dir); !slices.Equal(codes, []string{"file_too_large"}) {
			t.Fatalf("problems %v", codes)
		}
	})
	t.Run("too many files, over several directories", func(t *testing.T) {
		a := testtree.Write(t, t.TempDir(), map[string]string{"1.md": "", "2.md": ""})
		b := testtree.Write(t, t.TempDir(), map[string]string{"3.md": "", "4.md": ""})
		w := Walker{Limits: Limits{FileBytes: 10, Files: 3, TotalBytes: 100, Depth: 4}, Match: isMD}
		fa, pa, _ := w.Walk(a)
		fb, pb, _ := w.Walk(b)
		if len(fa) != 2 || len(pa) != 0 || len(fb) != 1 || len(pb) != 1 || pb[0].Code != "too_many_files" || pb[0].File != filepath.Join(b, "4.md") {
			t.Fatalf("read %d then %d, problems %v then %v", len(fa), len(fb), pa, pb)
		}
	})
	t.Run("too many bytes", func(t *testing.T) {
		dir := testtree.Write(t, t.TempDir(), map[string]string{"1.md": "12345", "2.md": "67890", "3.md": "x"})
		lim := Limits{FileBytes: 10, Files: 10, TotalBytes: 8, Depth: 4}
		if rels, codes := walk(t, lim, dir); !slices.Equal(rels, []string{"1.md"}) || !slices.Equal(codes, []string{"too_many_bytes"}) {
			t.Fatalf("read %v, problems %v", rels, codes)
		}
	})
	t.Run("too deep", func(t *testing.T) {
		dir := testtree.Write(t, t.TempDir(), map[string]string{"1/2/ok.md": "", "1/2/3/deep.md": "", "1/2/3/4/deeper.md": ""})
		lim := Limits{FileBytes: 10, Files: 10, TotalBytes: 100, Depth: 2}
		w := Walker{Limits: lim, Match: isMD}
		files, ps, _ := w.Walk(dir)
		if len(files) != 1 || files[0].Rel != "1/2/ok.md" || len(ps) != 1 || ps[0].Code != "too_deep" || ps[0].File != filepath.Join(dir, "1", "2", "3") {
			t.Fatalf("read %+v, problems %v", files, ps)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		dir := t.TempDir()
		symlink(t, "/dev/zero", filepath.Join(dir, "zero.md"))
		if _, codes := walk(t, roomy, dir); !slices.Equal(codes, []string{"read_failed"}) {
			t.Fatalf("problems %v", codes)
		}
	})
}
