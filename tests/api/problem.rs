//! Problem details (RFC 9457) on request: `Accept` preferring
//! `application/problem+json` gets every enveloped error as a problem object,
//! whoever made it (a tool, the framework, a guard); everyone else keeps the
//! envelope. A problem's `type` is a page cairn serves.

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, TestRequest, TestResponse, assert_error};
use cairn::http::HttpSettings;

const PROBLEM: &str = "application/problem+json";

fn asking(req: TestRequest) -> TestRequest {
    req.header("accept", PROBLEM)
}

/// The response is problem details for `code` with `status`, every RFC 9457
/// member and every cairn member present with its type, `instance` the path.
fn assert_problem(res: &TestResponse, status: StatusCode, code: &str, path: &str) {
    assert_eq!(res.status, status, "{}", res.body);
    assert_eq!(res.header("content-type").as_deref(), Some(PROBLEM));
    let body = &res.body;
    assert_eq!(body["type"], format!("/api/v1/errors/{code}"));
    assert!(
        body["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert_eq!(body["status"], status.as_u16(), "status is the HTTP status");
    assert!(body["detail"].is_string(), "{body}");
    assert_eq!(body["instance"], path);
    assert_eq!(body["code"], code);
    assert!(body["category"].is_string());
    assert!(body["retryable"].is_boolean());
    assert!(body["request_id"].is_string());
    assert_eq!(
        body["request_id"].as_str(),
        res.header("x-request-id").as_deref()
    );
    assert!(body["details"].is_object());
    assert!(body["suggestions"].is_array());
    if let Some(ms) = body.get("retry_after_ms") {
        assert!(ms.is_u64(), "{body}");
    }
    assert!(body.get("error").is_none(), "not an envelope: {body}");
}

#[tokio::test]
async fn a_tool_error_comes_as_problem_details_when_asked() {
    let app = TestApp::new();
    let path = "/api/v1/tasks/0123456789abcdef";
    let res = app.send(asking(TestApp::request("GET", path))).await;
    assert_problem(&res, StatusCode::NOT_FOUND, "task_not_found", path);
    assert_eq!(res.body["category"], "not_found");
    assert_eq!(res.body["details"]["id"], "0123456789abcdef");
}

#[tokio::test]
async fn without_asking_the_envelope_stays() {
    let app = TestApp::new();
    let res = app.get("/api/v1/tasks/0123456789abcdef").await;
    assert_error(&res, StatusCode::NOT_FOUND, "task_not_found");
}

#[tokio::test]
async fn accept_is_negotiated_by_q_values() {
    let app = TestApp::new();
    let path = "/api/v1/tasks/0123456789abcdef";
    for (accept, problem) in [
        ("application/json;q=0.5, application/problem+json", true),
        ("application/json, application/problem+json", true),
        ("application/problem+json;q=0", false),
        ("*/*", false),
        ("application/*", false),
        (
            "application/problem+json;q=0.4, application/json;q=0.9",
            false,
        ),
    ] {
        let res = app
            .send(TestApp::request("GET", path).header("accept", accept))
            .await;
        if problem {
            assert_problem(&res, StatusCode::NOT_FOUND, "task_not_found", path);
        } else {
            assert_error(&res, StatusCode::NOT_FOUND, "task_not_found");
        }
    }
}

#[tokio::test]
async fn a_success_stays_json_whatever_accept_says() {
    let app = TestApp::new();
    let res = app
        .send(asking(TestApp::request("GET", "/api/v1/tasks")))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(
        res.header("content-type").as_deref(),
        Some("application/json")
    );
}

#[tokio::test]
async fn framework_errors_come_as_problem_details_too() {
    let app = TestApp::with(
        HttpSettings {
            body_limit: 1024,
            ..HttpSettings::default()
        },
        Router::new(),
    );
    let res = app
        .send(asking(TestApp::request("GET", "/api/v1/nowhere")))
        .await;
    assert_problem(
        &res,
        StatusCode::NOT_FOUND,
        "route_not_found",
        "/api/v1/nowhere",
    );
    let res = app
        .send(asking(TestApp::request("DELETE", "/api/v1/tasks")))
        .await;
    assert_problem(
        &res,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "/api/v1/tasks",
    );
    assert!(res.header("allow").is_some(), "the Allow header stays");
    let big = format!("{{\"title\":\"{}\"}}", "x".repeat(4096));
    let res = app
        .send(asking(
            TestApp::request("POST", "/api/v1/tasks").json_text(&big),
        ))
        .await;
    assert_problem(
        &res,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        "/api/v1/tasks",
    );
    assert_eq!(res.body["details"]["limit_bytes"], 1024);
    let res = app
        .send(asking(
            TestApp::request("POST", "/api/v1/tasks").json_text("{nope"),
        ))
        .await;
    assert_problem(
        &res,
        StatusCode::BAD_REQUEST,
        "invalid_json",
        "/api/v1/tasks",
    );
}

#[tokio::test]
async fn a_guard_refusal_comes_as_problem_details_too() {
    let app = TestApp::new();
    let res = app
        .send(asking(
            TestApp::request("GET", "/api/v1/tasks").header("host", "evil.example.com"),
        ))
        .await;
    assert_problem(
        &res,
        StatusCode::FORBIDDEN,
        "host_not_allowed",
        "/api/v1/tasks",
    );
    let token = TestApp::with(
        HttpSettings {
            token: Some("s3cret".into()),
            ..HttpSettings::default()
        },
        Router::new(),
    );
    let res = token
        .send(asking(TestApp::request("GET", "/api/v1/tasks")))
        .await;
    assert_problem(
        &res,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "/api/v1/tasks",
    );
    assert_eq!(res.header("www-authenticate").as_deref(), Some("Bearer"));
}

#[tokio::test]
async fn a_precondition_failure_comes_as_problem_details_with_its_details() {
    let app = TestApp::new();
    let created = app.post("/api/v1/tasks", &json!({"title": "t"})).await;
    let id = created.body["data"]["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/tasks/{id}");
    let res = app
        .send(asking(
            TestApp::request("PATCH", &path)
                .header("if-match", "\"stale.1\"")
                .json(&json!({"title": "u"})),
        ))
        .await;
    assert_problem(
        &res,
        StatusCode::PRECONDITION_FAILED,
        "precondition_failed",
        &path,
    );
    assert_eq!(res.body["details"]["current_version"], 1);
    assert_eq!(
        res.body["details"]["current_etag"].as_str(),
        created.header("etag").as_deref()
    );
}

#[tokio::test]
async fn a_problems_type_resolves_to_the_page_documenting_its_code() {
    let app = TestApp::new();
    let res = app
        .send(asking(TestApp::request(
            "GET",
            "/api/v1/tasks/0123456789abcdef",
        )))
        .await;
    let page = app.get(res.body["type"].as_str().unwrap()).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let doc = &page.body["data"];
    assert_eq!(doc["code"], "task_not_found");
    assert_eq!(doc["category"], "not_found");
    assert_eq!(doc["status"], 404);
    assert_eq!(doc["retryable"], false);
    assert_eq!(doc["title"], res.body["title"], "one title per type");
    assert_eq!(doc["type"], res.body["type"]);
    assert!(doc["description"].as_str().unwrap().contains("`id`"));
}

#[tokio::test]
async fn every_registered_code_has_a_page_and_an_unknown_one_is_not_found() {
    let app = TestApp::new();
    for code in cairn::envelope::ErrorCode::ALL {
        let page = app.get(&format!("/api/v1/errors/{code}")).await;
        assert_eq!(page.status, StatusCode::OK, "{code}");
        assert_eq!(page.body["data"]["status"], code.http_status());
    }
    let res = app.get("/api/v1/errors/no_such_code").await;
    assert_error(&res, StatusCode::NOT_FOUND, "route_not_found");
}

// ---- against the OpenAPI document

fn document() -> Value {
    serde_json::from_str(&cairn::http::openapi::document_json()).unwrap()
}

fn resolve<'a>(doc: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(doc, doc.pointer(&r.replacen('#', "", 1)).unwrap()),
        None => node,
    }
}

