//! HTTP's own semantics over the tools' envelopes: the envelope unwrapped
//! into a status, headers and body ([`response`]), extractors whose
//! rejections are envelopes ([`extract`]), entity tags and revalidation
//! ([`revalidation`], [`conditional`]), `Idempotency-Key` ([`idempotency`]), problem details
//! ([`problem`]) and the read cache ([`cache`]).

pub mod cache;
pub mod conditional;
pub mod extract;
pub mod idempotency;
pub mod problem;
pub mod response;
pub mod revalidation;
