//! Times as the store keeps and publishes them: RFC 3339 UTC text of fixed
//! width (so text order is time order), and a call's "now".

use chrono::{DateTime, SecondsFormat, Utc};

/// The stored and published form of a time: RFC 3339 UTC with microseconds and
/// `Z`, fixed width, so text order is time order. Both backends answer with it.
pub fn timestamp(t: DateTime<Utc>) -> Timestamp {
    Timestamp(t.to_rfc3339_opts(SecondsFormat::Micros, true))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc_3339_with_microseconds() {
        use chrono::TimeZone;
        for (seconds, micros, text) in [
            (0, 0, "1970-01-01T00:00:00.000000Z"),
            (951_782_400, 1, "2000-02-29T00:00:00.000001Z"),
            (253_402_300_799, 999_999, "9999-12-31T23:59:59.999999Z"),
        ] {
            let t = Utc.timestamp_opt(seconds, micros * 1000).unwrap();
            assert_eq!(timestamp(t), text);
        }
    }

    #[test]
    fn a_timestamp_is_fixed_width_whatever_the_time() {
        use chrono::TimeZone;
        for (t, text) in [
            (
                Utc.with_ymd_and_hms(1969, 12, 31, 23, 59, 59).unwrap(),
                "1969-12-31T23:59:59.000000Z",
            ),
            (
                Utc.with_ymd_and_hms(1900, 1, 1, 0, 0, 0).unwrap(),
                "1900-01-01T00:00:00.000000Z",
            ),
            (
                Utc.with_ymd_and_hms(2024, 2, 29, 12, 0, 0).unwrap()
                    + chrono::Duration::nanoseconds(123_456_789),
                "2024-02-29T12:00:00.123456Z",
            ),
        ] {
            assert_eq!(timestamp(t), text);
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
