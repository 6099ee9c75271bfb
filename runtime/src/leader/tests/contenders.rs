//! Contenders racing for one Lease on kube-sim, in real time.

use super::*;

#[tokio::test]
async fn two_contenders_exactly_one_leads() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    // Both start together: they race to create the Lease.
    let mut a = Contender::start(&client, config("a", "one"), &leaders);
    let mut b = Contender::start(&client, config("b", "one"), &leaders);
    tokio::select! {
        () = a.wait_leading() => {}
        () = b.wait_leading() => {}
    }
    let (leader, standby) = if a.leading() { (&a, &mut b) } else { (&b, &mut a) };
    let holder = leader.identity.clone();
    let record = lease(&client, "one").await;
    assert_eq!(record.holder, holder);
    assert_eq!(record.transitions, 0);
    wait_status(&mut standby.status, |s| s.leader.as_deref() == Some(holder.as_str())).await;
    // The leader renews for several lease durations; the standby keeps
    // retrying and never leads.
    wait_renewals(&client, "one", 10).await;
    assert!(!standby.leading());
    assert_eq!(leaders.max(), 1);
    assert_eq!(lease(&client, "one").await.holder, holder);
    assert!(leader.health.healthy() && standby.health.healthy());
}

#[tokio::test]
async fn standby_takes_over_after_expiry_when_the_leader_dies() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    let (a, mut b) = leader_and_standby(&client, config("a", "kill"), config("b", "kill"), &leaders).await;
    let before = lease(&client, "kill").await;
    // SIGKILL: no release, the Lease just stops changing.
    a.run.abort();
    // Dropping the run aborted the leading task and told its helpers.
    wait_until(|| a.stop_reason.lock().unwrap().is_some()).await;
    assert_eq!(*a.stop_reason.lock().unwrap(), Some(StopReason::Lost));
    b.wait_leading().await;
    let after = lease(&client, "kill").await;
    assert_eq!(after.holder, "b");
    assert_eq!(after.transitions, before.transitions + 1);
    assert_ne!(after.acquire_time, before.acquire_time);
    assert_eq!(after.lease_duration_seconds, 2);
    assert_eq!(leaders.max(), 1);
    // Renewals keep acquireTime and transitions.
    wait_renewals(&client, "kill", 2).await;
    let renewed = lease(&client, "kill").await;
    assert_eq!((renewed.acquire_time, renewed.transitions), (after.acquire_time, after.transitions));
    assert_ne!(renewed.renew_time, after.renew_time);
}

#[tokio::test]
async fn release_hands_over_at_once() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    // A 60 s lease: only the release can explain a takeover within
    // PATIENCE (30 s).
    let long = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(60), ..config(id, "term") };
    let (mut a, mut b) = leader_and_standby(&client, long("a"), long("b"), &leaders).await;
    a.shutdown();
    b.wait_leading().await;
    assert_eq!(*a.stop_reason.lock().unwrap(), Some(StopReason::Shutdown));
    assert!(!a.leading());
    assert_eq!(a.outcome().await, Outcome::SteppedDown { released: true });
    let record = lease(&client, "term").await;
    assert_eq!(record.holder, "b");
    assert_eq!(record.transitions, 1);
    assert_eq!(leaders.max(), 1);
}

#[tokio::test]
async fn release_writes_an_empty_holder_that_is_free_at_once() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    let long = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(60), ..config(id, "free") };
    let mut a = Contender::start(&client, long("a"), &leaders);
    a.wait_leading().await;
    let held = lease(&client, "free").await;
    a.shutdown();
    assert_eq!(a.outcome().await, Outcome::SteppedDown { released: true });
    let released = lease(&client, "free").await;
    assert_eq!(released.holder, "");
    assert_eq!(released.lease_duration_seconds, 1);
    assert_eq!(released.transitions, held.transitions);
    assert_eq!(released.acquire_time, released.renew_time);
    // A newcomer (who never saw the record before) takes it at once.
    let mut b = Contender::start(&client, long("b"), &leaders);
    b.wait_leading().await;
    assert_eq!(lease(&client, "free").await.transitions, held.transitions + 1);
}

