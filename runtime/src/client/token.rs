//! One ServiceAccount's bearer token, obtained and cached as
//! kube-controller-manager's `DynamicControllerClientBuilder` does
//! (controller-manager's `pkg/clientbuilder/client_builder_dynamic.go`, over
//! client-go's caching token source in `transport/token_source.go`):
//!
//! - a token is asked for when a request needs one and none is cached, or
//!   the cached one is due: it is refreshed lazily, by the first request
//!   after its refresh time;
//! - its refresh time is 80% of its lifetime (a leeway of 20%): a token of
//!   an hour (the 3600 s kcm-rs asks for) is replaced after 48 minutes; a
//!   lifetime under 10 minutes (clock skew) counts as 10 minutes, so such a
//!   token is replaced after 8;
//! - one attempt is: make sure the ServiceAccount exists, then a
//!   TokenRequest. Up to 4 attempts, 0.5 s, 1 s then 2 s apart; when all
//!   fail and a token is cached, the cached one is used (it is still valid:
//!   20% of its life remains) and the failure logged, otherwise the request
//!   fails with [`TokenError`], naming the ServiceAccount;
//! - a request answered 401 drops the token it was sent with, unless a
//!   newer one has been obtained since it was sent.
//!
//! What an attempt does is the caller's ([`Fetch`]; the TokenRequest API in
//! `account.rs`); this module owns the schedule and the cache, on tokio's
//! clock so that tests run it on a paused one.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http::HeaderValue;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tower::BoxError;

/// The share of a token's lifetime left when it is replaced (upstream's
/// `defaultLeewayPercent`).
pub const LEEWAY_PERCENT: u32 = 20;

/// A lifetime shorter than this is taken as this (upstream: "possible clock
/// skew issue, pin to minimum token lifetime").
pub const MIN_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// Attempts per token, and the wait before the second (doubled after each
/// failure): upstream's `wait.Backoff{Duration: 500ms, Factor: 2, Steps: 4}`.
const ATTEMPTS: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// A token as the API server issued it.
#[derive(Clone, PartialEq, Eq)]
pub struct Issued {
    /// The bearer token.
    pub token: String,
    /// How long it lives from now: its expiration timestamp minus the
    /// local wall clock.
    pub lifetime: Duration,
}

impl fmt::Debug for Issued {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Issued").field("lifetime", &self.lifetime).finish_non_exhaustive()
    }
}

/// One attempt at a token: what [`TokenSource`] calls, up to 4 times in a
/// row, each time it needs one.
pub type Fetch = Arc<dyn Fn() -> BoxFuture<'static, Result<Issued, BoxError>> + Send + Sync>;

/// No token could be obtained and none is cached.
#[derive(Debug, thiserror::Error)]
#[error("failed to get token for {account}")]
pub struct TokenError {
    /// The ServiceAccount, `namespace/name`.
    pub account: String,
    /// Why the last attempt failed.
    #[source]
    pub source: BoxError,
}

/// How long a token of `lifetime` is used before it is replaced: its
/// lifetime (at least [`MIN_LIFETIME`]) less [`LEEWAY_PERCENT`] of it.
pub fn refresh_after(lifetime: Duration) -> Duration {
    let lifetime = lifetime.max(MIN_LIFETIME);
    lifetime - lifetime * LEEWAY_PERCENT / 100
}

/// A cached token.
struct Cached {
    header: HeaderValue,
    /// When it is replaced (the next request after this asks for a new one).
    refresh_at: Instant,
    /// When it was obtained: a 401 to a request sent before this does not
    /// drop it.
    obtained_at: Instant,
}

/// One ServiceAccount's token, cached and refreshed on schedule; shared by
/// every client acting as that account.
pub struct TokenSource {
    /// `namespace/name`, for errors and logs.
    account: String,
    fetch: Fetch,
    /// Held while a token is fetched, so that concurrent requests wait for
    /// one TokenRequest rather than each sending their own.
    cached: Mutex<Option<Cached>>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource").field("account", &self.account).finish_non_exhaustive()
    }
}

impl TokenSource {
    /// A source of tokens for `account` (`namespace/name`), each attempt
    /// made by `fetch`; nothing is fetched until a token is asked for.
    pub fn new(account: String, fetch: Fetch) -> TokenSource {
        TokenSource { account, fetch, cached: Mutex::new(None) }
    }

    /// The ServiceAccount, `namespace/name`.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The `Authorization` header value for a request sent now: the cached
    /// token, or a new one when none is cached or it is due.
    ///
    /// # Errors
    ///
    /// [`TokenError`] when every attempt failed and no token is cached.
    pub async fn authorization(&self) -> Result<HeaderValue, TokenError> {
        let mut cached = self.cached.lock().await;
        let now = Instant::now();
        if let Some(c) = cached.as_ref().filter(|c| now < c.refresh_at) {
            return Ok(c.header.clone());
        }
        match self.obtain().await {
            Ok((header, lifetime)) => {
                let obtained_at = Instant::now();
                let refresh_at = obtained_at + refresh_after(lifetime);
                *cached = Some(Cached { header: header.clone(), refresh_at, obtained_at });
                Ok(header)
            }
            Err(error) => match cached.as_ref() {
                Some(c) => {
                    tracing::error!(account = %self.account, error = %error, cause = %error.source,
                        "Unable to rotate token");
                    Ok(c.header.clone())
                }
                None => Err(error),
            },
        }
    }