/// Checks `value` against the subset of JSON Schema the document's answer
/// schemas use: `type` (one or a list), `enum`, `required`, `properties`,
/// `additionalProperties: false`, `items`, `minimum`/`maximum`, `maxLength`.
fn validate(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let fits = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        });
        if !fits {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        errors.push(format!("{at}: {value} is not one of the enum"));
    }
    if let (Some(n), Some(max)) = (
        value.as_f64(),
        schema.get("maximum").and_then(Value::as_f64),
    ) && n > max
    {
        errors.push(format!("{at}: {n} > {max}"));
    }
    if let (Some(n), Some(min)) = (
        value.as_f64(),
        schema.get("minimum").and_then(Value::as_f64),
    ) && n < min
    {
        errors.push(format!("{at}: {n} < {min}"));
    }
    if let (Some(s), Some(max)) = (
        value.as_str(),
        schema.get("maxLength").and_then(Value::as_u64),
    ) && s.chars().count() as u64 > max
    {
        errors.push(format!("{at}: longer than {max}"));
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !object.contains_key(name.as_str().unwrap()) {
                errors.push(format!("{at}: lacks required `{name}`"));
            }
        }
        for (key, member) in object {
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => validate(doc, sub, member, &format!("{at}/{key}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: `{key}` is not declared"));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(schema)) = (value.as_array(), schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            validate(doc, schema, item, &format!("{at}/{i}"), errors);
        }
    }
}

