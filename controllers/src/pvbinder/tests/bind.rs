//! `TestSync` cases 1-x (binding), 2-x (claims pre-bound to a volume),
//! 3-x (bound claims) and 13-x (classes), and the VolumeAttributesClass
//! cases with the gate on.

use super::*;

fn world() -> World {
    World { classes: vec![storage_class("wait", "kubernetes.io/mock", "WaitForFirstConsumer")], ..World::default() }
}

fn case(
    name: &'static str,
    volumes: Vec<PersistentVolume>,
    expected_volumes: Vec<PersistentVolume>,
    claims: Vec<PersistentVolumeClaim>,
    expected_claims: Vec<PersistentVolumeClaim>,
    events: &'static [&'static str],
) -> Case {
    Case { name, volumes, expected_volumes, claims, expected_claims, events, of_claim: true, fails: false }
}

#[test]
fn claims_bind_to_the_best_matching_volume() {
    let cases = [
        case(
            "1-1 - successful bind",
            vec![volume("volume1-1", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume1-1", "1Gi", "uid1-1", "claim1-1", "Bound", R, "", &[BY])],
            vec![claim("claim1-1", "uid1-1", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim1-1", "uid1-1", "1Gi", "volume1-1", "Bound", None, &[BY, DONE])],
            &[],
        ),
        case(
            "1-2 - noop",
            vec![volume("volume1-2", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume1-2", "1Gi", "", "", "Available", R, "", &[])],
            vec![claim("claim1-2", "uid1-2", "10Gi", "", "Pending", None, &[])],
            vec![claim("claim1-2", "uid1-2", "10Gi", "", "Pending", None, &[])],
            &["Normal FailedBinding"],
        ),
        case(
            "1-3 - reset to Pending",
            vec![volume("volume1-3", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume1-3", "1Gi", "", "", "Available", R, "", &[])],
            vec![claim("claim1-3", "uid1-3", "10Gi", "", "Bound", None, &[])],
            vec![claim("claim1-3", "uid1-3", "10Gi", "", "Pending", None, &[])],
            &["Normal FailedBinding"],
        ),
        case(
            "1-4 - smallest volume",
            vec![
                volume("volume1-4_1", "10Gi", "", "", "Available", R, "", &[]),
                volume("volume1-4_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![
                volume("volume1-4_1", "10Gi", "", "", "Available", R, "", &[]),
                volume("volume1-4_2", "1Gi", "uid1-4", "claim1-4", "Bound", R, "", &[BY]),
            ],
            vec![claim("claim1-4", "uid1-4", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim1-4", "uid1-4", "1Gi", "volume1-4_2", "Bound", None, &[BY, DONE])],
            &[],
        ),
        case(
            "1-5 - prebound volume by name - success",
            vec![
                volume("volume1-5_1", "10Gi", "", "claim1-5", "Available", R, "", &[]),
                volume("volume1-5_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![
                volume("volume1-5_1", "10Gi", "uid1-5", "claim1-5", "Bound", R, "", &[]),
                volume("volume1-5_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![claim("claim1-5", "uid1-5", "1Gi", "", "Pending", None, &[])],
            vec![with_capacity(claim("claim1-5", "uid1-5", "1Gi", "volume1-5_1", "Bound", None, &[BY, DONE]), "10Gi")],
            &[],
        ),
        case(
            "1-6 - prebound volume by UID - success",
            vec![
                volume("volume1-6_1", "10Gi", "uid1-6", "claim1-6", "Available", R, "", &[]),
                volume("volume1-6_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![
                volume("volume1-6_1", "10Gi", "uid1-6", "claim1-6", "Bound", R, "", &[]),
                volume("volume1-6_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![claim("claim1-6", "uid1-6", "1Gi", "", "Pending", None, &[])],
            vec![with_capacity(claim("claim1-6", "uid1-6", "1Gi", "volume1-6_1", "Bound", None, &[BY, DONE]), "10Gi")],
            &[],
        ),
        case(
            "1-7 - prebound volume to different claim",
            vec![volume("volume1-7", "10Gi", "uid1-777", "claim1-7", "Available", R, "", &[])],
            vec![volume("volume1-7", "10Gi", "uid1-777", "claim1-7", "Available", R, "", &[])],
            vec![claim("claim1-7", "uid1-7", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim1-7", "uid1-7", "1Gi", "", "Pending", None, &[])],
            &["Normal FailedBinding"],
        ),
        case(
            "1-8 - complete bind after crash - PV bound",
            vec![volume("volume1-8", "1Gi", "uid1-8", "claim1-8", "Available", R, "", &[BY])],
            vec![volume("volume1-8", "1Gi", "uid1-8", "claim1-8", "Bound", R, "", &[BY])],
            vec![claim("claim1-8", "uid1-8", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim1-8", "uid1-8", "1Gi", "volume1-8", "Bound", None, &[BY, DONE])],
            &[],
        ),
        case(
            "1-9 - complete bind after crash - PV status saved",
            vec![volume("volume1-9", "1Gi", "uid1-9", "claim1-9", "Bound", R, "", &[BY])],
            vec![volume("volume1-9", "1Gi", "uid1-9", "claim1-9", "Bound", R, "", &[BY])],
            vec![claim("claim1-9", "uid1-9", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim1-9", "uid1-9", "1Gi", "volume1-9", "Bound", None, &[BY, DONE])],
            &[],
        ),
        case(
            "1-10 - complete bind after crash - PVC bound",
            vec![volume("volume1-10", "1Gi", "uid1-10", "claim1-10", "Bound", R, "", &[BY])],
            vec![volume("volume1-10", "1Gi", "uid1-10", "claim1-10", "Bound", R, "", &[BY])],
            vec![claim("claim1-10", "uid1-10", "1Gi", "volume1-10", "Pending", None, &[BY, DONE])],
            vec![claim("claim1-10", "uid1-10", "1Gi", "volume1-10", "Bound", None, &[BY, DONE])],
            &[],
        ),
        case(
            "1-11 - bind when selector matches",
            vec![with_labels(volume("volume1-1", "1Gi", "", "", "Available", R, "", &[]))],
            vec![with_labels(volume("volume1-1", "1Gi", "uid1-1", "claim1-1", "Bound", R, "", &[BY]))],
            vec![with_selector(claim("claim1-1", "uid1-1", "1Gi", "", "Pending", None, &[]))],
            vec![with_selector(claim("claim1-1", "uid1-1", "1Gi", "volume1-1", "Bound", None, &[BY, DONE]))],
            &[],
        ),
        case(
            "1-12 - do not bind when selector does not match",
            vec![volume("volume1-1", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume1-1", "1Gi", "", "", "Available", R, "", &[])],
            vec![with_selector(claim("claim1-1", "uid1-1", "1Gi", "", "Pending", None, &[]))],
            vec![with_selector(claim("claim1-1", "uid1-1", "1Gi", "", "Pending", None, &[]))],
            &["Normal FailedBinding"],
        ),
        case(
            "1-13 - delayed binding",
            vec![volume("volume1-1", "1Gi", "", "", "Available", R, "wait", &[])],
            vec![volume("volume1-1", "1Gi", "", "", "Available", R, "wait", &[])],
            vec![claim("claim1-1", "uid1-1", "1Gi", "", "Pending", Some("wait"), &[])],
            vec![claim("claim1-1", "uid1-1", "1Gi", "", "Pending", Some("wait"), &[])],
            &["Normal WaitForFirstConsumer"],
        ),
        case(
            "1-14 - successful prebound PV",
            vec![volume("volume1-1", "1Gi", "", "claim1-1", "Available", R, "wait", &[])],
            vec![volume("volume1-1", "1Gi", "uid1-1", "claim1-1", "Bound", R, "wait", &[])],
            vec![claim("claim1-1", "uid1-1", "1Gi", "", "Pending", Some("wait"), &[])],
            vec![claim("claim1-1", "uid1-1", "1Gi", "volume1-1", "Bound", Some("wait"), &[BY, DONE])],
            &[],
        ),
        case(
            "1-15 - successful prebound PVC",
            vec![
                volume("volume1-15_1", "10Gi", "", "", "Available", R, "", &[]),
                volume("volume1-15_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![
                volume("volume1-15_1", "10Gi", "uid1-15", "claim1-15", "Bound", R, "", &[BY]),
                volume("volume1-15_2", "1Gi", "", "", "Available", R, "", &[]),
            ],
            vec![claim("claim1-15", "uid1-15", "1Gi", "volume1-15_1", "Pending", None, &[])],
            vec![with_capacity(claim("claim1-15", "uid1-15", "1Gi", "volume1-15_1", "Bound", None, &[DONE]), "10Gi")],
            &[],
        ),
        case(
            "1-16 - successful prebound PVC",
            vec![volume("volume1-16", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume1-16", "1Gi", "", "", "Available", R, "", &[])],
            vec![with_access_modes(
                claim("claim1-16", "uid1-16", "1Gi", "volume1-16", "Pending", None, &[]),
                &["ReadWriteMany"],
            )],
            vec![with_access_modes(
                claim("claim1-16", "uid1-16", "1Gi", "volume1-16", "Pending", None, &[]),
                &["ReadWriteMany"],
            )],
            &["Warning VolumeMismatch"],
        ),
        case(
            "1-17 - skip non-available PV if it's not pre-bind",
            vec![
                volume("volume1-17-pending", "1Gi", "", "", "Pending", R, "", &[]),
                volume("volume1-17-failed", "1Gi", "", "", "Failed", R, "", &[]),
                volume("volume1-17-released", "1Gi", "", "", "Released", R, "", &[]),
                volume("volume1-17-empty", "1Gi", "", "", "", R, "", &[]),
            ],
            vec![
                volume("volume1-17-pending", "1Gi", "", "", "Pending", R, "", &[]),
                volume("volume1-17-failed", "1Gi", "", "", "Failed", R, "", &[]),
                volume("volume1-17-released", "1Gi", "", "", "Released", R, "", &[]),
                volume("volume1-17-empty", "1Gi", "", "", "", R, "", &[]),
            ],
            vec![claim("claim1-17", "uid1-17", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim1-17", "uid1-17", "1Gi", "", "Pending", None, &[])],
            &["Normal FailedBinding"],
        ),
        case(
            "1-18 - successful pre-bound PV to PVC provisioning",
            vec![volume("volume1-18", "1Gi", "uid1-18", "claim1-18", "Available", R, "wait", &[])],
            vec![volume("volume1-18", "1Gi", "uid1-18", "claim1-18", "Bound", R, "wait", &[])],
            vec![with_annotation(
                claim("claim1-18", "uid1-18", "1Gi", "", "Pending", Some("wait"), &[]),
                ANN_SELECTED_NODE,
                "node1",
            )],
            vec![with_annotation(
                claim("claim1-18", "uid1-18", "1Gi", "volume1-18", "Bound", Some("wait"), &[BY, DONE]),
                ANN_SELECTED_NODE,
                "node1",
            )],
            &[],
        ),
    ];
    for case in cases {
        run(case, world());
    }
}

#[test]
fn claims_pre_bound_to_a_volume_bind_to_it_or_wait() {
    let failing = Case {
        fails: true,
        ..case(
            "2-7 - claim bound by controller to already bound volume",
            vec![volume("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", "Bound", R, "", &[])],
            vec![volume("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", "Bound", R, "", &[])],
            vec![claim("claim2-7", "uid2-7", "1Gi", "volume2-7", "Bound", None, &[BY])],
            vec![claim("claim2-7", "uid2-7", "1Gi", "volume2-7", "Bound", None, &[BY])],
            &["Warning FailedBinding"],
        )
    };
    let cases = [
        case(
            "2-1 - claim prebound to non-existing volume - noop",
            vec![],
            vec![],
            vec![claim("claim2-1", "uid2-1", "10Gi", "volume2-1", "Pending", None, &[])],
            vec![claim("claim2-1", "uid2-1", "10Gi", "volume2-1", "Pending", None, &[])],
            &[],
        ),
        case(
            "2-2 - claim prebound to non-existing volume - reset status",
            vec![],
            vec![],
            vec![claim("claim2-2", "uid2-2", "10Gi", "volume2-2", "Bound", None, &[])],
            vec![claim("claim2-2", "uid2-2", "10Gi", "volume2-2", "Pending", None, &[])],
            &[],
        ),
        case(
            "2-3 - claim prebound to unbound volume",
            vec![volume("volume2-3", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume2-3", "1Gi", "uid2-3", "claim2-3", "Bound", R, "", &[BY])],
            vec![claim("claim2-3", "uid2-3", "1Gi", "volume2-3", "Pending", None, &[])],
            vec![claim("claim2-3", "uid2-3", "1Gi", "volume2-3", "Bound", None, &[DONE])],
            &[],
        ),
        case(
            "2-4 - claim prebound to prebound volume by name",
            vec![volume("volume2-4", "1Gi", "", "claim2-4", "Available", R, "", &[])],
            vec![volume("volume2-4", "1Gi", "uid2-4", "claim2-4", "Bound", R, "", &[])],
            vec![claim("claim2-4", "uid2-4", "1Gi", "volume2-4", "Pending", None, &[])],
            vec![claim("claim2-4", "uid2-4", "1Gi", "volume2-4", "Bound", None, &[DONE])],
            &[],
        ),
        case(
            "2-5 - claim prebound to prebound volume by UID",
            vec![volume("volume2-5", "1Gi", "uid2-5", "claim2-5", "Available", R, "", &[])],
            vec![volume("volume2-5", "1Gi", "uid2-5", "claim2-5", "Bound", R, "", &[])],
            vec![claim("claim2-5", "uid2-5", "1Gi", "volume2-5", "Pending", None, &[])],
            vec![claim("claim2-5", "uid2-5", "1Gi", "volume2-5", "Bound", None, &[DONE])],
            &[],
        ),
        case(
            "2-6 - claim prebound to already bound volume",
            vec![volume("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", "Bound", R, "", &[])],
            vec![volume("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", "Bound", R, "", &[])],
            vec![claim("claim2-6", "uid2-6", "1Gi", "volume2-6", "Bound", None, &[])],
            vec![claim("claim2-6", "uid2-6", "1Gi", "volume2-6", "Pending", None, &[])],
            &["Warning FailedBinding"],
        ),
        failing,
        case(
            "2-8 - claim prebound to unbound volume that does not match the selector",
            vec![volume("volume2-8", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume2-8", "1Gi", "uid2-8", "claim2-8", "Bound", R, "", &[BY])],
            vec![with_selector(claim("claim2-8", "uid2-8", "1Gi", "volume2-8", "Pending", None, &[]))],
            vec![with_selector(claim("claim2-8", "uid2-8", "1Gi", "volume2-8", "Bound", None, &[DONE]))],
            &[],
        ),
        case(
            "2-9 - claim prebound to unbound volume that size is smaller than requested",
            vec![volume("volume2-9", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume2-9", "1Gi", "", "", "Available", R, "", &[])],
            vec![claim("claim2-9", "uid2-9", "2Gi", "volume2-9", "Bound", None, &[])],
            vec![claim("claim2-9", "uid2-9", "2Gi", "volume2-9", "Pending", None, &[])],
            &["Warning VolumeMismatch"],
        ),
        case(
            "2-10 - claim prebound to unbound volume that class is different",
            vec![volume("volume2-10", "1Gi", "1", "", "Available", R, "gold", &[])],
            vec![volume("volume2-10", "1Gi", "", "", "Available", R, "gold", &[])],
            vec![claim("claim2-10", "uid2-10", "1Gi", "volume2-10", "Bound", None, &[])],
            vec![claim("claim2-10", "uid2-10", "1Gi", "volume2-10", "Pending", None, &[])],
            &["Warning VolumeMismatch"],
        ),
    ];
    for case in cases {
        run(case, world());
    }
}

#[test]
fn bound_claims_are_kept_or_lost() {
    let cases = [
        case(
            "3-1 - bound claim with missing VolumeName",
            vec![],
            vec![],
            vec![claim("claim3-1", "uid3-1", "10Gi", "", "Bound", None, &[BY, DONE])],
            vec![claim("claim3-1", "uid3-1", "10Gi", "", "Lost", None, &[BY, DONE])],
            &["Warning ClaimLost"],
        ),
        case(
            "3-2 - bound claim with missing volume",
            vec![],
            vec![],
            vec![claim("claim3-2", "uid3-2", "10Gi", "volume3-2", "Bound", None, &[BY, DONE])],
            vec![claim("claim3-2", "uid3-2", "10Gi", "volume3-2", "Lost", None, &[BY, DONE])],
            &["Warning ClaimLost"],
        ),
        case(
            "3-3 - bound claim with unbound volume",
            vec![volume("volume3-3", "10Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume3-3", "10Gi", "uid3-3", "claim3-3", "Bound", R, "", &[BY])],
            vec![claim("claim3-3", "uid3-3", "10Gi", "volume3-3", "Pending", None, &[BY, DONE])],
            vec![claim("claim3-3", "uid3-3", "10Gi", "volume3-3", "Bound", None, &[BY, DONE])],
            &[],
        ),
        case(
            "3-4 - bound claim with prebound volume",
            vec![volume("volume3-4", "10Gi", "claim3-4-x", "claim3-4", "Available", R, "", &[])],
            vec![volume("volume3-4", "10Gi", "claim3-4-x", "claim3-4", "Available", R, "", &[])],
            vec![claim("claim3-4", "uid3-4", "10Gi", "volume3-4", "Pending", None, &[BY, DONE])],
            vec![claim("claim3-4", "uid3-4", "10Gi", "volume3-4", "Lost", None, &[BY, DONE])],
            &["Warning ClaimMisbound"],
        ),
        case(
            "3-5 - bound claim with bound volume",
            vec![volume("volume3-5", "10Gi", "uid3-5", "claim3-5", "Available", R, "", &[])],
            vec![volume("volume3-5", "10Gi", "uid3-5", "claim3-5", "Bound", R, "", &[])],
            vec![claim("claim3-5", "uid3-5", "10Gi", "volume3-5", "Pending", None, &[DONE])],
            vec![claim("claim3-5", "uid3-5", "10Gi", "volume3-5", "Bound", None, &[DONE])],
            &[],
        ),
        case(
            "3-6 - bound claim with bound volume",
            vec![volume("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", "Available", R, "", &[])],
            vec![volume("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", "Available", R, "", &[])],
            vec![claim("claim3-6", "uid3-6", "10Gi", "volume3-6", "Pending", None, &[DONE])],
            vec![claim("claim3-6", "uid3-6", "10Gi", "volume3-6", "Lost", None, &[DONE])],
            &["Warning ClaimMisbound"],
        ),
        case(
            "3-7 - bound claim with unbound volume where selector doesn't match",
            vec![volume("volume3-3", "10Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume3-3", "10Gi", "uid3-3", "claim3-3", "Bound", R, "", &[BY])],
            vec![with_selector(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", "Pending", None, &[BY, DONE]))],
            vec![with_selector(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", "Bound", None, &[BY, DONE]))],
            &[],
        ),
    ];
    for case in cases {
        run(case, world());
    }
}

#[test]
fn claims_bind_within_their_class() {
    let cases = [
        case(
            "13-1 - binding to class",
            vec![
                volume("volume13-1-1", "1Gi", "", "", "Available", R, "", &[]),
                volume("volume13-1-2", "10Gi", "", "", "Available", R, "gold", &[]),
            ],
            vec![
                volume("volume13-1-1", "1Gi", "", "", "Available", R, "", &[]),
                volume("volume13-1-2", "10Gi", "uid13-1", "claim13-1", "Bound", R, "gold", &[BY]),
            ],
            vec![claim("claim13-1", "uid13-1", "1Gi", "", "Pending", Some("gold"), &[])],
            vec![with_capacity(
                claim("claim13-1", "uid13-1", "1Gi", "volume13-1-2", "Bound", Some("gold"), &[BY, DONE]),
                "10Gi",
            )],
            &[],
        ),
        case(
            "13-2 - binding without a class",
            vec![
                volume("volume13-2-1", "1Gi", "", "", "Available", R, "gold", &[]),
                volume("volume13-2-2", "10Gi", "", "", "Available", R, "", &[]),
            ],
            vec![
                volume("volume13-2-1", "1Gi", "", "", "Available", R, "gold", &[]),
                volume("volume13-2-2", "10Gi", "uid13-2", "claim13-2", "Bound", R, "", &[BY]),
            ],
            vec![claim("claim13-2", "uid13-2", "1Gi", "", "Pending", None, &[])],
            vec![with_capacity(
                claim("claim13-2", "uid13-2", "1Gi", "volume13-2-2", "Bound", None, &[BY, DONE]),
                "10Gi",
            )],
            &[],
        ),
        case(
            "13-3 - binding to specific a class",
            vec![
                volume("volume13-3-1", "1Gi", "", "", "Available", R, "silver", &[]),
                volume("volume13-3-2", "10Gi", "", "", "Available", R, "gold", &[]),
            ],
            vec![
                volume("volume13-3-1", "1Gi", "", "", "Available", R, "silver", &[]),
                volume("volume13-3-2", "10Gi", "uid13-3", "claim13-3", "Bound", R, "gold", &[BY]),
            ],
            vec![claim("claim13-3", "uid13-3", "1Gi", "", "Pending", Some("gold"), &[])],
            vec![with_capacity(
                claim("claim13-3", "uid13-3", "1Gi", "volume13-3-2", "Bound", Some("gold"), &[BY, DONE]),
                "10Gi",
            )],
            &[],
        ),
        case(
            "13-4 - empty class",
            vec![volume("volume13-4", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume13-4", "1Gi", "uid13-4", "claim13-4", "Bound", R, "", &[BY])],
            vec![claim("claim13-4", "uid13-4", "1Gi", "", "Pending", Some(""), &[])],
            vec![claim("claim13-4", "uid13-4", "1Gi", "volume13-4", "Bound", Some(""), &[BY, DONE])],
            &[],
        ),
        case(
            "13-5 - nil class",
            vec![volume("volume13-5", "1Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume13-5", "1Gi", "uid13-5", "claim13-5", "Bound", R, "", &[BY])],
            vec![claim("claim13-5", "uid13-5", "1Gi", "", "Pending", None, &[])],
            vec![claim("claim13-5", "uid13-5", "1Gi", "volume13-5", "Bound", None, &[BY, DONE])],
            &[],
        ),
    ];
    for case in cases {
        run(case, world());
    }
}

#[test]
fn a_bound_claim_whose_volume_the_cache_lacks_reads_it_before_calling_itself_lost() {
    // Its volume was created and the claim bound at once by a provisioner:
    // the volume's watch event has not arrived.
    let mut world = world();
    let volume = volume("volume3-8", "10Gi", "uid3-8", "claim3-8", "Bound", R, "", &[BY]);
    world.unseen_volumes.insert("volume3-8".to_owned(), volume);
    let bound = claim("claim3-8", "uid3-8", "10Gi", "volume3-8", "Bound", None, &[BY, DONE]);
    world.claims.insert(claim_key(&bound), bound.clone());
    world.sync(|view, cx| sync_claim(view, &bound, SETTINGS, cx)).unwrap();
    assert_eq!(claim_phase(&world.claims[&claim_key(&bound)]), "Bound");
    assert!(world.events.is_empty(), "{:?}", world.events);
}
