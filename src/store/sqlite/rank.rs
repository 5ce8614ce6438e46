//! `cairn_rank(search_index, w_title, w_body)`: an FTS5 ranking function,
//! FTS5's own bm25 (k1 = 1.2, b = 0.75, per-column weights, row length over
//! the average) without the inverse document frequency, which FTS5 computes
//! by walking every row that matches each query word: about 10 ms for a word
//! half the documents hold at 120,000 documents, before the first row. Without
//! it a row costs what its own position lists cost.
//!
//! What that changes: every query word weighs the same. For one word the order
//! is bm25's; for words each in more than half the documents too (FTS5 clamps
//! their weight to the same tiny value). A rare word beside a common one no
//! longer counts for more.
//!
//! The one module of cairn with `unsafe` (the crate denies it elsewhere):
//! rusqlite has no safe wrapper for an FTS5 auxiliary function. Each block
//! says why it holds.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::Connection;
use rusqlite::ffi;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Phrases counted without allocating (a query has at most this many terms
/// scored; further ones are ignored, which only happens past this many words).
const MAX_PHRASES: usize = 64;

/// Registers `cairn_rank` on `conn` (every connection of the store).
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is the live connection's; `fts5(?1)` writes the
    // fts5_api pointer through the bound pointer (the documented way to get
    // it), and the statement is finalized before the pointer is used.
    // No safe API would do: rusqlite's `create_scalar_function` registers a
    // scalar SQL function, which sees only its arguments; a ranking function
    // is an FTS5 auxiliary function, registered through `fts5_api` and
    // handed the `Fts5ExtensionApi` of the row it ranks (phrase instances,
    // column sizes, row counts), and rusqlite 0.40 wraps neither.
    unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(rc),
                Some("fts5 api".into()),
            ));
        }
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        let create = if api.is_null() {
            None
        } else {
            (*api).xCreateFunction
        };
        let Some(create) = create else {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_ERROR),
                Some("FTS5 is not available".into()),
            ));
        };
        let rc = create(
            api,
            c"cairn_rank".as_ptr(),
            ptr::null_mut(),
            Some(cairn_rank),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(rc),
                Some("cairn_rank".into()),
            ));
        }
    }
    Ok(())
}

/// The score, negated as bm25's is (lower is better), or an SQL error.
unsafe extern "C" fn cairn_rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with a valid API table and context for the
    // current row, and `vals` holding `n_val` values. It is called from C
    // through raw pointers (see `register` for why no safe wrapper exists),
    // so there is no safe form of it.
    unsafe {
        match score(&*api, fts, n_val, vals) {
            Some(s) => ffi::sqlite3_result_double(ctx, -s),
            None => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR),
        }
    }
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) -> Option<f64> {
    // SAFETY: see `cairn_rank`; every out-pointer is a local. The
    // `Fts5ExtensionApi` is C's table of function pointers, with no safe
    // wrapper in rusqlite (see `register`).
    unsafe {
        let ok = |rc: c_int| (rc == ffi::SQLITE_OK).then_some(());
        let phrases = (api.xPhraseCount?)(fts).clamp(0, MAX_PHRASES as c_int) as usize;
        let mut rows: ffi::sqlite3_int64 = 0;
        ok((api.xRowCount?)(fts, &mut rows))?;
        let mut tokens: ffi::sqlite3_int64 = 0;
        ok((api.xColumnTotalSize?)(fts, -1, &mut tokens))?;
        let avgdl = if rows > 0 && tokens > 0 {
            tokens as f64 / rows as f64
        } else {
            1.0
        };
        let mut freq = [0.0f64; MAX_PHRASES];
        let mut instances: c_int = 0;
        ok((api.xInstCount?)(fts, &mut instances))?;
        for i in 0..instances {
            let (mut phrase, mut column, mut offset) = (0, 0, 0);
            ok((api.xInst?)(fts, i, &mut phrase, &mut column, &mut offset))?;
            let weight = if column >= 0 && column < n_val {
                ffi::sqlite3_value_double(*vals.add(column as usize))
            } else {
                1.0
            };
            if let Some(f) = freq.get_mut(phrase as usize) {
                *f += weight;
            }
        }
        let mut length: c_int = 0;
        ok((api.xColumnSize?)(fts, -1, &mut length))?;
        let norm = K1 * (1.0 - B + B * f64::from(length) / avgdl);
        Some(
            freq[..phrases]
                .iter()
                .map(|f| f * (K1 + 1.0) / (f + norm))
                .sum(),
        )
    }
}
