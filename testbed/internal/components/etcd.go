package components

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd: --data-dir, --listen-client-url,
// --listen-peer-url. Its data is the testbed's to throw away, so writes
// are not synced to disk.
func runEtcd(args []string) int {
	flags := flag.NewFlagSet("etcd", flag.ContinueOnError)
	dataDir := flags.String("data-dir", "", "the member's data directory")
	client := flags.String("listen-client-url", "", "the client URL, http://127.0.0.1:<port>")
	peer := flags.String("listen-peer-url", "", "the peer URL, http://127.0.0.1:<port>")
	quota := flags.Int64("quota-backend-bytes", 8<<30, "the backend's size limit")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	clientURL, err := url.Parse(*client)
	if err != nil || *client == "" {
		fmt.Fprintf(os.Stderr, "etcd: --listen-client-url %q: %v\n", *client, err)
		return 2
	}
	peerURL, err := url.Parse(*peer)
	if err != nil || *peer == "" {
		fmt.Fprintf(os.Stderr, "etcd: --listen-peer-url %q: %v\n", *peer, err)
		return 2
	}
	cfg := embed.NewConfig()
	cfg.Name = "testbed"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.QuotaBackendBytes = *quota
	cfg.LogLevel = "warn"
	server, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
	defer server.Close()
	select {
	case <-server.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		return 1
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-signals:
		return 0
	case err := <-server.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
}
