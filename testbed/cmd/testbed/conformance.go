package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-rs/kcm-rs/testbed/internal/conformance"
)

// runConformance is `testbed conformance`: upstream's e2e suite with each
// controller manager, side by side.
func runConformance(args []string) int {
	flags := flag.NewFlagSet("conformance", flag.ContinueOnError)
	opts := conformance.Options{}
	flags.StringVar(&opts.Dir, "dir", "conformance", "where each run's testbed, logs and report go, and the table")
	flags.StringVar(&opts.E2E, "e2e", "", "upstream's e2e test binary (go test -c k8s.io/kubernetes/test/e2e)")
	flags.StringVar(&opts.Ginkgo, "ginkgo", "", "the ginkgo command")
	flags.IntVar(&opts.Procs, "procs", 8, "specs run at a time, per program")
	flags.DurationVar(&opts.SuiteTimeout, "suite-timeout", 6*time.Hour, "how long each program's suite may take")
	flags.StringVar(&opts.KcmRs, "kcm-rs", "", "the kcm-rs binary")
	flags.StringVar(&opts.Deploy, "deploy", "deploy", "the directory of kcm-rs's serviceaccount.yaml and rbac.yaml")
	programs := flags.String("programs", strings.Join(conformance.Programs, ","), "the controller managers to run, in turn")
	controllers := flags.String("controllers", "", "the controllers each program runs (comma-separated)")
	flags.StringVar(&opts.Focus, "focus", "", "ginkgo's focus pattern")
	flags.StringVar(&opts.Skip, "skip", "", "ginkgo's skip pattern")
	limits := flags.String("limits", "", "the specs that fail on the testbed whatever the controller manager, with why")
	differences := flags.String("differences", "", "the specs kcm-rs fails on purpose, with why")
	flags.BoolVar(&opts.SkipListed, "skip-listed", false, "leave the specs of --limits and --differences out of the run")
	flags.IntVar(&opts.Nodes, "nodes", 3, "nodes each testbed seeds")
	flags.DurationVar(&opts.StartTimeout, "start-timeout", 3*time.Minute, "how long each component may take to start")
	flags.BoolVar(&opts.Provisioner, "provisioner", false, "give each testbed a default StorageClass served by a stand-in external provisioner")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	opts.Programs = strings.Split(*programs, ",")
	opts.Controllers = strings.Split(*controllers, ",")
	for name, value := range map[string]string{"--e2e": opts.E2E, "--ginkgo": opts.Ginkgo, "--controllers": *controllers, "--focus": opts.Focus} {
		if value == "" {
			fmt.Fprintf(os.Stderr, "testbed conformance: %s is required\n", name)
			return 2
		}
	}
	if opts.KcmRs == "" && slices.Contains(opts.Programs, conformance.KcmRs) {
		fmt.Fprintln(os.Stderr, "testbed conformance: --kcm-rs is required to run kcm-rs")
		return 2
	}
	var err error
	if opts.Limits, err = conformance.ReadList(*limits); err != nil {
		fmt.Fprintf(os.Stderr, "testbed conformance: %v\n", err)
		return 2
	}
	if opts.Differences, err = conformance.ReadList(*differences); err != nil {
		fmt.Fprintf(os.Stderr, "testbed conformance: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := conformance.Run(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "testbed conformance: %v\n", err)
		return 1
	}
	return 0
}
