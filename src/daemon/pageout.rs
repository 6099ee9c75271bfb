//! Start-up's code handed back to the kernel once the controllers run.
//!
//! Starting (flags, serving, building every controller, the first list of
//! every informer and the first pass over every object) runs about half of
//! kcm-rs's code once; an idle kcm-rs runs the other half (watch events
//! and bookmarks, lease renewals, node heartbeats, probes and scrapes).
//! Only memory pressure would ever take start-up's pages out of the
//! resident set. So once the controllers' caches have synced and their
//! queues have emptied, [`after_start`] asks the kernel to reclaim every
//! page of the binary's code and read-only data (`madvise` with
//! `MADV_PAGEOUT`, Linux 5.4 and newer; older kernels refuse it, which is
//! logged and changes nothing else).
//!
//! The pages idle runs come back at once; release links put that code
//! ahead of the rest (`link/hot-text.ld`), so it comes back as few pages.
//! From then on the kernel reads those mappings a page at a time
//! (`MADV_RANDOM`, given first): without it, each page read back brings
//! its neighbours into the page cache and the process (64 KiB around it),
//! most of which idle never runs. Code that runs again later (a re-list
//! after a watch expired, the first sync of a kind of object idle never
//! syncs) is read back from the file when it runs, as code the kernel
//! reclaimed under pressure would be.

use std::path::Path;
use std::time::Duration;

use kcm_runtime::workqueue::QueueMetrics;

/// How often the queues are looked at until they are empty.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Once every workqueue is empty at two looks in a row (a second apart),
/// pages out the binary's code (logged); returns early when `stop`
/// completes first.
pub(super) async fn after_start(queues: QueueMetrics, stop: impl Future<Output = ()>) {
    let drained = async {
        let mut ticker = tokio::time::interval(LOOK_EVERY);
        let mut empty_looks = 0;
        while empty_looks < 2 {
            ticker.tick().await;
            empty_looks = if queues.queued() == 0.0 { empty_looks + 1 } else { 0 };
        }
    };
    tokio::select! {
        () = drained => {}
        () = stop => return,
    }
    match page_out_code() {
        Ok(bytes) => tracing::info!(mib = bytes >> 20, "start-up done: code pages handed back to the kernel"),
        Err(error) => {
            let error = format!("{:#}", anyhow::Error::new(error));
            tracing::info!(%error, "start-up done: code pages kept");
        }
    }
}

/// Why the code could not be paged out.
#[derive(Debug, thiserror::Error)]
pub(super) enum Error {
    /// `/proc/self/exe` or `/proc/self/maps` could not be read.
    #[error("cannot read this process's mappings")]
    Maps(#[source] std::io::Error),
    /// The kernel refused the advice (`MADV_PAGEOUT` before Linux 5.4:
    /// `EINVAL`).
    #[error("madvise({advice:?}) of {start:#x}-{end:#x} refused")]
    Advise {
        /// The mapping's first address.
        start: usize,
        /// The address after its last.
        end: usize,
        /// What was asked.
        advice: Advice,
        /// What the kernel said.
        #[source]
        source: std::io::Error,
    },
}

/// Asks the kernel to read the pages of this process's executable's
/// read-only mappings, up to and including its code, one at a time from
/// now on, and to reclaim them: how many bytes of mappings it was asked
/// about.
pub(super) fn page_out_code() -> Result<usize, Error> {
    let exe = std::fs::read_link("/proc/self/exe").map_err(Error::Maps)?;
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(Error::Maps)?;
    let mut bytes = 0;
    for (start, end) in code_mappings(&maps, &exe) {
        for advice in [Advice::Random, Advice::PageOut] {
            advise(start, end, advice).map_err(|source| Error::Advise { start, end, advice, source })?;
        }
        bytes += end - start;
    }
    Ok(bytes)
}

/// The address ranges of `exe`'s mappings in `maps` (the text of
/// `/proc/<pid>/maps`) that are not writable, in order, up to and
/// including its first executable one: the ELF headers and read-only data,
/// then the code. What follows the code (relocated read-only data, which
/// the loader wrote, then data) is not the file's pages any more.
fn code_mappings(maps: &str, exe: &Path) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode, then the path after padding.
        let mut fields = line.splitn(6, ' ');
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        if fields.nth(3).map(str::trim_start) != exe.to_str() || perms.contains('w') {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) else {
            continue;
        };
        found.push((start, end));
        if perms.contains('x') {
            break;
        }
    }
    found
}

