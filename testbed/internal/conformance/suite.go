package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-rs/kcm-rs/testbed/internal/cluster"
)

// runSuite runs upstream's e2e binary under the ginkgo command against c,
// opts.Procs specs at a time, and returns the path of its JSON report. The
// suite's own verdict is not an error (its failures are the results); an
// error is a suite that did not run or wrote no report.
func runSuite(ctx context.Context, c *cluster.Cluster, dir string, opts Options) (string, error) {
	report := filepath.Join(dir, "report.json")
	log, err := os.Create(filepath.Join(dir, "e2e.log"))
	if err != nil {
		return "", err
	}
	defer log.Close()
	args := []string{
		"--procs=" + strconv.Itoa(opts.Procs),
		"--no-color",
		"--silence-skips",
		"--timeout=" + opts.SuiteTimeout.String(),
		"--json-report=" + filepath.Base(report),
		"--output-dir=" + dir,
		"--focus=" + opts.Focus,
	}
	if skip := skipPattern(opts); skip != "" {
		args = append(args, "--skip="+skip)
	}
	args = append(args, opts.E2E, "--",
		"--kubeconfig="+c.State.Admin,
		"--provider=skeleton",
		"--report-dir="+dir,
	)
	cmd := exec.CommandContext(ctx, opts.Ginkgo, args...)
	cmd.Dir = dir
	cmd.Stdout = log
	cmd.Stderr = log
	// ginkgo runs the specs in processes of its own: a run that ends
	// early (interrupted, a component gone) stops them all, as their
	// process group, and kills what is left after a grace period.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	// ginkgo's exit code says whether every spec passed; the report says
	// which did not.
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if _, err := os.Stat(report); err != nil {
		return "", fmt.Errorf("ginkgo wrote no report (%v); see %s", runErr, log.Name())
	}
	return report, nil
}

// skipPattern is the --skip regular expression: opts.Skip and, with
// opts.SkipListed, each spec of both lists by its exact text (ginkgo
// matches a pattern against the suite's description, a space, and the
// spec's text).
func skipPattern(opts Options) string {
	var parts []string
	if opts.Skip != "" {
		parts = append(parts, opts.Skip)
	}
	if opts.SkipListed {
		for _, spec := range append(opts.Limits.Specs(), opts.Differences.Specs()...) {
			parts = append(parts, regexp.QuoteMeta(" "+spec)+"$")
		}
	}
	return strings.Join(parts, "|")
}
