//! What the OS says about memory: the process's resident size and what the machine can
//! still give. The searches (`explore`'s state guard, the checker's default memo bound)
//! read them; both are `None` where the OS does not say (anything but Linux).

/// The process's resident memory, where the OS tells (Linux: `/proc/self/statm`).
pub(crate) fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Memory the machine can still give (Linux: `MemAvailable` in `/proc/meminfo`).
pub(crate) fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
