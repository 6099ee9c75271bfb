// Package components runs one control-plane program in this process, as
// its own upstream command would: kube-apiserver, kube-scheduler and
// kube-controller-manager from k8s.io/kubernetes, kwok's controller from
// sigs.k8s.io/kwok, and etcd from go.etcd.io/etcd/server/v3's embed
// package. The testbed starts each as a child process of itself.
package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/cli"
	// The JSON log format, as each of the three commands' main registers it
	// (its --log-json-* flags among them).
	_ "k8s.io/component-base/logs/json/register"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwok "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
)

// Names are the programs Run knows, as the testbed's subcommands.
var Names = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok"}

// Run runs the program called name with these arguments and returns its
// exit code; ok is false when no program has that name.
func Run(name string, args []string) (code int, ok bool) {
	switch name {
	case "etcd":
		return runEtcd(args), true
	case "kube-apiserver":
		return runCobra(apiserver.NewAPIServerCommand(), args), true
	case "kube-scheduler":
		return runCobra(scheduler.NewSchedulerCommand(), args), true
	case "kube-controller-manager":
		return runCobra(controllermanager.NewControllerManagerCommand(), args), true
	case "kwok":
		return runKwok(args), true
	}
	return 0, false
}

// runCobra runs one of Kubernetes' component commands as its main does.
func runCobra(cmd *cobra.Command, args []string) int {
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// runKwok runs kwok's controller as kwok's own main does: its global log
// and config flags, then its command.
func runKwok(args []string) int {
	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.ParseErrorsAllowlist.UnknownFlags = true
	global.Usage = func() {}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Args = append([]string{"kwok"}, args...)
	ctx, logger := kwoklog.InitFlags(ctx, global)
	ctx, err := kwokconfig.InitFlags(ctx, global)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kwok: reading its configuration: %v\n", err)
		return 1
	}
	cmd := kwok.NewCommand(ctx)
	// kube-apiserver's packages register a global --version flag of their
	// own kind, which cobra's version flag (a bool) would collide with.
	cmd.Version = ""
	cmd.PersistentFlags().AddFlagSet(global)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		logger.Error("kwok exited", "err", err)
		return 1
	}
	return 0
}
