//! `notes`: the knowledge base.

use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::conditional::{self, NOTE, Preconditions};
use crate::http::semantics::extract::{ApiId, ApiJson, ApiQuery, Rest};
use crate::http::semantics::response::ApiResponse;
use crate::store::{Note, NoteWritten};
use crate::tools::notes::{NoteDeleted, NoteListInput, NotePage, NoteWriteInput};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(note_create, note_list))
        .routes(routes!(note_read, note_replace, note_delete))
}

const ID: &str = "Note id, a unique prefix of at least 6 characters, or its slug. A key under 6 characters that is no note's slug is `id_prefix_too_short` (400).";

/// Write a new note; `[[Title]]` links in its content become graph edges.
///
/// Refused with `duplicate` when another note holds the `source_url`, and with
/// `slug_collision` when the title's slug is taken.
#[utoipa::path(post, path = "/api/v1/notes", tag = "notes", operation_id = "note_create",
    request_body = NoteWriteInput,
    responses((status = 201, description = "The written note; `Location` is its URL", body = Success<NoteWritten>)))]
async fn note_create(rest: Rest, ApiJson(body): ApiJson) -> Response {
    let answer = rest.call_with_body("note_write", None, body).await;
    conditional::tagged(answer.created("/api/v1/notes"))
}

/// List notes (without content), most recently updated first.
///
/// `cursor` takes only a `next_cursor` this server issued for the same
/// listing; any other value is `invalid_cursor` (400).
#[utoipa::path(get, path = "/api/v1/notes", tag = "notes", operation_id = "note_list",
    params(NoteListInput),
    responses((status = 200, description = "One page of notes", body = Success<NotePage>)))]
async fn note_list(rest: Rest, query: ApiQuery) -> ApiResponse {
    rest.call_query("note_list", None, query).await
}

/// Read a note by id, unique prefix or slug.
#[utoipa::path(get, path = "/api/v1/notes/{id}", tag = "notes", operation_id = "note_read",
    params(("id" = String, Path, description = ID, min_length = 1)),
    responses((status = 200, description = "The note", body = Success<Note>)))]
async fn note_read(rest: Rest, pre: Preconditions, ApiId(id): ApiId) -> Response {
    conditional::read(&rest, &pre, NOTE, id).await
}

/// Replace a note's title, content, tags and source.
///
/// Send the `expected_version` you read to be refused with `version_conflict`
/// when someone changed it since, or the `ETag` you read as `If-Match` to be
/// refused with `precondition_failed` (412).
#[utoipa::path(put, path = "/api/v1/notes/{id}", tag = "notes", operation_id = "note_write",
    params(("id" = String, Path, description = ID, min_length = 1)),
    request_body = NoteWriteInput,
    responses((status = 200, description = "The written note", body = Success<NoteWritten>)))]
async fn note_replace(
    rest: Rest,
    pre: Preconditions,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson,
) -> Response {
    conditional::write(&rest, &pre, NOTE, "note_write", id, body).await
}

/// Delete a note and the edges that touch it.
#[utoipa::path(delete, path = "/api/v1/notes/{id}", tag = "notes", operation_id = "note_delete",
    params(("id" = String, Path, description = ID, min_length = 1),
        ("expected_version" = Option<i64>, Query, description = "The version you read; refused with `version_conflict` if it changed.")),
    responses((status = 200, description = "What was deleted", body = Success<NoteDeleted>)))]
async fn note_delete(
    rest: Rest,
    pre: Preconditions,
    ApiId(id): ApiId,
    query: ApiQuery,
) -> Response {
    match query.into_args("note_delete") {
        Ok(args) => conditional::write(&rest, &pre, NOTE, "note_delete", id, args).await,
        Err(error) => ApiResponse::error(error, &rest.request_id).into_response(),
    }
}