/// The two pieces of advice given, each a hint that changes no byte.
#[derive(Debug, Clone, Copy)]
pub(super) enum Advice {
    /// `MADV_RANDOM`: read the range's pages on demand, one at a time.
    Random,
    /// `MADV_PAGEOUT`: reclaim the range's pages now.
    PageOut,
}

/// `madvise(start, end - start, advice)`.
#[expect(unsafe_code, reason = "madvise has no safe wrapper; see the SAFETY comment")]
fn advise(start: usize, end: usize, advice: Advice) -> std::io::Result<()> {
    let addr = std::ptr::without_provenance_mut::<libc::c_void>(start);
    let advice = match advice {
        Advice::Random => libc::MADV_RANDOM,
        Advice::PageOut => libc::MADV_PAGEOUT,
    };
    // SAFETY: both pieces of advice are hints about residency: neither
    // changes what any page of the range reads (a reclaimed page of a file
    // mapping is read back from the file when next touched). The range is
    // one of the executable's own read-only mappings, which stay mapped for
    // the life of the process, and no Rust reference or pointer's validity
    // depends on its pages being resident.
    let status = unsafe { libc::madvise(addr, end - start, advice) };
    if status == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A static-PIE kcm-rs's mappings as Linux lists them (addresses
    /// shortened): headers and read-only data, code, relocated read-only
    /// data, data, then the heap and another file.
    const MAPS: &str = "\
5600000-5640000 r--p 00000000 fd:01 1234                       /usr/local/bin/kcm-rs
5640000-5680000 r-xp 00040000 fd:01 1234                       /usr/local/bin/kcm-rs
5680000-5690000 r--p 00080000 fd:01 1234                       /usr/local/bin/kcm-rs
5690000-5691000 rw-p 00090000 fd:01 1234                       /usr/local/bin/kcm-rs
5691000-5699000 rw-p 00000000 00:00 0                          [heap]
7f00000-7f10000 r-xp 00000000 fd:01 99                         /usr/lib/libc.so.6
";

    #[test]
    fn the_read_only_mappings_up_to_the_code_are_paged_out() {
        let found = code_mappings(MAPS, Path::new("/usr/local/bin/kcm-rs"));
        assert_eq!(found, vec![(0x5600000, 0x5640000), (0x5640000, 0x5680000)]);
    }

    #[test]
    fn another_program_s_mappings_are_not() {
        assert_eq!(code_mappings(MAPS, Path::new("/usr/local/bin/kcm")), vec![]);
    }

    #[test]
    fn a_path_with_spaces_is_matched_whole() {
        let maps = "1000-2000 r-xp 00000000 fd:01 7          /opt/my tools/kcm-rs\n";
        assert_eq!(code_mappings(maps, Path::new("/opt/my tools/kcm-rs")), vec![(0x1000, 0x2000)]);
        assert_eq!(code_mappings(maps, Path::new("/opt/my")), vec![]);
    }

    #[test]
    fn this_test_binary_s_code_is_paged_out_and_still_runs() {
        let bytes = page_out_code().expect("Linux 5.4 or newer pages out");
        assert!(bytes > 0, "no code mapping found");
        // The code runs on (it is read back) and its mappings stay.
        assert_eq!(page_out_code().expect("pages out again"), bytes);
    }
}
