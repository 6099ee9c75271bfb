// Package provisioner is the conformance runner's stand-in external
// provisioner: upstream's storage e2e specs that ask for a default
// StorageClass and dynamically provisioned volumes (PVC Protection, the
// binder's provisioning) get them on a testbed that has no volume plugin,
// as upstream's own e2e plays a CSI driver with its mock.
//
// It makes the default StorageClass Class of provisioner Name (Immediate
// binding, reclaim policy Delete), and then does what an external
// provisioner does with it:
//   - a claim the PV controller has annotated for Name
//     (volume.kubernetes.io/storage-provisioner) and not bound gets the
//     volume pvc-<uid>: a hostPath volume under /tmp with the claim's
//     requested storage, access modes, volume mode and class, the class's
//     reclaim policy, pv.kubernetes.io/provisioned-by and a claimRef naming
//     the claim and its uid; the PV controller then binds the claim to it;
//   - a volume of its own that the PV controller released under the
//     reclaim policy Delete is deleted.
//
// Nothing is written under /tmp: kwok's nodes run no container, so no
// volume is ever mounted.
package provisioner

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Name is the provisioner's name, in its class and on its volumes.
const Name = "testbed.kcm-rs.io/provisioner"

// Class is the default StorageClass it serves.
const Class = "standard"

const (
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
	annDefaultClass       = "storageclass.kubernetes.io/is-default-class"
	// resync is how often every claim and volume is looked at again, so
	// that a write that failed is tried again.
	resync = 10 * time.Second
)

// Run makes the default class, then provisions and deletes volumes until
// ctx ends. The error is the class's creation failing.
func Run(ctx context.Context, client kubernetes.Interface) error {
	if err := ensureClass(ctx, client); err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, resync)
	claims := factory.Core().V1().PersistentVolumeClaims().Informer()
	volumes := factory.Core().V1().PersistentVolumes().Informer()
	onClaim := func(obj any) {
		if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
			provision(ctx, client, claim)
		}
	}
	onVolume := func(obj any) {
		if volume, ok := obj.(*v1.PersistentVolume); ok {
			reclaim(ctx, client, volume)
		}
	}
	if _, err := claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onClaim,
		UpdateFunc: func(_, obj any) { onClaim(obj) },
	}); err != nil {
		return err
	}
	if _, err := volumes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onVolume,
		UpdateFunc: func(_, obj any) { onVolume(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	return nil
}

// ensureClass creates the default class unless it is there.
func ensureClass(ctx context.Context, client kubernetes.Interface) error {
	immediate := storagev1.VolumeBindingImmediate
	deleted := v1.PersistentVolumeReclaimDelete
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: Class, Annotations: map[string]string{annDefaultClass: "true"}},
		Provisioner:       Name,
		ReclaimPolicy:     &deleted,
		VolumeBindingMode: &immediate,
	}
	_, err := client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the default StorageClass %s: %w", Class, err)
	}
	return nil
}

// provision creates the volume of a claim annotated for Name.
func provision(ctx context.Context, client kubernetes.Interface, claim *v1.PersistentVolumeClaim) {
	if claim.Annotations[annStorageProvisioner] != Name || claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil {
		return
	}
	name := "pvc-" + string(claim.UID)
	policy := v1.PersistentVolumeReclaimDelete
	if class := claim.Spec.StorageClassName; class != nil {
		if sc, err := client.StorageV1().StorageClasses().Get(ctx, *class, metav1.GetOptions{}); err == nil && sc.ReclaimPolicy != nil {
			policy = *sc.ReclaimPolicy
		}
	}
	volume := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: Name}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/tmp/testbed-provisioner/" + name},
			},
			ClaimRef: &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
		},
	}
	if claim.Spec.StorageClassName != nil {
		volume.Spec.StorageClassName = *claim.Spec.StorageClassName
	}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, volume, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fmt.Printf("provisioner: volume %s for claim %s/%s: %v\n", name, claim.Namespace, claim.Name, err)
	}
}

// reclaim deletes a released volume of its own under policy Delete.
func reclaim(ctx context.Context, client kubernetes.Interface, volume *v1.PersistentVolume) {
	ours := volume.Annotations[annProvisionedBy] == Name
	released := volume.Status.Phase == v1.VolumeReleased
	if !ours || !released || volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || volume.DeletionTimestamp != nil {
		return
	}
	err := client.CoreV1().PersistentVolumes().Delete(ctx, volume.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		fmt.Printf("provisioner: deleting volume %s: %v\n", volume.Name, err)
	}
}
