package cases

import (
	"errors"
	"path/filepath"
)

// ErrNoTestFiles is the error of Run and Catalogs when the directories
// hold no *_test.yaml files.
var ErrNoTestFiles = errors.New("no *_test.yaml files")

// Named is a case with the test file it is in, relative to the directory
// given for it, so that the same case read from two copies of a policy
// (two git revisions) has the same File.
type Named struct {
	File string
	Case
}

// Read returns the cases of every *_test.yaml under dirs, checked as Run
// checks them, for callers that decide them their own way (`gated policy
// diff` decides each against two policies). Unlike Run, finding no test
// files is not an error: a policy may have none yet.
func Read(dirs []string) ([]Named, error) {
	var out []Named
	for _, dir := range dirs {
		files, err := find([]string{dir})
		if errors.Is(err, ErrNoTestFiles) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, path := range files {
			f, err := readFile(path)
			if err != nil {
				return nil, err
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				rel = path
			}
			for _, c := range f.Cases {
				out = append(out, Named{File: filepath.ToSlash(rel), Case: c})
			}
		}
	}
	return out, nil
}
