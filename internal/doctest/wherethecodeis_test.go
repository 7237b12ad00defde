package doctest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWhereTheCodeIs checks that the table of docs/design.md's "Where the
// code is" names every folder of the module that holds a package, and
// every module of its own inside it (bench/), and no folder that is
// neither.
func TestWhereTheCodeIs(t *testing.T) {
	m := listModule(t)
	page, err := os.ReadFile(filepath.Join(m.Dir, "docs", "design.md"))
	require.NoError(t, err)
	section, err := sectionOf(string(page), "Where the code is")
	require.NoError(t, err)
	folders := map[string]string{} // folder, relative to the root: the package's synopsis
	for _, p := range m.Pkgs {
		rel, err := filepath.Rel(m.Dir, p.Dir)
		require.NoError(t, err)
		folders[filepath.ToSlash(rel)] = synopsis(p.Doc)
	}
	for _, dir := range nestedModules(t, m.Dir) {
		folders[dir] = "a module of its own"
	}
	for _, v := range whereTheCodeIs(section, folders) {
		t.Error(v)
	}
}

// sectionOf returns the text of the page's section "## title", up to the
// next section of its level.
func sectionOf(page, title string) (string, error) {
	head := "\n## " + title + "\n"
	_, rest, ok := strings.Cut(page, head)
	if !ok {
		return "", fmt.Errorf("no section %q", "## "+title)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section, nil
}

// synopsis returns the first sentence of a package's doc, less its
// "Package name " lead.
func synopsis(doc string) string {
	s, _, _ := strings.Cut(doc, ". ")
	s = strings.TrimSuffix(s, ".")
	if _, rest, ok := strings.Cut(s, " "); ok && strings.HasPrefix(s, "Package ") {
		_, s, _ = strings.Cut(rest, " ")
	}
	return s
}

// nestedModules returns the folders under root, relative to it, that
// hold a go.mod of their own.
func nestedModules(t *testing.T, root string) []string {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if path == root {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return nil
	})
	require.NoError(t, err)
	return dirs
}

// codeSpan is a folder named in the first cell of a row.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// whereTheCodeIs compares the folders the section's table names in its
// first column with folders (each with what its package says it is),
// and returns a message for each difference, saying what to change.
func whereTheCodeIs(section string, folders map[string]string) []string {
	named := map[string]bool{}
	var bad []string
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 3 || cells[0] != "" {
			continue
		}
		for _, sm := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			folder := strings.TrimSuffix(sm[1], "/")
			named[folder] = true
			if _, ok := folders[folder]; !ok {
				bad = append(bad, fmt.Sprintf("docs/design.md, \"Where the code is\", names `%s`, which is no folder of a package or module: "+
					"correct its row to the folder's path from the module's root, or remove it", sm[1]))
			}
		}
	}
	if len(named) == 0 {
		return []string{"docs/design.md, \"Where the code is\", has no table of folders"}
	}
	var missing []string
	for folder := range folders {
		if !named[folder] {
			missing = append(missing, folder)
		}
	}
	slices.Sort(missing)
	for _, folder := range missing {
		bad = append(bad, fmt.Sprintf("docs/design.md, \"Where the code is\", has no row for `%s`: add, in the order of the layers, the row\n| `%s` | %s |",
			folder, folder, folders[folder]))
	}
	return bad
}

func TestWhereTheCodeIsFindsWhatDiffers(t *testing.T) {
	section := "\nText.\n\n| folder | what it is |\n|---|---|\n" +
		"| `engine` | the engine |\n" +
		"| `cmd/timetable-lambda`, `deploy` | the Lambda |\n" +
		"| `gone` | a folder since moved |\n" +
		"| `bench/` (a module of its own) | make bench |\n"
	folders := map[string]string{
		"engine": "", "cmd/timetable-lambda": "", "deploy": "", "bench": "a module of its own",
		"pipeline": "runs every write through one pipeline",
	}
	bad := whereTheCodeIs(section, folders)
	require.Len(t, bad, 2, bad)
	require.Contains(t, bad[0], "names `gone`, which is no folder")
	require.Contains(t, bad[1], "has no row for `pipeline`: add, in the order of the layers, the row\n| `pipeline` | runs every write through one pipeline |")

	require.Empty(t, whereTheCodeIs(section, map[string]string{"engine": "", "cmd/timetable-lambda": "", "deploy": "", "gone": "", "bench": ""}))
	require.NotEmpty(t, whereTheCodeIs("no table", folders))
	require.Equal(t, "runs every write through one pipeline", synopsis("Package pipeline runs every write through one pipeline. Its stages are..."))
}