#[tokio::test]
async fn problem_bodies_match_the_documents_schema_for_their_status() {
    let doc = document();
    let app = TestApp::new();
    let created = app.post("/api/v1/tasks", &json!({"title": "t"})).await;
    let id = created.body["data"]["id"].as_str().unwrap().to_owned();
    let cases = [
        (
            "get",
            "/api/v1/tasks/{id}",
            TestApp::request("GET", "/api/v1/tasks/0123456789abcdef"),
        ),
        (
            "get",
            "/api/v1/tasks/{id}",
            TestApp::request("GET", "/api/v1/tasks/abc"),
        ),
        (
            "patch",
            "/api/v1/tasks/{id}",
            TestApp::request("PATCH", &format!("/api/v1/tasks/{id}"))
                .header("if-match", "\"x.1\"")
                .json(&json!({"title": "u"})),
        ),
        (
            "post",
            "/api/v1/tasks",
            TestApp::request("POST", "/api/v1/tasks").json(&json!({"nope": 1})),
        ),
    ];
    for (method, template, req) in cases {
        let res = app.send(asking(req)).await;
        let status = res.status.as_u16().to_string();
        let op = &doc["paths"][template][method];
        let response = resolve(&doc, &op["responses"][&status]);
        let schema = &response["content"][PROBLEM]["schema"];
        assert!(
            schema.is_object(),
            "{method} {template} {status} declares no {PROBLEM}"
        );
        let mut errors = Vec::new();
        validate(&doc, schema, &res.body, "", &mut errors);
        assert!(
            errors.is_empty(),
            "{method} {template} {status}: {errors:?} in {}",
            res.body
        );
    }
}

#[test]
fn every_error_response_of_every_operation_offers_both_media_types() {
    let doc = document();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                if status.starts_with('4') || status.starts_with('5') {
                    let response = resolve(&doc, response);
                    assert!(
                        response["content"][PROBLEM]["schema"].is_object(),
                        "{method} {path} {status} offers no {PROBLEM}"
                    );
                }
            }
        }
    }
}

#[test]
fn every_error_response_offers_both_media_types() {
    let doc = document();
    for (name, response) in doc["components"]["responses"].as_object().unwrap() {
        let content = &response["content"];
        assert_eq!(
            content["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorEnvelope",
            "{name}"
        );
        assert_eq!(
            content[PROBLEM]["schema"]["$ref"], "#/components/schemas/ProblemDetails",
            "{name}"
        );
    }
}

#[test]
fn conditional_headers_304_and_412_are_declared() {
    let doc = document();
    let get = &doc["paths"]["/api/v1/tasks/{id}"]["get"];
    let names = |op: &Value| -> Vec<String> {
        op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(names(get).contains(&"If-None-Match".to_owned()));
    assert!(get["responses"]["304"]["headers"]["ETag"].is_object());
    assert!(get["responses"]["200"]["headers"]["ETag"].is_object());
    for (path, method) in [
        ("/api/v1/tasks/{id}", "patch"),
        ("/api/v1/tasks/{id}/claim", "post"),
        ("/api/v1/notes/{id}", "put"),
        ("/api/v1/notes/{id}", "delete"),
    ] {
        let op = &doc["paths"][path][method];
        assert!(
            names(op).contains(&"If-Match".to_owned()),
            "{method} {path}"
        );
        assert_eq!(
            op["responses"]["412"]["$ref"], "#/components/responses/PreconditionFailed",
            "{method} {path}"
        );
    }
    assert!(
        doc["paths"]["/api/v1/tasks"]["post"]["responses"]["201"]["headers"]["ETag"].is_object()
    );
}
