// Package conformance runs upstream's own end-to-end suite (the
// k8s.io/kubernetes/test/e2e binary of the pinned release) against each
// controller manager, kube-controller-manager and kcm-rs, each on a fresh
// testbed of its own with the same controllers, and compares them spec by
// spec: a table of each spec's result and time with each program.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcm-rs/kcm-rs/testbed/internal/cluster"
	"github.com/kcm-rs/kcm-rs/testbed/internal/provisioner"
)

// Options say what to run and against what.
type Options struct {
	// Dir receives each program's testbed, logs and ginkgo report, and
	// the table (conformance.md) and failures (failures.md).
	Dir string
	// E2E is upstream's e2e test binary; Ginkgo the ginkgo command that
	// runs it Procs specs at a time.
	E2E, Ginkgo string
	Procs       int
	// SuiteTimeout bounds each program's whole suite.
	SuiteTimeout time.Duration
	// KcmRs is the kcm-rs binary; Deploy the deploy/ directory whose
	// ServiceAccount and RBAC it runs under.
	KcmRs, Deploy string
	// Programs are the controller managers to run, of Programs.
	Programs []string
	// Controllers are the controllers each program runs.
	Controllers []string
	// Focus and Skip are ginkgo's patterns over the specs' texts.
	Focus, Skip string
	// Limits lists the specs that fail on the testbed whatever the
	// controller manager (they need what it lacks), and Differences the
	// specs kcm-rs fails on purpose; each with its reason.
	Limits, Differences List
	// SkipListed leaves the specs of both lists out of the run.
	SkipListed bool
	// Nodes is how many nodes each testbed seeds.
	Nodes int
	// StartTimeout bounds each testbed component's start.
	StartTimeout time.Duration
	// Provisioner gives each testbed a default StorageClass served by a
	// stand-in external provisioner (package provisioner), for the specs
	// that need dynamically provisioned volumes.
	Provisioner bool
}

// Run runs the suite with each program, all at once, and writes the table.
// It fails when a program's run did not happen, when the API server
// refused kcm-rs anything (a grant deploy/rbac.yaml lacks), and when
// kcm-rs fails a spec that kube-controller-manager passed in the same run,
// or (run alone) any spec at all, unless the spec is a listed difference.
func Run(ctx context.Context, opts Options) error {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return err
	}
	// The suite runs in each program's directory: the paths given must
	// not depend on where the command was started.
	for _, path := range []*string{&opts.E2E, &opts.Ginkgo, &opts.KcmRs, &opts.Deploy} {
		if *path == "" {
			continue
		}
		abs, err := filepath.Abs(*path)
		if err != nil {
			return err
		}
		*path = abs
	}
	// The programs run at the same time, each on its own testbed: the
	// specs mostly wait (on kwok's nodes, on timeouts of what the testbed
	// cannot do), and side by side both see the same machine.
	runs := make([]Results, len(opts.Programs))
	refused := make([][]string, len(opts.Programs))
	errs := make([]error, len(opts.Programs))
	var wg sync.WaitGroup
	for i, program := range opts.Programs {
		wg.Go(func() {
			fmt.Printf("conformance: the suite with %s\n", program)
			start := time.Now()
			results, refusals, err := runProgram(ctx, program, opts)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", program, err)
				return
			}
			runs[i], refused[i] = results, refusals
			fmt.Printf("conformance: %s passed %d of %d specs in %s\n",
				program, passed(results), len(results), time.Since(start).Round(time.Second))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	byProgram := map[string]Results{}
	var allRefused []string
	for i, program := range opts.Programs {
		byProgram[program] = runs[i]
		allRefused = append(allRefused, refused[i]...)
	}
	table := newTable(byProgram, opts)
	table.refused = allRefused
	if err := table.write(opts.Dir); err != nil {
		return err
	}
	fmt.Printf("conformance: the table is %s, the failures %s\n",
		filepath.Join(opts.Dir, "conformance.md"), filepath.Join(opts.Dir, "failures.md"))
	return table.verdict()
}

// runProgram brings up a fresh testbed, starts program on it, runs the
// suite and reads its report, and the refusals in the program's log.
func runProgram(ctx context.Context, program string, opts Options) (Results, []string, error) {
	dir, err := filepath.Abs(filepath.Join(opts.Dir, program))
	if err != nil {
		return nil, nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	c, err := cluster.Up(ctx, cluster.Options{
		Dir:          filepath.Join(dir, "testbed"),
		Nodes:        opts.Nodes,
		StartTimeout: opts.StartTimeout,
	})
	if err != nil {
		return nil, nil, err
	}
	defer c.Down()
	if opts.Provisioner {
		stop, err := startProvisioner(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		defer stop()
	}
	if err := startProgram(ctx, c, program, opts); err != nil {
		return nil, nil, err
	}
	// A component or the program exiting mid-run ends the run: its
	// results would say nothing about the program.
	suiteCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		if err := c.Wait(suiteCtx); err != nil {
			cancel(err)
		}
	}()
	report, err := runSuite(suiteCtx, c, dir, opts)
	if cause := context.Cause(suiteCtx); cause != nil && !errors.Is(cause, context.Canceled) {
		return nil, nil, cause
	}
	if err != nil {
		return nil, nil, err
	}
	results, err := readReport(report)
	if err != nil {
		return nil, nil, err
	}
	refused, err := refusals(c, program)
	return results, refused, err
}

// startProvisioner runs the stand-in provisioner on c, as the admin, until
// the returned function is called.
func startProvisioner(ctx context.Context, c *cluster.Cluster) (func(), error) {
	config, err := clientcmd.BuildConfigFromFlags("", c.State.Admin)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	if err := provisioner.Run(ctx, client); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

func passed(results Results) int {
	n := 0
	for _, r := range results {
		if r.Passed() {
			n++
		}
	}
	return n
}
