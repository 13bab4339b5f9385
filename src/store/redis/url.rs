//! Where a `redis://` store lives and how it writes: nodes, namespace, `?wait`, `?lease`,
//! `?retry`.

use std::time::Duration;

use crate::error::{Error, Result};

/// Where a `redis://` store lives and how it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// `host:port` of one or more cluster nodes.
    pub nodes: Vec<String>,
    /// Namespace: every key of the store starts with it (in its hash tag).
    pub namespace: String,
    /// Replicas of every master that must have a write before it counts (`WAIT`); 0 = rely
    /// on the masters' own fsync.
    pub wait: u32,
    /// Lease time of a writer, milliseconds.
    pub lease_ms: u64,
    /// How long a command is retried through failovers and refused connections.
    pub retry: Duration,
}

impl RedisUrl {
    /// Parse `redis://host:port[,host:port…]/NAMESPACE[?wait=N&lease=SECS&retry=SECS]`.
    pub fn parse(s: &str) -> Result<RedisUrl> {
        let bad = |why: &str| {
            Error::Storage(format!(
                "{s}: {why} (expected redis://host:port[,host:port…]/NAMESPACE[?wait=N&lease=SECS&retry=SECS])"
            ))
        };
        let rest = s
            .strip_prefix("redis://")
            .ok_or_else(|| bad("not a redis:// address"))?;
        let (hosts, path) = rest.split_once('/').ok_or_else(|| bad("no /NAMESPACE"))?;
        let (namespace, query) = match path.split_once('?') {
            Some((n, q)) => (n, q),
            None => (path, ""),
        };
        if namespace.is_empty()
            || namespace.len() > 64
            || !namespace
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        {
            return Err(bad(
                "the namespace must be 1-64 characters of letters, digits, '_', '.', '-'",
            ));
        }
        let mut nodes = Vec::new();
        for h in hosts.split(',') {
            let (host, port) = h
                .rsplit_once(':')
                .ok_or_else(|| bad("a node without :port"))?;
            if host.is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
                return Err(bad(&format!("bad node {h:?}")));
            }
            nodes.push(h.to_string());
        }
        let mut url = RedisUrl {
            nodes,
            namespace: namespace.to_string(),
            wait: 0,
            lease_ms: 60_000,
            retry: Duration::from_secs(30),
        };
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad(&format!("bad option {kv:?}")))?;
            let n: u64 = v
                .parse()
                .map_err(|_| bad(&format!("{k}: {v:?} is not a whole number")))?;
            match k {
                "wait" if n <= 16 => url.wait = n as u32,
                "lease" if (1..=3600).contains(&n) => url.lease_ms = n * 1000,
                "retry" if n <= 3600 => url.retry = Duration::from_secs(n),
                "wait" | "lease" | "retry" => return Err(bad(&format!("{k}={v} is out of range"))),
                _ => return Err(bad(&format!("unknown option {k:?}"))),
            }
        }
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_or_say_what_is_wrong() {
        let u =
            RedisUrl::parse("redis://127.0.0.1:7000,127.0.0.1:7001/crawl?wait=1&lease=5").unwrap();
        assert_eq!(u.nodes, ["127.0.0.1:7000", "127.0.0.1:7001"]);
        assert_eq!(
            (u.namespace.as_str(), u.wait, u.lease_ms),
            ("crawl", 1, 5000)
        );
        for (bad, says) in [
            ("redis://h:1", "no /NAMESPACE"),
            ("redis://h:1/", "namespace"),
            ("redis://h/x", "without :port"),
            ("redis://h:0/x", "bad node"),
            ("redis://h:1/a{b}", "namespace"),
            ("redis://h:1/x?wait=lots", "not a whole number"),
            ("redis://h:1/x?colour=1", "unknown option"),
            ("redis://h:1/x?lease=0", "out of range"),
        ] {
            let e = RedisUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
