//! Slow start: creations issued in steps of 1, 2, 4, ... so that a
//! systematic failure (quota, admission) costs one failed create, not
//! hundreds (upstream `slowStartBatch` in `pkg/controller/controller_utils.go`,
//! shared by the ReplicaSet, Job and DaemonSet controllers).

/// The first slow-start step creates this many pods (upstream
/// `SlowStartInitialBatchSize`).
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

/// Step sizes for `count` creations: 1, 2, 4, ... each double the previous,
/// the last one what remains.
pub fn slow_start_batches(count: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let (mut remaining, mut size) = (count, SLOW_START_INITIAL_BATCH_SIZE.min(count));
    while size > 0 {
        sizes.push(size);
        remaining -= size;
        size = (2 * size).min(remaining);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_table() {
        let cases: [(usize, &[usize]); 6] = [
            (0, &[]),
            (1, &[1]),
            (3, &[1, 2]),
            (10, &[1, 2, 4, 3]),
            (15, &[1, 2, 4, 8]),
            (500, &[1, 2, 4, 8, 16, 32, 64, 128, 245]),
        ];
        for (count, want) in cases {
            assert_eq!(slow_start_batches(count), want, "{count}");
        }
    }
}
