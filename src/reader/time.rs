//! Publication times: a document's time as its input writes it (a `date` field, WARC-Date, an
//! ARC record's date, `article:published_time`, `<time datetime>`, `Last-Modified`), read into
//! seconds since the Unix epoch. The usual forms are read: RFC 3339 and ISO 8601
//! (`2024-05-26T10:30:00+08:00`), RFC 2822 and HTTP dates (`Sun, 26 May 2024 10:30:00 GMT`),
//! dates and times with `-`, `/` or `.` (`2024-05-26`, `2024/5/26 10:30`), Chinese dates
//! (`2024年5月26日 10:30`, `2024年5月26日10时30分`), ARC's `20240526103000`, and Unix seconds or
//! milliseconds. A time without a zone is read as UTC; a date without a time as its midnight.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// Forms with a zone.
const ZONED: &[&str] = &[
    "%Y-%m-%dT%H:%M:%S%.f%:z",
    "%Y-%m-%dT%H:%M:%S%.f%z",
    "%Y-%m-%d %H:%M:%S%.f%:z",
    "%Y-%m-%d %H:%M:%S%.f%z",
    "%Y-%m-%d %H:%M:%S%.f %z",
    "%Y-%m-%dT%H:%M%:z",
    "%Y-%m-%d %H:%M%:z",
];

/// Forms with a time and no zone (read as UTC).
const NAIVE: &[&str] = &[
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y.%m.%d %H:%M:%S",
    "%Y.%m.%d %H:%M",
    "%Y年%m月%d日 %H:%M:%S",
    "%Y年%m月%d日 %H:%M",
    "%Y年%m月%d日%H:%M:%S",
    "%Y年%m月%d日%H:%M",
    "%Y年%m月%d日 %H时%M分%S秒",
    "%Y年%m月%d日 %H时%M分",
    "%Y年%m月%d日%H时%M分%S秒",
    "%Y年%m月%d日%H时%M分",
    "%Y年%m月%d日 %H点%M分",
    "%Y年%m月%d日%H点%M分",
];

/// Dates without a time (their midnight, UTC).
const DATES: &[&str] = &["%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%Y年%m月%d日", "%Y%m%d"];

/// Seconds since the Unix epoch of `s`, a time in one of the forms of this module's
/// documentation; `None` when it is none of them.
pub fn parse_time(s: &str) -> Option<i64> {
    let s = folded(s);
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return digits(s);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp());
    }
    if let Ok(t) = DateTime::parse_from_rfc2822(s) {
        return Some(t.timestamp());
    }
    for f in ZONED {
        if let Ok(t) = DateTime::parse_from_str(s, f) {
            return Some(t.timestamp());
        }
    }
    // A trailing `Z` or ` UTC` on a form without an offset.
    let bare = s
        .strip_suffix('Z')
        .or_else(|| s.strip_suffix(" UTC"))
        .or_else(|| s.strip_suffix(" GMT"))
        .unwrap_or(s);
    for f in NAIVE {
        if let Ok(t) = NaiveDateTime::parse_from_str(bare, f) {
            return Some(t.and_utc().timestamp());
        }
    }
    for f in DATES {
        if let Ok(d) = NaiveDate::parse_from_str(bare, f) {
            return Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp());
        }
    }
    None
}

/// All digits: ARC's `YYYYMMDDhhmmss`, a date `YYYYMMDD`, Unix seconds (9 to 11 digits) or
/// milliseconds (12 or 13).
fn digits(s: &str) -> Option<i64> {
    match s.len() {
        14 => NaiveDateTime::parse_from_str(s, "%Y%m%d%H%M%S")
            .ok()
            .map(|t| t.and_utc().timestamp()),
        8 => NaiveDate::parse_from_str(s, "%Y%m%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp()),
        9..=11 => s.parse().ok(),
        12 | 13 => s.parse::<i64>().ok().map(|ms| ms / 1000),
        _ => None,
    }
}

/// Full-width digits, colons, slashes and spaces (common in Chinese pages) as ASCII.
fn folded(s: &str) -> std::borrow::Cow<'_, str> {
    if s.is_ascii() {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.chars()
            .map(|c| match c {
                '０'..='９' => char::from(b'0' + (c as u32 - '０' as u32) as u8),
                '：' => ':',
                '／' => '/',
                '－' => '-',
                '\u{3000}' => ' ',
                c => c,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2024-05-26 10:30:00 UTC.
    const T: i64 = 1_716_719_400;

    #[test]
    fn the_usual_forms_are_read() {
        for s in [
            "2024-05-26T10:30:00Z",
            "2024-05-26T18:30:00+08:00",
            "2024-05-26 10:30:00",
            "2024-05-26T10:30:00.250Z",
            "2024-05-26 18:30:00 +0800",
            "Sun, 26 May 2024 10:30:00 GMT",
            "Sun, 26 May 2024 18:30:00 +0800",
            "2024/5/26 10:30",
            "2024年5月26日 10:30",
            "2024年05月26日10:30:00",
            "2024年5月26日 10时30分",
            "２０２４年５月２６日　１０：３０",
            "20240526103000",
            "1716719400",
            "1716719400000",
            "  2024-05-26 10:30  ",
        ] {
            assert_eq!(parse_time(s), Some(T), "{s}");
        }
        for s in [
            "2024-05-26",
            "2024/05/26",
            "2024年5月26日",
            "20240526",
            "2024.5.26",
        ] {
            assert_eq!(parse_time(s), Some(T - 10 * 3600 - 30 * 60), "{s}");
        }
    }

    #[test]
    fn what_is_not_a_time_is_none() {
        for s in [
            "",
            "yesterday",
            "2024-13-40",
            "26/05",
            "12345",
            "2024年",
            "昨天 10:30",
        ] {
            assert_eq!(parse_time(s), None, "{s}");
        }
    }

    proptest::proptest! {
        /// Whatever an input writes in a time field, reading it never panics, and a time it
        /// reads as one of the usual forms comes back as that instant.
        #[test]
        fn any_string_is_read_or_refused_without_a_panic(
            s in ".{0,40}",
            t in -2_000_000_000i64..4_000_000_000,
        ) {
            let _ = parse_time(&s);
            let written = chrono::DateTime::from_timestamp(t, 0).unwrap();
            proptest::prop_assert_eq!(parse_time(&written.to_rfc3339()), Some(t));
            proptest::prop_assert_eq!(parse_time(&written.to_rfc2822()), Some(t));
        }
    }
}
