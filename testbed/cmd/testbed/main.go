// Command testbed is a real Kubernetes control plane for kcm-rs's tests
// and benchmarks, built from upstream's Go modules:
//
//	testbed up --dir DIR [--nodes N] [--audit] [--stop-on-stdin-eof] [--remove-dir]
//
// brings up etcd, kube-apiserver 1.37, kube-scheduler and kwok (playing
// the nodes' kubelets) on loopback, writes DIR/testbed.json (the server,
// the admin and controller-manager kubeconfigs, the pki directory),
// prints "testbed: ready DIR/testbed.json", and runs until SIGTERM or
// SIGINT (or, with --stop-on-stdin-eof, the end of its standard input: a
// parent that dies closes it), then stops them all and, with --remove-dir,
// removes DIR unless something failed (for a parent that may not outlive
// it to clean up). A
// component that fails to start, or exits, ends it with that component's
// log tail. Each component also runs on its own, as upstream's command
// does:
//
//	testbed etcd|kube-apiserver|kube-scheduler|kube-controller-manager|kwok [ARGS]
//
// and
//
//	testbed conformance --e2e E2E --ginkgo GINKGO --kcm-rs KCM_RS --controllers LIST [...]
//
// runs upstream's e2e suite with kube-controller-manager and with kcm-rs,
// each on a fresh testbed, and writes the table of their results
// (scripts/conformance builds what it needs and runs it).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-rs/kcm-rs/testbed/internal/cluster"
	"github.com/kcm-rs/kcm-rs/testbed/internal/components"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	switch os.Args[1] {
	case "up":
		os.Exit(up(os.Args[2:]))
	case "conformance":
		os.Exit(runConformance(os.Args[2:]))
	}
	code, ok := components.Run(os.Args[1], os.Args[2:])
	if !ok {
		usage()
		os.Exit(2)
	}
	os.Exit(code)
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: testbed up --dir DIR [--nodes N] [--audit] [--stop-on-stdin-eof] [--remove-dir]\n       testbed conformance --e2e E2E --ginkgo GINKGO --kcm-rs KCM_RS --controllers LIST [...]\n       testbed %s [ARGS]\n",
		strings.Join(components.Names, "|"))
}

func up(args []string) int {
	flags := flag.NewFlagSet("up", flag.ContinueOnError)
	opts := cluster.Options{}
	flags.StringVar(&opts.Dir, "dir", "", "where the certificates, kubeconfigs, etcd data and logs go")
	flags.IntVar(&opts.Nodes, "nodes", 3, "how many nodes to seed (node-1 ..)")
	flags.BoolVar(&opts.Audit, "audit", false, "write kube-apiserver's audit log to DIR/audit.log")
	stdinEOF := flags.Bool("stop-on-stdin-eof", false, "stop when standard input ends")
	removeDir := flags.Bool("remove-dir", false, "remove DIR once everything has stopped")
	flags.DurationVar(&opts.StartTimeout, "start-timeout", 3*time.Minute, "how long each component may take to start")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if opts.Dir == "" {
		fmt.Fprintln(os.Stderr, "testbed up: --dir is required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *stdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}
	code := serve(ctx, opts)
	// A failed run keeps DIR: its logs say why.
	if code == 0 && *removeDir {
		if err := os.RemoveAll(opts.Dir); err != nil {
			fmt.Fprintf(os.Stderr, "testbed: %v\n", err)
			return 1
		}
	}
	return code
}

// serve brings the control plane up and runs it until ctx ends.
func serve(ctx context.Context, opts cluster.Options) int {
	c, err := cluster.Up(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbed: %v\n", err)
		return 1
	}
	defer c.Down()
	fmt.Printf("testbed: ready %s/testbed.json\n", opts.Dir)
	if err := c.Wait(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: %v\n", err)
		return 1
	}
	return 0
}
