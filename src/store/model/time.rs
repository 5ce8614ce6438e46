//! Times as the store keeps and publishes them: RFC 3339 UTC text of fixed
//! width (so text order is time order), and a call's "now".

use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Timelike, Utc};

/// The stored and published form of a time: RFC 3339 UTC with microseconds and
/// `Z`, fixed width, so text order is time order. Both backends answer with it.
pub fn timestamp(t: DateTime<Utc>) -> Timestamp {
    // chrono writes what [`TimeText`] does not: a leap second, a year
    // before 1970 or after 9999.
    let fixed = (t.nanosecond() < 1_000_000_000)
        .then(|| TimeText::at(t.into()))
        .flatten();
    Timestamp(match fixed {
        Some(text) => text.as_str().to_owned(),
        None => t.to_rfc3339_opts(SecondsFormat::Micros, true),
    })
}

/// A time as the store is handed it and keeps it: the [`timestamp`] text,
/// which the SQL of both backends binds and compares as it always did.
/// Made by [`timestamp`] from a clock reading, or by [`Timestamp::parse`]
/// from RFC 3339 text; read as that text (`as_str`, or as a `&str`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(String);

impl Timestamp {
    /// RFC 3339 text in any offset and precision, as its [`timestamp`]
    /// text; `None` when it is not RFC 3339.
    pub fn parse(text: &str) -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| timestamp(t.with_timezone(&Utc)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Timestamp {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Timestamp> for String {
    fn from(t: Timestamp) -> String {
        t.0
    }
}

impl PartialEq<str> for Timestamp {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Timestamp {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Timestamp {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

/// A call's "now" as [`timestamp`] text, read from its clock only when
/// first asked, then the same for the rest of the call: a cached read asks
/// for it only when a claim may have lapsed or the store must be asked.
pub struct Now<'a> {
    read: &'a (dyn Fn() -> String + Sync),
    text: std::sync::OnceLock<String>,
}

impl<'a> Now<'a> {
    /// `read` gives the time when it is first asked for.
    pub fn new(read: &'a (dyn Fn() -> String + Sync)) -> Self {
        Now {
            read,
            text: std::sync::OnceLock::new(),
        }
    }

    pub fn as_str(&self) -> &str {
        self.text.get_or_init(self.read)
    }
}

/// A time as [`timestamp`] writes it, RFC 3339 in UTC with microseconds
/// (`2026-12-03T16:27:42.123456Z`), written on the stack with integer
/// arithmetic: the request's clock reading of every cached read and every
/// line of the text log (tracing-subscriber's `Full` writes the same).
pub struct TimeText([u8; 27]);

impl TimeText {
    /// Now; `None` before 1970 or after 9999.
    pub fn now() -> Option<TimeText> {
        TimeText::at(SystemTime::now())
    }

    /// `time`; `None` before 1970 or after 9999.
    pub fn at(time: SystemTime) -> Option<TimeText> {
        let since = time.duration_since(UNIX_EPOCH).ok()?;
        let seconds = since.as_secs();
        let (year, month, day) = civil_from_days(seconds / 86_400);
        if year > 9999 {
            return None;
        }
        let of_day = seconds % 86_400;
        let mut out = *b"0000-00-00T00:00:00.000000Z";
        digits(&mut out[0..4], year);
        digits(&mut out[5..7], month);
        digits(&mut out[8..10], day);
        digits(&mut out[11..13], of_day / 3600);
        digits(&mut out[14..16], of_day / 60 % 60);
        digits(&mut out[17..19], of_day % 60);
        digits(&mut out[20..26], u64::from(since.subsec_micros()));
        Some(TimeText(out))
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII digits were written into an ASCII template.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Writes `value` as decimal digits filling `out`, zero-padded on the left.
fn digits(out: &mut [u8], mut value: u64) {
    for place in out.iter_mut().rev() {
        *place = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// The proleptic Gregorian (year, month, day) of a day counted from
/// 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc_3339_with_microseconds() {
        for seconds in [
            0,
            951_782_400,
            1_764_777_662,
            4_107_542_399,
            253_402_300_799,
        ] {
            for micros in [0, 1, 999_999] {
                let time = UNIX_EPOCH + std::time::Duration::new(seconds, micros * 1000);
                let expected = chrono::DateTime::<chrono::Utc>::from(time)
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                assert_eq!(TimeText::at(time).unwrap().as_str(), expected);
            }
        }
        let beyond = UNIX_EPOCH + std::time::Duration::from_secs(253_402_300_800);
        assert!(
            TimeText::at(beyond).is_none(),
            "year 10000 is left to chrono (and, in the log, to Full)"
        );
    }

    #[test]
    fn a_timestamp_is_what_chrono_writes_every_time() {
        use chrono::TimeZone;
        for t in [
            Utc.with_ymd_and_hms(2026, 12, 6, 5, 3, 46).unwrap(),
            Utc.with_ymd_and_hms(1969, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(1900, 1, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(2024, 2, 29, 12, 0, 0).unwrap()
                + chrono::Duration::nanoseconds(123_456_789),
        ] {
            assert_eq!(timestamp(t), t.to_rfc3339_opts(SecondsFormat::Micros, true));
        }
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
            .unwrap()
            .and_utc();
        assert_eq!(timestamp(leap), "2016-12-31T23:59:60.500000Z");
    }

    #[test]
    fn a_parsed_timestamp_is_its_stored_text() {
        let stored = "2026-06-01T11:00:00.000000Z";
        assert_eq!(Timestamp::parse(stored).unwrap(), stored);
        assert_eq!(
            Timestamp::parse("2026-06-01T13:00:00+02:00").unwrap(),
            stored
        );
        assert_eq!(&*Timestamp::parse("2026-06-01T11:00:00Z").unwrap(), stored);
        assert!(Timestamp::parse("2026-06-01 11:00").is_none());
    }
}
