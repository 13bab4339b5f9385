//! Publication times: a document's time as its input writes it (a `date` field, WARC-Date, an
//! ARC record's date, `article:published_time`, `<time datetime>`, `Last-Modified`), read into
//! seconds since the Unix epoch. The usual forms are read: RFC 3339 and ISO 8601
//! (`2024-05-26T10:30:00+08:00`), RFC 2822 and HTTP dates (`Sun, 26 May 2024 10:30:00 GMT`),
//! dates and times with `-`, `/` or `.` (`2024-05-26`, `2024/5/26 10:30`), Chinese dates
//! (`2024年5月26日 10:30`, `2024年5月26日10时30分`), ARC's `20240526103000`, and Unix seconds or
//! milliseconds, and English dates with a month name (`November 19, 2019, 07:47 PM EST`,
//! JavaScript's `Tue Nov 19 2019 05:44:06 GMT+0000`). A time without a zone is read as UTC; a
//! date without a time as its midnight.

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
/// documentation; `None` when it is none of them. The zone name `CST` is US Central time
/// (−06:00), as RFC 2822 defines it; see [`parse_time_for`] for Chinese documents.
pub fn parse_time(s: &str) -> Option<i64> {
    parse_time_for(s, false)
}

/// [`parse_time`] of a time written in a document whose text is Chinese (`chinese`), where
/// `CST` is China Standard Time (+08:00), as Chinese sites mean it; in any other document it
/// is US Central time.
pub fn parse_time_for(s: &str, chinese: bool) -> Option<i64> {
    let s = folded(s);
    let s = s.trim();
    let china;
    let s = match s.strip_suffix(" CST") {
        Some(rest) if chinese => {
            china = format!("{rest} +0800");
            china.as_str()
        }
        _ => s,
    };
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
    english(s)
}

/// English forms with a month name, as news pages write them: `November 19, 2019, 07:47 PM
/// EST`, `Nov 20, 2019 13:42`, `20 November 2019`, and JavaScript's `Tue Nov 19 2019
/// 05:44:06 GMT+0000 (Coordinated Universal Time)`, `Nov. 19, 2019, 7:47 p.m. ET`. A trailing
/// zone is a US zone name (`EST`, `EDT`, `CST`, `CDT`, `MST`, `MDT`, `PST`, `PDT`, and `ET`,
/// `CT`, `MT`, `PT` by the season of the date), `GMT`, `UTC`, or `GMT±hhmm`; none is UTC. A
/// leading weekday that is not the date's is read past.
fn english(s: &str) -> Option<i64> {
    if !s.bytes().any(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    // JavaScript appends the zone's name in parentheses.
    let s = match s.find(" (") {
        Some(i) if s.ends_with(')') => &s[..i],
        _ => s,
    };
    let (rest, offset, us_generic) = match s.rsplit_once(' ') {
        Some((rest, zone)) => match zone_offset(zone) {
            Some(o) => (
                rest.trim_end(),
                o,
                matches!(zone, "ET" | "CT" | "MT" | "PT"),
            ),
            None => (s, 0, false),
        },
        None => (s, 0, false),
    };
    // `ET`, `CT`, `MT`, `PT` name no season: standard time (an hour less) outside US daylight
    // saving time (from the second Sunday of March to the first Sunday of November).
    let offset = |d: NaiveDate| {
        if us_generic && !us_daylight(d) {
            offset - 3600
        } else {
            offset
        }
    };
    let rest = rest
        .replace("a.m.", "AM")
        .replace("p.m.", "PM")
        .replace("A.M.", "AM")
        .replace("P.M.", "PM")
        .replace(['.', ','], " ");
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    let upper = rest.replace(" am", " AM").replace(" pm", " PM");
    // A weekday that is not the date's (a template's day left beside a date moved on) is
    // read past: the date says the day.
    let past_weekday = upper
        .split_once(' ')
        .filter(|(w, _)| w.parse::<chrono::Weekday>().is_ok())
        .map(|(_, date)| date.to_string());
    for text in std::iter::once(upper.as_str()).chain(past_weekday.as_deref()) {
        for f in ENGLISH_TIMES {
            if let Ok(t) = NaiveDateTime::parse_from_str(text, f) {
                return Some(t.and_utc().timestamp() - offset(t.date()));
            }
        }
        for f in ENGLISH_DATES {
            if let Ok(d) = NaiveDate::parse_from_str(text, f) {
                return Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp() - offset(d));
            }
        }
    }
    None
}

