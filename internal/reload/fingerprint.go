package reload

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxHashed bounds how much of one file the fingerprint hashes. Catalog and
// policy files are far smaller; past the bound, size and modification time
// still tell a change apart.
const maxHashed = 16 << 20

// fingerprint digests every file below dirs as a build would see it: its
// path, type, size, modification time and content, following symlinked files
// and a symlinked root, skipping "..*" entries (a ConfigMap's internals) the
// way the loaders do. Two equal digests taken around a build mean the build
// read files that did not change meanwhile: a file truncated and rewritten
// in place changes its size, time or content. Problems (a missing directory,
// an unreadable file) go into the digest rather than failing it, so that a
// build error caused by them is reported once the directory is settled.
func fingerprint(dirs []string) [sha256.Size]byte {
	h := sha256.New()
	for i, dir := range dirs {
		fmt.Fprintf(h, "dir %d %q\n", i, dir)
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			fmt.Fprintf(h, "unresolvable: %v\n", err)
			continue
		}
		fmt.Fprintf(h, "root %q\n", root)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(h, "walk %q: %v\n", p, err)
				return nil
			}
			if p != root && strings.HasPrefix(d.Name(), "..") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() {
				fileEntry(h, root, p)
			}
			return nil
		})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// fileEntry writes one file's line and content digest.
func fileEntry(h hash.Hash, root, p string) {
	rel, _ := filepath.Rel(root, p)
	fi, err := os.Stat(p) // through a symlink, as the loaders read it
	if err != nil {
		fmt.Fprintf(h, "file %q: %v\n", rel, err)
		return
	}
	fmt.Fprintf(h, "file %q %v %d %d\n", rel, fi.Mode().Type(), fi.Size(), fi.ModTime().UnixNano())
	if !fi.Mode().IsRegular() {
		return // never open a FIFO or a device: the open could block
	}
	f, err := os.Open(p)
	if err != nil {
		fmt.Fprintf(h, "open: %v\n", err)
		return
	}
	defer f.Close()
	c := sha256.New()
	n, err := io.Copy(c, io.LimitReader(f, maxHashed))
	fmt.Fprintf(h, "content %d %x %v\n", n, c.Sum(nil), err)
}
