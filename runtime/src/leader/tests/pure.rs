//! Pure tests: no server, no election running.

use super::*;

#[test]
fn config_validation_follows_client_go() {
    let ok = config("a", "l");
    assert!(ok.validate().is_ok());
    assert!(LeaderElectionConfig::new("a").validate().is_ok());
    let cases = [
        (
            LeaderElectionConfig { lease_duration: ok.renew_deadline, ..ok.clone() },
            "leaseDuration must be greater than renewDeadline",
        ),
        // 1.2 × 500 ms = 600 ms: not strictly greater.
        (
            LeaderElectionConfig { renew_deadline: Duration::from_millis(600), ..ok.clone() },
            "renewDeadline must be greater than retryPeriod*JitterFactor",
        ),
        (LeaderElectionConfig { retry_period: Duration::ZERO, ..ok.clone() }, "retryPeriod must be greater than zero"),
        (LeaderElectionConfig { identity: String::new(), ..ok.clone() }, "leader election identity is empty"),
        (
            LeaderElectionConfig { lease_name: String::new(), ..ok.clone() },
            "leader election lease name and namespace must not be empty",
        ),
    ];
    for (config, expected) in cases {
        assert_eq!(config.validate().unwrap_err().to_string(), expected, "{config:?}");
    }
}

#[test]
fn default_identity_is_hostname_and_uuid() {
    let id = default_identity();
    let (host, uuid) = id.rsplit_once('_').unwrap();
    assert!(!host.is_empty());
    assert!(uuid::Uuid::parse_str(uuid).is_ok(), "{id}");
    assert_ne!(default_identity(), id);
}

#[test]
fn jitter_stays_within_client_go_bounds() {
    let period = Duration::from_secs(2);
    assert_eq!(jittered(period, JITTER_FACTOR, 0.0), period);
    assert_eq!(jittered(period, JITTER_FACTOR, 0.5), Duration::from_millis(3200));
    let mut source = Jitter::from_entropy();
    for _ in 0..1000 {
        let sample = source.unit();
        assert!((0.0..1.0).contains(&sample));
        let d = jittered(period, JITTER_FACTOR, sample);
        assert!(d >= period && d < period.mul_f64(2.2));
    }
}

#[test]
fn record_round_trips_through_the_spec() {
    let now = Timestamp::now();
    let record = Record {
        holder: "a".into(),
        lease_duration_seconds: 15,
        acquire_time: Some(now),
        renew_time: Some(now),
        transitions: 3,
    };
    assert_eq!(Record::from_spec(Some(&record.to_spec())), record);
    assert_eq!(Record::from_spec(None), Record::default());
}

#[tokio::test]
async fn health_fails_only_for_a_holder_overdue_on_renewal() {
    let (status, _) = watch::channel(Status::default());
    let observed_at = Instant::now();
    let shared = Arc::new(Shared {
        identity: "me".into(),
        lease_name: "l".into(),
        observed: Mutex::new(Observed {
            record: Record { holder: "other".into(), ..Record::default() },
            time: observed_at,
        }),
        status,
    });
    let health =
        LeaderHealth { shared: shared.clone(), lease_duration: Duration::from_secs(15), timeout: Duration::ZERO }
            .with_timeout(LeaderHealth::DEFAULT_TIMEOUT);
    let late = observed_at + Duration::from_secs(36);
    // Not the holder: always healthy.
    assert!(health.check_at(late).is_ok());
    shared.observed.lock().unwrap().record.holder = "me".into();
    assert!(health.check_at(observed_at + Duration::from_secs(35)).is_ok());
    assert!(matches!(health.check_at(late), Err(Error::RenewOverdue(name)) if name == "l"));
}

#[test]
fn metrics_register_once_per_registry() {
    let registry = Registry::new();
    assert!(LeaderMetrics::register(&registry).is_ok());
    assert!(matches!(LeaderMetrics::register(&registry), Err(Error::Metrics(_))));
}

#[test]
fn the_write_window_is_the_written_lease_scaled_by_renew_over_lease() {
    let window = |lease: u64, renew: u64| {
        let config = LeaderElectionConfig {
            lease_duration: Duration::from_millis(lease),
            renew_deadline: Duration::from_millis(renew),
            ..LeaderElectionConfig::new("a")
        };
        config.write_window()
    };
    // Upstream's defaults: 15 s and 10 s.
    assert_eq!(LeaderElectionConfig::new("a").write_window(), Duration::from_secs(10));
    assert_eq!(window(2000, 1500), Duration::from_millis(1500));
    // 2.5 s is written as 2 s: standbys wait 2 s, so the window is 2 × 0.8.
    assert_eq!(window(2500, 2000), Duration::from_millis(1600));
    // Written as 0 s: a standby may take it at once, so never open.
    assert_eq!(window(900, 500), Duration::ZERO);
}
