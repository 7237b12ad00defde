package engine_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFloorPlan: the floor plans in the package docs of engine and
// engine/itemenc list every file of their package but the tests and
// doc.go, and no file that is not there, so that a file added, renamed
// or removed fails here until the plan says so.
func TestFloorPlan(t *testing.T) {
	for _, dir := range []string{".", "itemenc"} {
		t.Run(dir, func(t *testing.T) {
			planned := floorPlan(t, filepath.Join(dir, "doc.go"))
			require.NotEmpty(t, planned, "%s/doc.go has a floor plan", dir)
			var files []string
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				n := e.Name()
				if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && n != "doc.go" {
					files = append(files, n)
				}
			}
			slices.Sort(planned)
			slices.Sort(files)
			require.Equal(t, files, planned, "the floor plan in %s/doc.go against the files of the package", dir)
		})
	}
}

// floorPlan returns the file names listed in the "# Floor plan" section
// of a package doc: the first column of its indented lines, names
// separated by ", ".
func floorPlan(t *testing.T, path string) []string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var names []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "// # Floor plan":
			in = true
		case in && strings.HasPrefix(line, "// # "), in && !strings.HasPrefix(line, "//"):
			return names
		case in && strings.HasPrefix(line, "//\t") && !strings.HasPrefix(line, "//\t "):
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "//\t"), "  ")
			for n := range strings.SplitSeq(first, ",") {
				names = append(names, strings.TrimSpace(n))
			}
		}
	}
	require.NoError(t, sc.Err())
	return names
}
