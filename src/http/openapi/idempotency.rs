//! `Idempotency-Key` (`semantics::idempotency`) in the document: the optional
//! header on every `POST`, `Idempotent-Replayed` on its success answers and
//! 422 for a reused key (the in-progress 409 is among the shared conflicts).

use utoipa::Modify;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{OpenApi, Ref, RefOr, Required, Schema};

use super::{error_response, header, operations, response_ref, string};
use crate::http::semantics::idempotency::FIELD;
use crate::store::idempotency::MAX_KEY_LEN;

pub(super) struct Idempotency;

impl Modify for Idempotency {
    fn modify(&self, doc: &mut OpenApi) {
        let mut declared = false;
        for (_, method, op) in operations(&mut doc.paths) {
            if method != "post" {
                continue;
            }
            declared = true;
            op.parameters
                .get_or_insert_with(Vec::new)
                .push(RefOr::Ref(Ref::new(
                    "#/components/parameters/IdempotencyKey",
                )));
            for (status, response) in op.responses.responses.iter_mut() {
                let RefOr::T(response) = response else {
                    continue;
                };
                if !status.starts_with('2') {
                    continue;
                }
                let replayed = ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["true"]))
                    .build();
                let replayed = header(
                    "`true` when this answer was stored for an earlier request with the same `Idempotency-Key` and is sent again.",
                    None,
                    Schema::Object(replayed),
                );
                response
                    .headers
                    .insert("Idempotent-Replayed".into(), replayed);
                // A response that declares headers declares the CORS one too
                // (OWASP API8), which it carries for an allowed origin. Inline,
                // not under `components/headers`: that map would need it too.
                response.headers.insert(
                    "Access-Control-Allow-Origin".into(),
                    header(
                        "The request's `Origin`, when the server was started with it in `--cors-origin`; absent otherwise (same-origin only).",
                        None,
                        string(2048, None),
                    ),
                );
            }
            op.responses
                .responses
                .insert("422".into(), response_ref("IdempotencyKeyReused"));
        }
        if !declared {
            return;
        }
        let key = ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_KEY_LEN))
            .pattern(Some("^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$"))
            .build();
        let parameter = ParameterBuilder::new()
            .name(FIELD)
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some("Makes a retry safe (IETF httpapi idempotency-key draft): the first final answer (a success or a refusal, not a retryable 429/5xx) to a request with this key is kept for 24 hours and sent again, with `Idempotent-Replayed: true`, to every retry by the same client on the same route with the same body. The same key with another body is 422 `idempotency_key_reused`; while the first request runs, 409 `idempotency_request_in_progress` (retryable, see `Retry-After`)."))
            .schema(Some(Schema::Object(key)))
            .build();
        let components = doc.components.get_or_insert_with(Default::default);
        components
            .parameters
            .insert("IdempotencyKey".into(), RefOr::T(parameter));
        components.responses.insert(
            "IdempotencyKeyReused".into(),
            RefOr::T(error_response("The `Idempotency-Key` was already used for a different request (`idempotency_key_reused`); nothing was run.")),
        );
    }
}
