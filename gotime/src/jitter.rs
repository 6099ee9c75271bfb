//! Randomness for spreading retries and periods, as client-go's `wait`
//! package spreads them: a small seedable source ([`Jitter`], SplitMix64)
//! and `wait.Jitter`'s arithmetic ([`jittered`]). Seed it in tests
//! ([`Jitter::seeded`]) to make a run repeatable; seed it from the process's
//! randomness otherwise ([`Jitter::from_entropy`]).

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A small pseudo-random source (SplitMix64): not for secrets, only for
/// spreading timers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jitter(u64);

impl Jitter {
    /// A source that yields the same samples for the same seed.
    pub fn seeded(seed: u64) -> Self {
        Jitter(seed)
    }

    /// A source seeded from the process's randomness (std's `RandomState`,
    /// seeded from the OS and different per instance).
    pub fn from_entropy() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0x6b63_6d2d_7273);
        Jitter(hasher.finish())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A sample uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `period` jittered by up to `factor` (client-go's
    /// `wait.Jitter(period, factor)`).
    pub fn jitter(&mut self, period: Duration, factor: f64) -> Duration {
        jittered(period, factor, self.unit())
    }
}

/// client-go's `wait.Jitter` for a given sample in [0, 1):
/// `period + sample × factor × period`. A factor of 1.2 on 2 s gives
/// between 2 s and 4.4 s.
pub fn jittered(period: Duration, factor: f64, sample: f64) -> Duration {
    period + period.mul_f64(factor * sample.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_samples_and_samples_stay_in_the_unit_interval() {
        let (mut a, mut b) = (Jitter::seeded(7), Jitter::seeded(7));
        for _ in 0..1_000 {
            let x = a.unit();
            assert_eq!(x, b.unit());
            assert!((0.0..1.0).contains(&x), "{x}");
        }
        assert_ne!(Jitter::seeded(7).next_u64(), Jitter::seeded(8).next_u64());
    }

    #[test]
    fn jitter_stays_within_wait_jitters_bounds() {
        let period = Duration::from_secs(2);
        assert_eq!(jittered(period, 1.2, 0.0), period);
        assert_eq!(jittered(period, 1.2, 0.5), Duration::from_millis(3200));
        let mut source = Jitter::seeded(1);
        for _ in 0..1_000 {
            let d = source.jitter(period, 1.2);
            assert!(d >= period && d < Duration::from_millis(4400), "{d:?}");
        }
    }
}
