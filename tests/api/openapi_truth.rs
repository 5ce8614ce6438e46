//! The OpenAPI document and the server agree in both directions (issue 10):
//! what the document allows is accepted, what the server refuses the document
//! excludes, every input is bounded, and the security is declared. One test
//! per failure a new user met.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, assert_error};

fn document() -> Value {
    cairn::http::openapi::document()
}

/// The id of a new task.
pub async fn create_task(app: &TestApp) -> String {
    let res = app
        .post("/api/v1/tasks", &json!({"title": "Bounded"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_owned()
}

fn schema<'a>(doc: &'a Value, name: &str) -> &'a Value {
    &doc["components"]["schemas"][name]
}

fn param<'a>(doc: &'a Value, method: &str, path: &str, name: &str) -> &'a Value {
    doc["paths"][path][method]["parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("{method} {path} has parameters"))
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{method} {path} has {name}"))
}

#[tokio::test]
async fn a_whole_decimal_is_accepted_where_an_integer_is_declared() {
    let app = TestApp::new();
    let id = create_task(&app).await;
    let res = app
        .post(
            &format!("/api/v1/tasks/{id}/claim"),
            &json!({"agent": "ann", "ttl_minutes": 30.0}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.get("/api/v1/tasks?limit=2").await;
    assert_eq!(res.status, StatusCode::OK);
    let res = app
        .post(
            &format!("/api/v1/tasks/{id}/claim"),
            &json!({"agent": "ann", "ttl_minutes": 30.5}),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
}

#[tokio::test]
async fn a_query_value_of_the_wrong_type_is_invalid_input_never_ignored() {
    let app = TestApp::new();
    let id = create_task(&app).await;
    for path in [
        format!("/api/v1/graph/neighbours/{id}?depth=null"),
        format!("/api/v1/graph/neighbours/{id}?depth=two"),
        format!("/api/v1/graph/export?around={id}&depth=1.5"),
        "/api/v1/tasks?limit=true".to_owned(),
        "/api/v1/notes?limit=null".to_owned(),
    ] {
        let res = app.get(&path).await;
        assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    }
    let res = app
        .delete("/api/v1/notes/0123456789?expected_version=null")
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "expected_version");
}

#[tokio::test]
async fn a_single_valued_query_parameter_given_twice_is_invalid_input() {
    let app = TestApp::new();
    let id = create_task(&app).await;
    let res = app
        .get(&format!("/api/v1/graph/neighbours/{id}?depth=1&depth=2"))
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "depth");
    // An array parameter may repeat.
    let res = app.get("/api/v1/board?columns=open&columns=done").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

#[tokio::test]
async fn action_bodies_that_may_be_empty_are_declared_optional() {
    let doc = document();
    for path in [
        "/api/v1/tasks/{id}/cancel",
        "/api/v1/tasks/{id}/complete",
        "/api/v1/tasks/{id}/reopen",
        "/api/v1/graph/doctor",
    ] {
        assert_eq!(
            doc["paths"][path]["post"]["requestBody"]["required"], false,
            "{path}"
        );
    }
    for (method, path) in [
        ("post", "/api/v1/tasks"),
        ("post", "/api/v1/tasks/{id}/claim"),
        ("patch", "/api/v1/tasks/{id}"),
        ("put", "/api/v1/notes/{id}"),
        ("post", "/api/v1/links"),
    ] {
        assert_eq!(
            doc["paths"][path][method]["requestBody"]["required"], true,
            "{method} {path}"
        );
    }
    // And the server takes them without a body.
    let app = TestApp::new();
    let id = create_task(&app).await;
    let res = app
        .send(TestApp::request(
            "POST",
            &format!("/api/v1/tasks/{id}/complete"),
        ))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

#[test]
fn only_a_note_replace_offers_expected_version() {
    let doc = document();
    let create = &doc["paths"]["/api/v1/notes"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"]["$ref"];
    let replace = &doc["paths"]["/api/v1/notes/{id}"]["put"]["requestBody"]["content"]["application/json"]
        ["schema"]["$ref"];
    assert_ne!(create, replace);
    let name = |r: &Value| r.as_str().unwrap().rsplit('/').next().unwrap().to_owned();
    let create = schema(&doc, &name(create));
    let replace = schema(&doc, &name(replace));
    assert!(create["properties"].get("expected_version").is_none());
    assert!(create["properties"].get("id").is_none());
    assert_eq!(create["additionalProperties"], false);
    assert!(replace["properties"].get("expected_version").is_some());
}

#[test]
fn an_update_must_name_a_field_to_change() {
    let doc = document();
    let update = schema(&doc, "TaskUpdateInputBody");
    let branches = update["anyOf"].as_array().expect("anyOf");
    let named: Vec<&str> = branches
        .iter()
        .map(|b| b["required"][0].as_str().unwrap())
        .collect();
    assert_eq!(named, ["title", "description", "tags", "priority"]);
    // expected_version alone changes nothing and is not one of them.
    assert!(!named.contains(&"expected_version"));
}

#[test]
fn path_ids_declare_the_length_the_server_needs() {
    let doc = document();
    for (method, path) in [
        ("put", "/api/v1/notes/{id}"),
        ("delete", "/api/v1/links/{id}"),
        ("get", "/api/v1/tasks/{id}"),
        ("post", "/api/v1/tasks/{id}/claim"),
    ] {
        let id = &param(&doc, method, path, "id")["schema"];
        assert!(id["minLength"].as_u64().unwrap() >= 1, "{method} {path}");
        assert_eq!(id["maxLength"], 400, "{method} {path}");
    }
    assert_eq!(
        param(&doc, "delete", "/api/v1/links/{id}", "id")["schema"]["minLength"],
        6
    );
}

#[test]
fn the_bearer_scheme_is_declared_optional_with_public_health_probes() {
    let doc = document();
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"],
        json!({
            "type": "http",
            "scheme": "bearer",
            "description": doc["components"]["securitySchemes"]["bearer"]["description"],
        })
    );
    assert_eq!(doc["security"], json!([{}, {"bearer": []}]));
    assert_eq!(doc["servers"][0]["url"], "/");
    for path in ["/api/v1/health", "/api/v1/health/ready"] {
        let op = &doc["paths"][path]["get"];
        assert_eq!(op["security"], json!([{}]), "{path}");
        assert!(op["responses"].get("401").is_none(), "{path}");
    }
    let task_list = &doc["paths"]["/api/v1/tasks"]["get"];
    assert!(task_list.get("security").is_none());
    assert!(task_list["responses"].get("401").is_some());
}

#[tokio::test]
async fn swagger_ui_serves_the_document_with_its_security_scheme() {
    let app = TestApp::new();
    let res = app.get("/openapi.json").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, document());
    assert!(res.body["components"]["securitySchemes"]["bearer"].is_object());
}

/// Walks every schema in the document and in every MCP tool schema.
fn formats(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(f)) = map.get("format") {
                out.push(f.clone());
            }
            map.values().for_each(|v| formats(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
        _ => {}
    }
}

#[test]
fn no_unsigned_formats_anywhere_and_mcp_schemas_have_only_standard_ones() {
    let mut found = Vec::new();
    formats(&document(), &mut found);
    assert!(
        found
            .iter()
            .all(|f| ["int64", "int32", "double"].contains(&f.as_str())),
        "OpenAPI formats: {found:?}"
    );
    let mut mcp = Vec::new();
    for def in cairn::tools::REGISTRY {
        formats(&(def.input_schema)().to_value(), &mut mcp);
        formats(&(def.output_schema)().to_value(), &mut mcp);
        formats(
            &Value::Object(cairn::mcp::envelope_output_schema(def)),
            &mut mcp,
        );
    }
    assert!(
        mcp.iter().all(|f| f == "date-time" || f == "uri"),
        "MCP formats: {mcp:?}"
    );
    // What the unsigned formats said is kept as `minimum: 0`.
    let page = (cairn::tools::registry::find("task_list")
        .unwrap()
        .output_schema)()
    .to_value();
    assert_eq!(page["properties"]["total"]["minimum"], 0);
}

#[tokio::test]
async fn an_oversized_title_or_tag_list_is_refused_on_rest() {
    let app = TestApp::new();
    let res = app
        .post("/api/v1/tasks", &json!({"title": "x".repeat(1_000_000)}))
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "title");
    let tags: Vec<String> = (0..30)
        .map(|i| format!("{i}{}", "t".repeat(100_000)))
        .collect();
    let res = app
        .post("/api/v1/tasks", &json!({"title": "ok", "tags": tags}))
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "tags");
    let res = app
        .post(
            "/api/v1/tasks",
            &json!({"title": "ok", "tags": ["fine", "x".repeat(51)]}),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "tags[1]");
    // At the limits, accepted.
    let tags: Vec<String> = (0..20)
        .map(|i| format!("{i:02}{}", "t".repeat(48)))
        .collect();
    let res = app
        .post(
            "/api/v1/tasks",
            &json!({"title": "é".repeat(300), "tags": tags}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
}

#[tokio::test]
async fn an_oversized_query_or_agent_is_refused() {
    let app = TestApp::new();
    let id = create_task(&app).await;
    let q = "a".repeat(1001);
    let res = app.get(&format!("/api/v1/search?q={q}")).await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "q");
    let res = app
        .post(
            &format!("/api/v1/tasks/{id}/claim"),
            &json!({"agent": "a".repeat(101)}),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "agent");
}

/// Every string, array and integer a client can send is bounded in the
/// document: each query and path parameter, and each request body property.
#[test]
fn every_input_the_document_declares_is_bounded() {
    let doc = document();
    let mut unbounded = Vec::new();
    let mut check = |at: String, schema: &Value| {
        let schema = match schema.get("oneOf").or_else(|| schema.get("anyOf")) {
            Some(Value::Array(branches)) => branches
                .iter()
                .find(|b| b["type"] != "null")
                .cloned()
                .unwrap_or(Value::Null),
            _ => schema.clone(),
        };
        let types: Vec<String> = match &schema["type"] {
            Value::String(t) => vec![t.clone()],
            Value::Array(ts) => ts
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        for (kind, keyword) in [
            ("string", "maxLength"),
            ("array", "maxItems"),
            ("integer", "maximum"),
        ] {
            if types.iter().any(|t| t == kind) && schema.get(keyword).is_none() {
                unbounded.push(format!("{at}: {kind} without {keyword}"));
            }
        }
        if types.iter().any(|t| t == "array")
            && schema["items"]["type"] == "string"
            && schema["items"].get("maxLength").is_none()
        {
            unbounded.push(format!("{at}[]: string without maxLength"));
        }
    };
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                check(format!("{method} {path} {}", p["name"]), &p["schema"]);
            }
            if let Some(r) =
                op["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str()
            {
                let name = r.rsplit('/').next().unwrap();
                let body = schema(&doc, name);
                for (field, property) in body["properties"].as_object().unwrap() {
                    check(format!("{method} {path} body.{field}"), property);
                }
            }
        }
    }
    assert!(unbounded.is_empty(), "unbounded inputs: {unbounded:#?}");
}

