//! What a server without a token answers. Without a token, anyone who can reach the port can
//! read and write, and on loopback that includes every web page the user's browser opens: a
//! `text/plain` POST is a CORS "simple" request a page may send anywhere, and a page whose name
//! its owner re-points at 127.0.0.1 (DNS rebinding) reads the answers. So, without a token:
//!
//! - on a loopback address, only requests whose `Host` is a loopback name (`localhost`,
//!   `*.localhost`, a loopback IP) or the listen address are answered;
//! - a request that changes or reads by POST must say `Content-Type: application/json` (which
//!   a page can send elsewhere only after a CORS preflight, which this server never grants),
//!   and must not come from another origin (`Origin`) or another site (`Sec-Fetch-Site`).
//!
//! With a token none of this applies: a page cannot send a token it does not know.

use std::net::{IpAddr, SocketAddr};

use axum::http::{header, HeaderMap, Method};

/// Why a tokenless server refuses a request (answered 403), or `None`.
pub(super) fn refusal(
    method: &Method,
    headers: &HeaderMap,
    listen: SocketAddr,
) -> Option<&'static str> {
    let text =
        |name: header::HeaderName| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    if listen.ip().is_loopback() {
        if let Some(host) = text(header::HOST) {
            if !allowed_host(host_of(host), listen) {
                return Some(
                    "the Host header names neither a loopback name nor this server's address \
                     (a server without a token answers only those; give --token-file to serve others)",
                );
            }
        }
    }
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return None;
    }
    let json = text(header::CONTENT_TYPE).is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return Some(
            "a POST must say Content-Type: application/json (curl: -H 'Content-Type: application/json')",
        );
    }
    if let Some(origin) = text(header::ORIGIN) {
        if !same_origin(origin, listen) {
            return Some(
                "a request from another origin (Origin) is refused by a server without a token; \
                 give --token-file to serve other origins",
            );
        }
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
    {
        return Some(
            "a cross-site request (Sec-Fetch-Site) is refused by a server without a token",
        );
    }
    None
}

/// The host part of a `Host` value or an origin's authority: `[::1]:80` -> `::1`,
/// `localhost:80` -> `localhost`.
fn host_of(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match a.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => a,
    }
}

/// The port of an authority, if it names one.
fn port_of(authority: &str) -> Option<u16> {
    let a = authority.trim();
    let after = match a.strip_prefix('[') {
        Some(rest) => rest.split_once(']')?.1,
        None => a,
    };
    after.rsplit_once(':').and_then(|(_, p)| p.parse().ok())
}

/// A loopback name or IP, or the listen address's IP.
fn allowed_host(host: &str, listen: SocketAddr) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    host.parse::<IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || ip == listen.ip())
}

/// Whether an `Origin` value is this server's own: http, an allowed host, the listen port.
fn same_origin(origin: &str, listen: SocketAddr) -> bool {
    let Some(authority) = origin.trim().strip_prefix("http://") else {
        return false;
    };
    let authority = authority.trim_end_matches('/');
    allowed_host(host_of(authority), listen) && port_of(authority).unwrap_or(80) == listen.port()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    const LISTEN: &str = "127.0.0.1:18732";

    fn refused(method: Method, pairs: &[(&str, &str)]) -> bool {
        refusal(&method, &req(pairs), LISTEN.parse().unwrap()).is_some()
    }

    #[test]
    fn hosts() {
        for ok in [
            "127.0.0.1:18732",
            "localhost:18732",
            "LOCALHOST",
            "a.localhost:1",
            "[::1]:18732",
            "127.0.0.2",
        ] {
            assert!(!refused(Method::GET, &[("host", ok)]), "{ok}");
        }
        for bad in [
            "attacker.example:18732",
            "attacker.example",
            "10.0.0.1:18732",
            "127.0.0.1.evil.example",
            "",
        ] {
            assert!(refused(Method::GET, &[("host", bad)]), "{bad}");
        }
        // No Host (HTTP/1.0): answered.
        assert!(!refused(Method::GET, &[]));
    }

    #[test]
    fn writes() {
        let json = ("content-type", "application/json; charset=utf-8");
        assert!(!refused(Method::POST, &[json]));
        assert!(!refused(
            Method::POST,
            &[json, ("origin", "http://127.0.0.1:18732")]
        ));
        assert!(!refused(
            Method::POST,
            &[json, ("origin", "http://localhost:18732")]
        ));
        assert!(refused(Method::POST, &[("content-type", "text/plain")]));
        assert!(refused(Method::POST, &[]));
        assert!(refused(
            Method::POST,
            &[json, ("origin", "http://evil.example")]
        ));
        assert!(refused(
            Method::POST,
            &[json, ("origin", "http://127.0.0.1:8080")]
        ));
        assert!(refused(Method::POST, &[json, ("origin", "null")]));
        assert!(refused(
            Method::POST,
            &[json, ("sec-fetch-site", "cross-site")]
        ));
    }

    #[test]
    fn a_non_loopback_listener_checks_origins_not_hosts() {
        let listen: SocketAddr = "0.0.0.0:80".parse().unwrap();
        let h = req(&[("host", "fpdb.internal")]);
        assert!(refusal(&Method::GET, &h, listen).is_none());
        let h = req(&[("host", "fpdb.internal"), ("content-type", "text/plain")]);
        assert!(refusal(&Method::POST, &h, listen).is_some());
    }
}