/// English forms with a time, once commas and dots are spaces (`%B` and `%A` read a name or
/// its abbreviation).
const ENGLISH_TIMES: &[&str] = &[
    "%B %d %Y %I:%M %p",
    "%B %d %Y %I:%M:%S %p",
    "%B %d %Y %H:%M",
    "%B %d %Y %H:%M:%S",
    "%A %B %d %Y %I:%M %p",
    "%A %B %d %Y %H:%M",
    "%A %B %d %Y %H:%M:%S",
    "%d %B %Y %I:%M %p",
    "%d %B %Y %H:%M",
    "%d %B %Y %H:%M:%S",
];

/// English dates without a time (their midnight).
const ENGLISH_DATES: &[&str] = &["%B %d %Y", "%A %B %d %Y", "%d %B %Y"];

/// Whether US daylight saving time is in force on `d` (by day: from the second Sunday of
/// March to the first Sunday of November, the rule since 2007).
fn us_daylight(d: NaiveDate) -> bool {
    use chrono::Datelike;
    let sunday = |month: u32, nth: u32| {
        let first = NaiveDate::from_ymd_opt(d.year(), month, 1)?;
        let to_sunday = (7 - first.weekday().num_days_from_sunday()) % 7;
        first.checked_add_days(chrono::Days::new(u64::from(to_sunday + 7 * (nth - 1))))
    };
    match (sunday(3, 2), sunday(11, 1)) {
        (Some(start), Some(end)) => d >= start && d < end,
        _ => false,
    }
}

/// Seconds east of UTC of a zone written after an English time.
fn zone_offset(zone: &str) -> Option<i64> {
    let hours = match zone {
        "GMT" | "UTC" | "Z" => 0,
        "EST" => -5,
        "EDT" | "ET" => -4,
        "CST" => -6,
        "CDT" | "CT" => -5,
        "MST" => -7,
        "MDT" | "MT" => -6,
        "PST" => -8,
        "PDT" | "PT" => -7,
        _ => {
            let o = zone
                .strip_prefix("GMT")
                .or_else(|| zone.strip_prefix("UTC"))?;
            let (sign, hhmm) = match o.as_bytes().first()? {
                b'+' => (1, &o[1..]),
                b'-' => (-1, &o[1..]),
                _ => return None,
            };
            let hhmm = hhmm.replace(':', "");
            if hhmm.len() != 4 || !hhmm.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let (h, m): (i64, i64) = (hhmm[..2].parse().ok()?, hhmm[2..].parse().ok()?);
            return Some(sign * (h * 3600 + m * 60));
        }
    };
    Some(hours * 3600)
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

/// Whether `text` is Chinese: more Han characters than Latin letters in its first 2,000
/// characters.
pub fn mostly_han(text: &str) -> bool {
    let (mut han, mut latin) = (0usize, 0usize);
    for c in text.chars().take(2000) {
        if matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}') {
            han += 1;
        } else if c.is_ascii_alphabetic() {
            latin += 1;
        }
    }
    han > latin
}

/// The publication times read as such: from `earliest` (seconds since the epoch) to `ahead`
/// seconds past now ([`crate::clock::now`], so `FPDB_NOW` too). A time outside it is not a
/// publication time: a copier dated `0000-01-01` or `2001-01-01`, or an original dated in the
/// future, would otherwise take or keep a cluster's original by the lie. The document's
/// ingest time counts instead, with a located warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishedWindow {
    /// The earliest publication time read (default 1900-01-01T00:00:00Z).
    pub earliest: i64,
    /// How far past now a publication time may lie, in seconds (default one day: clocks and
    /// zones of the sites that write them).
    pub ahead: i64,
}