#[tokio::test]
async fn shutdown_while_standing_by_writes_nothing() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    let (_a, mut b) = leader_and_standby(&client, config("a", "idle"), config("b", "idle"), &leaders).await;
    b.shutdown();
    assert_eq!(b.outcome().await, Outcome::NeverLed);
    assert_eq!(lease(&client, "idle").await.holder, "a");
}

#[tokio::test]
async fn renew_failures_past_the_deadline_lose_leadership() {
    let (sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    let mut a = Contender::start(&client, config("a", "faulty"), &leaders);
    a.wait_leading().await;
    assert!(a.health.healthy());
    sim.controls()
        .set_faults(FaultSpec {
            rules: vec![FaultRule {
                verb: Some("update".into()),
                resource: Some("leases".into()),
                error_rate: 1.0,
                ..FaultRule::default()
            }],
        })
        .unwrap();
    wait_status(&mut a.status, |s| !s.leading).await;
    assert_eq!(a.master_status(), 0);
    let health = a.health.clone();
    let reason = a.stop_reason.clone();
    assert_eq!(a.outcome().await, Outcome::Lost);
    wait_until(|| reason.lock().unwrap().is_some()).await;
    assert_eq!(*reason.lock().unwrap(), Some(StopReason::Lost));
    assert_eq!(leaders.now.load(Ordering::SeqCst), 0, "the leading task was aborted");
    // A holder that lost but did not exit turns unhealthy after
    // lease duration + timeout.
    assert!(health.check_at(Instant::now() + Duration::from_secs(23)).is_err());
}

#[tokio::test]
async fn a_foreign_write_means_no_double_leadership() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    // A 3 s lease leaves a clear margin between the leader giving up
    // (within retry + renew deadline = 2 s) and a standby taking over.
    let cfg = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(3), ..config(id, "race") };
    let (mut a, mut b) = leader_and_standby(&client, cfg("a"), cfg("b"), &leaders).await;
    // An intruder takes the Lease between two renewals and keeps it
    // for a while: a's cached resourceVersion is now stale (409).
    let api = Api::<Lease>::namespaced(client.clone(), NS);
    let intruder = tokio::spawn(async move {
        for _ in 0..16 {
            let mut lease = api.get("race").await.unwrap();
            let now = Timestamp::now();
            let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
            spec.holder_identity = Some("intruder".into());
            spec.renew_time = Some(MicroTime(now));
            let _ = api.replace("race", &PostParams::default(), &lease).await;
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    wait_status(&mut a.status, |s| !s.leading).await;
    assert!(!b.leading());
    intruder.await.unwrap();
    // Once the intruder stops, the standby takes over after expiry.
    b.wait_leading().await;
    assert_eq!(lease(&client, "race").await.holder, "b");
    assert_eq!(a.outcome().await, Outcome::Lost);
    assert_eq!(leaders.max(), 1);
}

#[tokio::test]
async fn master_status_follows_leadership() {
    let (_sim, client) = sim().await;
    let leaders = Arc::new(Leaders::default());
    let long = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(60), ..config(id, "metric") };
    let (mut a, mut b) = leader_and_standby(&client, long("a"), long("b"), &leaders).await;
    assert_eq!((a.master_status(), b.master_status()), (1, 0));
    a.shutdown();
    b.wait_leading().await;
    assert_eq!((a.master_status(), b.master_status()), (0, 1));
    assert_eq!(a.outcome().await, Outcome::SteppedDown { released: true });
    let b_registry = b.registry.clone();
    b.shutdown();
    assert_eq!(b.outcome().await, Outcome::SteppedDown { released: true });
    let b_status = b_registry
        .gather()
        .iter()
        .filter(|f| f.name() == "leader_election_master_status")
        .flat_map(|f| f.get_metric())
        .map(|m| m.get_gauge().get_value())
        .collect::<Vec<_>>();
    assert_eq!(b_status, vec![0.0]);
}
