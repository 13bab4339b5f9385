//! The clock: seconds since the Unix epoch, the time stored with each document at ingest and the
//! reference of retention and `expire`. A leaf module (no crate imports), so the store (Redis
//! leases) and the engine read one clock.
//!
//! `FPDB_NOW` (whole seconds since the epoch) overrides it, to replay an archive with its own
//! dates or to test expiry. Its value must lie in [0, [`MAX_SECS`]] (the last second of the year
//! 9999, the last time the dates fpdb prints can show); [`check_env`] refuses anything else, and
//! the command line calls it before any command runs.

/// The variable that overrides the clock.
pub const ENV: &str = "FPDB_NOW";

/// 9999-12-31T23:59:59Z: the latest time `FPDB_NOW` may name.
pub const MAX_SECS: u64 = 253_402_300_799;

/// `FPDB_NOW` read: None when unset or empty, the seconds when valid, else why not.
pub fn check_env() -> Result<Option<u64>, String> {
    let Some(v) = std::env::var_os(ENV) else {
        return Ok(None);
    };
    let v = v.to_string_lossy();
    let t = v.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<u64>() {
        Ok(n) if n <= MAX_SECS => Ok(Some(n)),
        Ok(_) => Err(format!(
            "{ENV}={v} is after the year 9999 (at most {MAX_SECS}, seconds since 1970-01-01 UTC)"
        )),
        Err(_) => Err(format!(
            "{ENV}={v} is not a time: give whole seconds since 1970-01-01 UTC (0 to {MAX_SECS}), \
             or unset it to use the system clock"
        )),
    }
}

/// Seconds since the Unix epoch (0 if the system clock is before it), or `FPDB_NOW` when it is
/// valid. An invalid `FPDB_NOW` is not used (the command line refuses it before it gets here).
pub fn now() -> u64 {
    if let Ok(Some(t)) = check_env() {
        return t;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        .min(MAX_SECS)
}
