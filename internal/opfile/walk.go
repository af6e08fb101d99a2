package opfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Limits bound what one Walker reads, over every directory it walks: an
// operator's files are text a person wrote, and anything beyond these is a
// mistake (or an attack on the loader), not configuration.
type Limits struct {
	FileBytes  int64 // one file
	Files      int   // files read
	TotalBytes int64 // every file read, together
	Depth      int   // directories nested below a walked directory
}

// File is one file a Walker read.
type File struct {
	Root string // the walked directory, absolute and symlink-free
	Rel  string // the file's path below Root, slash-separated
	Path string // the path problems name: the directory as given, joined with Rel
	Data []byte
}

// Walker reads the files whose names Match accepts below directories,
// within Limits, in a stable order (each directory's entries by name, as
// filepath.WalkDir visits them). The symlink policy:
//
//   - a directory given as a symlink is walked where it points: a
//     Kubernetes ConfigMap's "..data" and git-sync's link are symlinks, and
//     walking the link itself would read nothing;
//   - below it, a symlinked file is read where it points, because that is
//     how a ConfigMap volume shows its keys, but a symlinked directory is
//     not entered, so no walk loops or wanders off the tree;
//   - entries whose names start with ".." are skipped: they are a
//     ConfigMap's own timestamped copies, and reading them too would read
//     every file twice;
//   - only regular files are read, and a file's type is checked before it
//     is opened: opening a FIFO blocks, and a device may never end.
//
// With File set, a path given as a regular file (or a symlink to one) is
// read as the only file, when Match accepts its name: `--policy POLICY.md`
// names one policy, where a catalog needs the directory its files refer
// within.
//
// Limits and Match must be set: a zero limit reads nothing. A Walker keeps
// its counts from one Walk to the next, so the Limits hold for all the
// directories of one load together.
type Walker struct {
	Limits Limits
	Match  func(name string) bool
	File   bool
	files  int
	bytes  int64
}

// Walk reads the matching files below dir. What is wrong below dir is
// reported as problems (read_failed, file_too_large, too_deep,
// too_many_files, too_many_bytes) and the walk goes on where it can; err is
// set only when dir itself cannot be walked (missing, not a directory), for
// the caller to report in its own words.
func (w *Walker) Walk(dir string) (files []File, problems []Problem, err error) {
	root, isFile, err := walkRoot(dir, w.File)
	if err != nil {
		return nil, nil, err
	}
	if isFile && !w.Match(filepath.Base(root)) {
		return nil, nil, fmt.Errorf("%s is not a directory or a file gated reads here", dir)
	}
	add := func(file, code, format string, args ...any) {
		problems = append(problems, Problem{File: file, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	// The callback returns no error but SkipDir and SkipAll, so WalkDir's
	// own result is always nil.
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p) // p is root or below it
		shown := filepath.Join(dir, rel)
		if isFile {
			rel, shown = filepath.Base(root), dir
		}
		switch {
		case err != nil:
			add(shown, "read_failed", "%v", err)
			return nil
		case p == root && !isFile:
			return nil
		case strings.HasPrefix(d.Name(), ".."):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir():
			if strings.Count(rel, string(filepath.Separator)) >= w.Limits.Depth {
				add(shown, "too_deep", "more than %d directories deep; nothing below is read", w.Limits.Depth)
				return filepath.SkipDir
			}
			return nil
		case !w.Match(d.Name()):
			return nil
		case w.files >= w.Limits.Files:
			add(shown, "too_many_files", "more than %d files to read; the rest are not read", w.Limits.Files)
			return filepath.SkipAll
		}
		w.files++
		data, err := readFile(p, w.Limits.FileBytes)
		switch {
		case errors.Is(err, errFileTooLarge):
			add(shown, "file_too_large", "larger than %d bytes", w.Limits.FileBytes)
			return nil
		case err != nil:
			add(shown, "read_failed", "%v", err)
			return nil
		}
		if w.bytes += int64(len(data)); w.bytes > w.Limits.TotalBytes {
			add(shown, "too_many_bytes", "the files together are larger than %d bytes; the rest are not read", w.Limits.TotalBytes)
			return filepath.SkipAll
		}
		fileRoot := root
		if isFile {
			fileRoot = filepath.Dir(root)
		}
		files = append(files, File{Root: fileRoot, Rel: filepath.ToSlash(rel), Path: shown, Data: data})
		return nil
	})
	return files, problems, nil
}

// walkRoot resolves dir to the absolute, symlink-free path to walk, and
// says whether it is a regular file (allowed only when file is set).
func walkRoot(dir string, file bool) (string, bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return "", false, err
	}
	switch {
	case fi.IsDir():
		return root, false, nil
	case file && fi.Mode().IsRegular():
		return root, true, nil
	}
	return "", false, fmt.Errorf("%s is not a directory", dir)
}

var errFileTooLarge = errors.New("the file is too large")

// readFile reads a regular file (following a symlink) of at most limit
// bytes. The type and size are checked before opening, and the read is
// bounded all the same, in case the file grows after the check.
func readFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > limit {
		return nil, errFileTooLarge
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errFileTooLarge
	}
	return data, nil
}