#[tokio::test]
async fn the_bounds_hold_for_every_surface_because_the_tool_enforces_them() {
    let t = crate::tool_helpers::cairn();
    let e = t
        .err("task_create", json!({"title": "x".repeat(301)}))
        .await;
    assert_eq!(e["code"], "invalid_input");
    assert_eq!(e["details"]["field"], "title");
    let e = t
        .err(
            "note_write",
            json!({"title": "n", "content": "", "tags": vec!["a"; 21]}),
        )
        .await;
    assert_eq!(e["details"]["field"], "tags");
    let task = t.ok("task_create", json!({"title": "c"})).await;
    let e = t
        .err(
            "task_claim",
            json!({"id": task["id"], "agent": "ann", "ttl_minutes": 525_601}),
        )
        .await;
    assert_eq!(e["details"]["field"], "ttl_minutes");
    let e = t
        .err(
            "task_update",
            json!({"id": task["id"], "title": "d", "expected_version": 0}),
        )
        .await;
    assert_eq!(e["details"]["field"], "expected_version");
}

#[tokio::test]
async fn a_note_create_refuses_expected_version() {
    let app = TestApp::new();
    let res = app
        .post(
            "/api/v1/notes",
            &json!({"title": "N", "content": "", "expected_version": 1}),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "expected_version");
}

#[test]
fn every_answer_string_and_integer_is_bounded() {
    let doc = document();
    let mut unbounded = Vec::new();
    fn walk(at: &str, schema: &Value, out: &mut Vec<String>) {
        let Some(object) = schema.as_object() else {
            return;
        };
        let types: Vec<&str> = match object.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let enumerated = object.contains_key("enum") || object.contains_key("const");
        if types.contains(&"string") && !enumerated && !object.contains_key("maxLength") {
            out.push(format!("{at}: string without maxLength"));
        }
        if types.contains(&"integer")
            && !(object.contains_key("minimum") && object.contains_key("maximum"))
        {
            out.push(format!("{at}: integer without minimum and maximum"));
        }
        for (key, value) in object {
            walk(&format!("{at}/{key}"), value, out);
        }
    }
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        walk(name, schema, &mut unbounded);
    }
    assert!(unbounded.is_empty(), "{unbounded:#?}");
}