    /// Drops the cached token if it was obtained before `sent` (the request
    /// that carried it was answered 401), as client-go's
    /// `ResetTokenOlderThan`.
    pub async fn reset_older_than(&self, sent: Instant) {
        let mut cached = self.cached.lock().await;
        if cached.as_ref().is_some_and(|c| c.obtained_at < sent) {
            *cached = None;
        }
    }

    /// Up to [`ATTEMPTS`] attempts, backing off between them.
    async fn obtain(&self) -> Result<(HeaderValue, Duration), TokenError> {
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let error = match (self.fetch)().await {
                Ok(issued) => match HeaderValue::from_str(&format!("Bearer {}", issued.token)) {
                    Ok(mut header) => {
                        header.set_sensitive(true);
                        return Ok((header, issued.lifetime));
                    }
                    Err(e) => BoxError::from(e),
                },
                Err(e) => e,
            };
            tracing::info!(account = %self.account, %error, attempt, "get token failed");
            if attempt == ATTEMPTS {
                return Err(TokenError { account: self.account.clone(), source: error });
            }
            tokio::time::sleep(backoff).await;
            backoff *= 2;
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The schedule on a paused clock, with a fetch that counts its calls
    //! and answers from a script.

    use std::collections::VecDeque;
    use std::sync::Mutex as StdMutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    // === utils ===

    /// A fetch answering from `script` (then failing), counting its calls.
    fn scripted(script: Vec<Result<Duration, &'static str>>) -> (Fetch, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let script = Arc::new(StdMutex::new(VecDeque::from(script)));
        let counted = calls.clone();
        let fetch: Fetch = Arc::new(move || {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            let next = script.lock().unwrap().pop_front().unwrap_or(Err("script ended"));
            Box::pin(
                async move { next.map(|lifetime| Issued { token: format!("t{n}"), lifetime }).map_err(BoxError::from) },
            )
        });
        (fetch, calls)
    }

    fn source(script: Vec<Result<Duration, &'static str>>) -> (TokenSource, Arc<AtomicUsize>) {
        let (fetch, calls) = scripted(script);
        (TokenSource::new("kube-system/deployment-controller".into(), fetch), calls)
    }

    const HOUR: Duration = Duration::from_secs(3600);

    fn minutes(m: u64) -> Duration {
        Duration::from_secs(60 * m)
    }

    // === tests ===

    #[test]
    fn refresh_leaves_a_fifth_of_the_lifetime_and_pins_short_ones_to_ten_minutes() {
        assert_eq!(refresh_after(HOUR), minutes(48));
        assert_eq!(refresh_after(minutes(5)), minutes(8));
        assert_eq!(refresh_after(Duration::ZERO), minutes(8));
        assert_eq!(refresh_after(minutes(10)), minutes(8));
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_is_reused_until_its_refresh_time_then_replaced() {
        let (tokens, calls) = source(vec![Ok(HOUR), Ok(HOUR)]);
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t0");
        tokio::time::advance(minutes(48) - Duration::from_millis(1)).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t0");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "no TokenRequest before 80% of the lifetime");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t1");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_short_lived_token_is_kept_eight_minutes() {
        let (tokens, calls) = source(vec![Ok(minutes(2)), Ok(HOUR)]);
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t0");
        tokio::time::advance(minutes(8) - Duration::from_millis(1)).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t0");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t1");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn four_attempts_half_a_second_doubling_then_an_error_naming_the_account() {
        let (tokens, calls) = source(vec![Err("forbidden"); 4]);
        let start = Instant::now();
        let error = tokens.authorization().await.unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(Instant::now() - start, Duration::from_millis(500 + 1000 + 2000));
        assert_eq!(error.to_string(), "failed to get token for kube-system/deployment-controller");
        assert_eq!(error.source.to_string(), "forbidden");
    }

    #[tokio::test(start_paused = true)]
    async fn an_attempt_after_failures_succeeds() {
        let (tokens, calls) = source(vec![Err("conflict"), Err("timeout"), Ok(HOUR)]);
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t2");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_rotation_keeps_the_cached_token_and_tries_again_on_the_next_request() {
        let (tokens, calls) = source(vec![Ok(HOUR), Err("down"), Err("down"), Err("down"), Err("down"), Ok(HOUR)]);
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t0");
        tokio::time::advance(minutes(48)).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t0", "the old token, still valid");
        assert_eq!(calls.load(Ordering::SeqCst), 5);
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t5");
    }

    #[tokio::test(start_paused = true)]
    async fn a_401_drops_the_token_it_was_sent_with_but_not_a_newer_one() {
        let (tokens, calls) = source(vec![Ok(HOUR), Ok(HOUR)]);
        tokens.authorization().await.unwrap();
        tokio::time::advance(Duration::from_secs(1)).await;
        let sent = Instant::now();
        tokens.reset_older_than(sent).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t1");
        // A 401 to a request sent before t1 was obtained leaves t1.
        tokens.reset_older_than(sent).await;
        assert_eq!(tokens.authorization().await.unwrap(), "Bearer t1");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
