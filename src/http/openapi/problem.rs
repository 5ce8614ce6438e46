//! Problem details (`semantics::problem`) in the document: wherever an error
//! response's `application/json` is the `ErrorEnvelope`, whoever declared it,
//! `application/problem+json` is `ProblemDetails`. Runs last.

use utoipa::Modify;
use utoipa::openapi::response::Response;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr};

use super::{operations, schema_name};
use crate::http::semantics::problem::PROBLEM_JSON;
use crate::http::semantics::response::JSON;

pub(super) struct Problems;

impl Modify for Problems {
    fn modify(&self, doc: &mut OpenApi) {
        if let Some(components) = &mut doc.components {
            for response in components.responses.values_mut() {
                offer(response);
            }
        }
        for (_, _, op) in operations(&mut doc.paths) {
            for (status, response) in op.responses.responses.iter_mut() {
                if status.starts_with('4') || status.starts_with('5') {
                    offer(response);
                }
            }
        }
    }
}

fn offer(response: &mut RefOr<Response>) {
    let RefOr::T(response) = response else {
        return;
    };
    let envelope = match response.content.get(JSON) {
        Some(RefOr::T(content)) => matches!(
            &content.schema,
            Some(RefOr::Ref(schema)) if schema_name(schema) == Some("ErrorEnvelope")
        ),
        _ => false,
    };
    if envelope {
        let problem = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ProblemDetails")))
            .build();
        response
            .content
            .insert(PROBLEM_JSON.to_owned(), RefOr::T(problem));
    }
}
