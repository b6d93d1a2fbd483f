//! `Retry-After` (RFC 9110 §10.2.3): how long a 429 or 503 response asks the client to wait.
//!
//! The header is either delta-seconds (`120`) or an HTTP-date. The core has no wall clock, so a
//! date is turned into a delay against the response's own `Date` header, which is also the
//! server's clock and so immune to skew between client and server; without `Date` a date form
//! gives `None`. Only the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`) is read; the
//! obsolete RFC 850 and asctime forms, which senders must not generate, give `None`.

use std::time::Duration;

use crate::http::headers::{DATE, HeaderList, RETRY_AFTER};

/// The delay a `Retry-After` value asks for, at most `max`.
///
/// `date` is the response's `Date` header, used for the HTTP-date form: a date at or before it
/// gives a zero delay. Returns `None` when the value is neither form, or is a date and `date` is
/// absent or unreadable. The result never exceeds `max`, so it is safe to add to an `Instant`.
pub fn parse_retry_after(value: &str, date: Option<&str>, max: Duration) -> Option<Duration> {
    let value = value.trim_matches([' ', '\t']);
    let delay = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Saturate rather than fail: a huge number means "a long time", and is clamped below.
        let secs = value.bytes().fold(0u64, |acc, d| {
            acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
        });
        Duration::from_secs(secs)
    } else {
        let at = parse_imf_fixdate(value)?;
        let now = parse_imf_fixdate(date?.trim_matches([' ', '\t']))?;
        Duration::from_secs(at.saturating_sub(now))
    };
    Some(delay.min(max))
}

/// [`parse_retry_after`] over a response's headers (the first `Retry-After` and `Date`).
pub fn retry_after_from_headers(headers: &HeaderList, max: Duration) -> Option<Duration> {
    parse_retry_after(headers.get(RETRY_AFTER)?, headers.get(DATE), max)
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) into seconds since
/// the Unix epoch. The day name must be a valid one but is not checked against the date. Dates
/// before 1970 give `None`.
pub fn parse_imf_fixdate(s: &str) -> Option<u64> {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let b = s.as_bytes();
    // Fixed layout: "Sun, 06 Nov 1994 08:49:37 GMT" is 29 bytes.
    if b.len() != 29
        || &b[3..5] != b", "
        || b[7] != b' '
        || b[11] != b' '
        || b[16] != b' '
        || b[19] != b':'
        || b[22] != b':'
        || &b[25..] != b" GMT"
    {
        return None;
    }
    // The checks above pin ASCII separators, so these ranges fall on char boundaries; `get`
    // keeps that from ever panicking regardless.
    if !DAYS.contains(&s.get(0..3)?) {
        return None;
    }
    let month = MONTHS.iter().position(|m| Some(*m) == s.get(8..11))? as u64 + 1;
    let day = digits(&b[5..7])?;
    let year = digits(&b[12..16])?;
    let (hour, min, sec) = (
        digits(&b[17..19])?,
        digits(&b[20..22])?,
        digits(&b[23..25])?,
    );
    if day == 0 || day > days_in_month(year, month) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day)?;
    Some(days * 86_400 + hour * 3600 + min * 60 + sec)
}

fn digits(b: &[u8]) -> Option<u64> {
    b.iter().try_fold(0u64, |acc, &d| {
        d.is_ascii_digit().then(|| acc * 10 + u64::from(d - b'0'))
    })
}

fn is_leap(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`);
/// `None` before the epoch. Years are at most 9999 here, so nothing overflows.
fn days_from_civil(year: u64, month: u64, day: u64) -> Option<u64> {
    let y = if month <= 2 {
        year.checked_sub(1)?
    } else {
        year
    };
    let era = y / 400;
    let yoe = y % 400;
    let mp = (month + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).checked_sub(719_468)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_secs(3600);

    #[test]
    fn delta_seconds() {
        assert_eq!(
            parse_retry_after("120", None, MAX),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", None, MAX), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("7200", None, MAX), Some(MAX));
        assert_eq!(
            parse_retry_after("99999999999999999999999", None, MAX),
            Some(MAX)
        );
        for bad in ["", "-1", "1.5", "12s", "+3", "١٢"] {
            assert_eq!(parse_retry_after(bad, None, MAX), None, "{bad:?}");
        }
    }

    #[test]
    fn imf_fixdate_known_values() {
        assert_eq!(parse_imf_fixdate("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_imf_fixdate("Tue, 29 Feb 2000 12:00:00 GMT"),
            Some(951_825_600)
        );
        assert_eq!(
            parse_imf_fixdate("Fri, 31 Dec 9999 23:59:59 GMT"),
            Some(253_402_300_799)
        );
    }

    #[test]
    fn imf_fixdate_rejects_bad_input() {
        for bad in [
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Thu, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun, 06 Nov 1969 08:49:37 GMT",
            "Sun, 0x Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMTX",
            "Sun\u{e9} 06 Nov 1994 08:49:37 GMT",
            "",
        ] {
            assert_eq!(parse_imf_fixdate(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn http_date_relative_to_date_header() {
        let date = Some("Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:51:37 GMT", date, MAX),
            Some(Duration::from_secs(120))
        );
        // In the past: retry now.
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", date, MAX),
            Some(Duration::ZERO)
        );
        // Far future: clamped.
        assert_eq!(
            parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", date, MAX),
            Some(MAX)
        );
        // No or bad Date header: unknown.
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:51:37 GMT", None, MAX),
            None
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:51:37 GMT", Some("yesterday"), MAX),
            None
        );
    }

    #[test]
    fn from_headers() {
        let h: HeaderList = [
            ("Retry-After", "Sun, 06 Nov 1994 08:49:47 GMT"),
            ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            retry_after_from_headers(&h, MAX),
            Some(Duration::from_secs(10))
        );
        assert_eq!(retry_after_from_headers(&HeaderList::new(), MAX), None);
    }
}