impl Default for PublishedWindow {
    fn default() -> Self {
        PublishedWindow {
            earliest: -2_208_988_800,
            ahead: 86_400,
        }
    }
}

impl PublishedWindow {
    /// `doc`'s publication time dropped, with a warning, when it lies outside the window.
    pub fn apply(&self, doc: &mut crate::engine::Document) {
        let Some(t) = doc.published else {
            return;
        };
        let now = i64::try_from(crate::clock::now()).unwrap_or(i64::MAX);
        let latest = now.saturating_add(self.ahead);
        let shown = |t: i64| {
            chrono::DateTime::from_timestamp(t, 0).map_or_else(
                || format!("{t} s"),
                |d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            )
        };
        let why = if t < self.earliest {
            format!(
                "the publication time {} is before {}, the earliest read (--published-from)",
                shown(t),
                shown(self.earliest)
            )
        } else if t > latest {
            format!(
                "the publication time {} is later than now ({}) by more than {} s \
                 (--published-ahead)",
                shown(t),
                shown(now),
                self.ahead
            )
        } else {
            return;
        };
        doc.published = None;
        doc.time_unread = Some(format!("{why}; the ingest time counts for it"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cst_is_china_standard_time_in_chinese_documents_only() {
        let s = "Sun, 26 May 2024 18:30:00 CST";
        assert_eq!(parse_time_for(s, true), Some(T));
        assert_eq!(parse_time_for(s, false), Some(T + 14 * 3600));
        assert_eq!(parse_time(s), Some(T + 14 * 3600));
        assert_eq!(parse_time_for("2024-05-26 18:30:00 CST", true), Some(T));
        assert!(mostly_han("国务院办公厅日前印发通知 GDP"));
        assert!(!mostly_han("The weather in Denver, 天气"));
    }

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
    fn english_forms_of_news_pages_are_read() {
        // 2019-11-20 00:47 UTC.
        let t = 1_574_210_820;
        for s in [
            "November 19, 2019, 07:47 PM EST",
            "November 19, 2019 7:47 pm EST",
            "Nov. 19, 2019, 7:47 p.m. EST",
            "Nov. 19, 2019 7:47 p.m. EST",
            "Wed Nov 20 2019 00:47:00 GMT+0000",
            "Wed Nov 20 2019 00:47:00 GMT+0000 (Coordinated Universal Time)",
            "Tue Nov 19 2019 19:47:00 GMT-0500 (Eastern Standard Time)",
            "November 20, 2019 00:47",
            "20 November 2019 00:47 UTC",
        ] {
            assert_eq!(parse_time(s), Some(t), "{s}");
        }
        assert_eq!(parse_time("November 20, 2019"), Some(t - 47 * 60));
        assert_eq!(parse_time("Nov 20 2019"), Some(t - 47 * 60));
        // `ET` as news sites write it: daylight time in summer, standard time in winter.
        assert_eq!(
            parse_time("June 3, 2019, 8:00 a.m. ET"),
            parse_time("2019-06-03T12:00:00Z")
        );
        assert_eq!(
            parse_time("Nov. 19, 2019, 7:47 p.m. ET"),
            Some(t),
            "November 19 is past the first Sunday of November"
        );
        assert_eq!(
            parse_time("March 10, 2019 12:00 PT"),
            parse_time("2019-03-10T19:00:00Z"),
            "the second Sunday of March 2019"
        );
        assert_eq!(
            parse_time("March 9, 2019 12:00 PT"),
            parse_time("2019-03-09T20:00:00Z")
        );
        // A weekday that is not the date's (November 20, 2019 was a Wednesday) is read past.
        assert_eq!(parse_time("Fri Nov 20 2019 00:47:00 GMT+0000"), Some(t));
        assert_eq!(parse_time("Friday, November 20, 2019"), Some(t - 47 * 60));
        assert_eq!(parse_time("Smarch 20, 2019"), None);
        assert_eq!(parse_time("November 20, 2019 00:47 XYZ"), None);
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
