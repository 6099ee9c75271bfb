// Package nodes gives the testbed its nodes: Node objects as kube-sim seeds
// them (node-1 .. node-N, each with its own pod range), and kwok's
// controller to play their kubelets, with kwok's own node stages
// (initialize, heartbeat with a Lease) and the pod stages of
// pod-stages.yaml.
package nodes

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	heartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
)

//go:embed pod-stages.yaml
var podStages string

// LeaseDurationSeconds is the node Lease's duration kwok writes and renews,
// the kubelet's default.
const LeaseDurationSeconds = 40

// WriteStages writes kwok's configuration: its node stages and ours for pods.
func WriteStages(path string) error {
	docs := []string{nodefast.DefaultNodeInit, heartbeat.DefaultNodeHeartbeatWithLease, podStages}
	for i, d := range docs {
		docs[i] = strings.TrimSpace(d)
	}
	return os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644)
}

// Create makes nodes node-1 .. node-count as kube-sim seeds them: the
// well-known labels (zones zone-a, zone-b, zone-c in turn, region sim),
// pod range 10.244.<i>.0/24, address 10.0.0.<i>, and a kubelet's default
// capacity of 110 pods on 8 CPUs and 32Gi.
func Create(ctx context.Context, client kubernetes.Interface, count int) error {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	for i := 1; i <= count; i++ {
		name := fmt.Sprintf("node-%d", i)
		// 10.244.i.0/24 for the first 255 nodes, then on into 10.245.0.0/16.
		cidr := fmt.Sprintf("10.%d.%d.0/24", 244+i/256, i%256)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					corev1.LabelHostname:       name,
					corev1.LabelOSStable:       "linux",
					corev1.LabelArchStable:     "amd64",
					"beta.kubernetes.io/os":    "linux",
					"beta.kubernetes.io/arch":  "amd64",
					corev1.LabelTopologyZone:   zones[(i-1)%len(zones)],
					corev1.LabelTopologyRegion: "sim",
				},
			},
			Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		}
		created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		// What its kubelet reports at registration (kwok keeps it).
		created.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/256, i%256)},
			{Type: corev1.NodeHostName, Address: name},
		}
		created.Status.Capacity = capacity
		created.Status.Allocatable = capacity
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("writing node %s's status: %w", name, err)
		}
	}
	return nil
}

// Ready counts the nodes whose Ready condition is True.
func Ready(ctx context.Context, client kubernetes.Interface) (int, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	ready := 0
	for _, node := range list.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, nil
}
