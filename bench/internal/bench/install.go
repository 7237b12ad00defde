package bench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// installed returns the path of a peer's server binary, installing its
// Debian package with apt-get when find cannot find it (as root; anyone
// else is told what to install).
func installed(ctx context.Context, pkg string, find func() (string, error), progress func(string)) (string, error) {
	if path, err := find(); err == nil {
		return path, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%s is not installed: apt-get install %s, or run the benchmark as root", pkg, pkg)
	}
	progress("peers: installing " + pkg + " with apt-get")
	install := func() error {
		cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", pkg)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get install %s: %w: %s", pkg, err, out)
		}
		return nil
	}
	if err := install(); err != nil {
		// The package lists may be stale or absent, as in a fresh container.
		if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
			return "", fmt.Errorf("apt-get update: %w: %s", err, out)
		}
		if err := install(); err != nil {
			return "", err
		}
	}
	return find()
}

// onPath finds a binary on PATH.
func onPath(name string) func() (string, error) {
	return func() (string, error) { return exec.LookPath(name) }
}

// postgresBin finds the directory of PostgreSQL's server binaries, which
// Debian keeps off PATH, one per major version: 15 when it is there, else
// the newest.
func postgresBin() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(found) == 0 {
		return "", fmt.Errorf("no /usr/lib/postgresql/*/bin/postgres")
	}
	major := func(path string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
		if n == 15 {
			return math.MaxInt
		}
		return n
	}
	best := slices.MaxFunc(found, func(a, b string) int { return cmp.Compare(major(a), major(b)) })
	return filepath.Dir(best), nil
}

// debianVersion returns the upstream version of an installed Debian
// package ("1.79.5" of "1.79.5+ds1-2+b5"), or "" when dpkg cannot say.
func debianVersion(ctx context.Context, pkg string) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	v := string(out)
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after // the epoch
	}
	v, _, _ = strings.Cut(v, "-")
	v, _, _ = strings.Cut(v, "+")
	return v
}
